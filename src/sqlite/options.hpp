#pragma once
// The one validation of sqlite options: options_from_url() and sqlite_transport::open() both
// call it, so options built in code get the same rules and messages as a URL.
#include <babelqueue/sqlite/sqlite_transport.hpp>

namespace babelqueue::inline v1::sqlite::detail {

/// Range checks of options that open() applies whether or not they came from a URL.
result<void> validate(const sqlite::options& opts);

}  // namespace babelqueue::inline v1::sqlite::detail
