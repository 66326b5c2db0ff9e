#pragma once
// AWS Signature Version 4 (wire-brokers §1.9): this project's own signer on OpenSSL's
// SHA-256/HMAC, checked against AWS's published SigV4 test vectors and against botocore's
// signer for fixed SQS requests (tests/sqs/sigv4_test.cpp, tests/sqs/botocore_test.cpp).
// Pure: no I/O, no clock (the caller passes the signing time), thread-safe. Throws
// babelqueue::error only if OpenSSL's SHA-256/HMAC itself fails (out of memory).
#include "sqs/credentials.hpp"

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace babelqueue::inline v1::sqs::detail {

/// An HTTP header as sent (name as written; SigV4 lower-cases it for signing).
using http_header = std::pair<std::string, std::string>;

/// The parts of one HTTP request SigV4 signs.
struct signing_input {
  std::string_view method = "POST";
  /// The path as sent (already URI-encoded), e.g. "/"; empty means "/".
  std::string_view path = "/";
  /// The query string as sent without '?', e.g. "a=b&c=d"; empty for the JSON protocol.
  std::string_view query;
  /// Every header to sign; MUST include `Host` (with the port when it is not the scheme's
  /// default). Order and name case do not matter.
  std::vector<http_header> headers;
  std::string_view body;
};

/// Where and when a request is signed.
struct signing_scope {
  std::string_view region;   ///< e.g. "us-east-1"
  std::string_view service;  ///< "sqs"
  std::chrono::system_clock::time_point time;
};

/// The SigV4 canonical request of `in` (step 1 of the algorithm).
std::string canonical_request(const signing_input& in);

/// The string to sign (step 2) of `canonical` at `scope`.
std::string string_to_sign(std::string_view canonical, const signing_scope& scope);

/// `YYYYMMDDTHHMMSSZ` (UTC) of `time`.
std::string amz_date(std::chrono::system_clock::time_point time);

/// Signs `in`: returns the headers to ADD to the request, in this order: `X-Amz-Date`, then
/// `X-Amz-Security-Token` when `creds` has a session token, then `Authorization`. Both
/// `x-amz-date` and (when present) `x-amz-security-token` are signed too: callers must
/// not pass them in `in.headers` themselves (any `X-Amz-Date`, `X-Amz-Security-Token` or
/// `Authorization` there is dropped and replaced, as botocore does).
std::vector<http_header> sign(const signing_input& in, const signing_scope& scope,
                              const credentials& creds);

/// Lower-case hex SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

}  // namespace babelqueue::inline v1::sqs::detail
