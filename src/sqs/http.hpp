#pragma once
// One HTTP/1.1 client for the SQS transport: a libcurl easy handle reused for every call,
// so the connection to the endpoint stays open (keep-alive) and TLS is negotiated once.
// Not thread-safe: one per transport instance (the transport seam's contract).
#include <babelqueue/result.hpp>
#include <babelqueue/runtime/error.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace babelqueue::inline v1::sqs::detail {

struct http_options {
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(5)};
  std::string tls_ca_file;  ///< PEM CA bundle; empty = the system trust store
  bool tls_verify = true;
};

struct http_response {
  long status = 0;
  std::string body;
  /// `x-amzn-query-error` (legacy code;fault), empty when absent.
  std::string query_error;
  /// `x-amzn-requestid`, empty when absent (for error messages).
  std::string request_id;
};

class http_client {
 public:
  explicit http_client(http_options opts);
  ~http_client();
  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  /// POSTs `body` to `url` with `headers`, waiting at most `timeout` for the whole exchange.
  /// Any HTTP status is a success here (the caller maps it); transport-level failures are
  /// transport_errc::timeout (the deadline passed) or unavailable (resolve, connect, TLS,
  /// reset — the libcurl code and text in native), invalid_argument for a malformed URL.
  result<http_response> post(const std::string& url,
                             const std::vector<std::pair<std::string, std::string>>& headers,
                             std::string_view body, std::chrono::milliseconds timeout);

  /// Connections opened so far (a reused connection is not counted again).
  long connects() const noexcept { return connects_; }

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
  long connects_ = 0;
};

}  // namespace babelqueue::inline v1::sqs::detail
