#pragma once
// pulsar::Result → transport_errc, in one place (docs/errors.md has the table).
#include <babelqueue/runtime/error.hpp>

#include <pulsar/Result.h>

#include <string>

namespace babelqueue::inline v1::pulsar::detail {

/// The transport_errc of a Pulsar client result (never called with ResultOk).
transport_errc errc_of(::pulsar::Result r) noexcept;

/// "pulsar <what>: <the client's text>" with errc_of(r) and the native code and text.
error_info pulsar_error(::pulsar::Result r, const std::string& what);

}  // namespace babelqueue::inline v1::pulsar::detail
