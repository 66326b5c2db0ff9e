#pragma once
// The one validation of sb:// options (URL-built, connection-string-built or code-built).
#include <babelqueue/asb/asb_transport.hpp>

namespace babelqueue::inline v1::asb::detail {

/// transport_errc::invalid_argument with the offending option named (never its value).
result<void> validate(const options& o);

}  // namespace babelqueue::inline v1::asb::detail
