#pragma once
// The one validation of sqs options (URL-built or code-built).
#include <babelqueue/sqs/sqs_transport.hpp>

namespace babelqueue::inline v1::sqs::detail {

/// transport_errc::invalid_argument with the offending option named.
result<void> validate(const options& o);

/// `https://sqs.<region>.amazonaws.com` when `o.endpoint` is empty, else it without a
/// trailing '/'.
std::string endpoint_of(const options& o);

}  // namespace babelqueue::inline v1::sqs::detail
