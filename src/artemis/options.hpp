#pragma once
// The one validation of artemis options (URL-built or code-built).
#include <babelqueue/artemis/artemis_transport.hpp>

namespace babelqueue::inline v1::artemis::detail {

/// transport_errc::invalid_argument with the offending option named.
result<void> validate(const options& o);

}  // namespace babelqueue::inline v1::artemis::detail
