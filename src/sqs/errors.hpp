#pragma once
// An SQS error (its code, see sqs_error_code() in api.hpp, and the HTTP status) ->
// transport_errc, in one place (docs/errors.md has the table).
//
// Thread-safety: pure.
#include <babelqueue/error.hpp>
#include <babelqueue/runtime/error.hpp>

#include <string_view>

namespace babelqueue::inline v1::sqs::detail {

/// Maps an SQS error (HTTP status, JSON `__type` / `code`, `x-amzn-query-error`) onto a
/// transport_errc. Exposed for tests.
transport_errc errc_of_sqs_error(long status, std::string_view code);

}  // namespace babelqueue::inline v1::sqs::detail
