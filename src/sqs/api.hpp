#pragma once
// The Amazon SQS API as this transport speaks it: AWS JSON 1.0 (`POST /` to the endpoint,
// `X-Amz-Target: AmazonSQS.<Operation>`, wire-brokers §1.8), each call signed with SigV4
// and mapped onto transport_errc. Requests are built as text (json_text.hpp) so a body is
// sent byte-for-byte; responses are parsed with nlohmann (a hostile or broken server gets a
// typed error, never an exception on the caller's thread). Not thread-safe (one per
// transport instance).
#include "sqs/credentials.hpp"
#include "sqs/errors.hpp"
#include "sqs/http.hpp"

#include <babelqueue/bindings/sqs.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/result.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::inline v1::sqs::detail {

struct api_options {
  std::string endpoint;  ///< e.g. https://sqs.us-east-1.amazonaws.com (no trailing '/')
  std::string region;
  credentials creds;
  http_options http;
  /// Transient failures (connection, throttling, 5xx) of one call are retried this many
  /// times, within the call's timeout, with a short doubling pause.
  int retries = 2;
};

/// A message as ReceiveMessage returns it.
struct wire_message {
  std::string message_id;
  std::string receipt_handle;
  std::string body;
  std::string md5_of_body;
  std::optional<std::string> receive_count;          ///< Attributes.ApproximateReceiveCount
  std::vector<bindings::sqs::attribute> attributes;  ///< MessageAttributes (String/Number)
};

/// One entry of SendMessageBatch.
struct send_entry {
  std::string_view body;
  const std::vector<bindings::sqs::attribute>* attributes = nullptr;
  std::string group_id;          ///< FIFO only
  std::string deduplication_id;  ///< FIFO only, empty = content-based
  /// `DelaySeconds` (1..900, standard queues only: SQS refuses it on FIFO); 0 = not sent, the
  /// queue's own DelaySeconds applies.
  int delay_seconds = 0;
};

/// The outcome of one batch entry: empty error = sent.
struct entry_outcome {
  bool ok = false;
  bool sender_fault = false;
  std::string code;     ///< SQS error code of a failed entry
  std::string message;  ///< its text
};

class api {
 public:
  explicit api(api_options opts);

  /// `GetQueueUrl`; not_found when the queue does not exist.
  result<std::string> get_queue_url(std::string_view name, std::chrono::milliseconds timeout);
  /// `CreateQueue` (idempotent on SQS with the same attributes): FIFO by the name's suffix.
  result<std::string> create_queue(
      std::string_view name, const std::vector<std::pair<std::string, std::string>>& attributes,
      std::chrono::milliseconds timeout);
  result<void> delete_queue(std::string_view queue_url, std::chrono::milliseconds timeout);
  result<void> purge_queue(std::string_view queue_url, std::chrono::milliseconds timeout);
  /// `GetQueueAttributes` of the given names (or "All").
  result<json> get_queue_attributes(std::string_view queue_url, std::chrono::milliseconds timeout);

  result<void> send_message(std::string_view queue_url, const send_entry& entry,
                            std::chrono::milliseconds timeout);
  /// `SendMessageBatch` of up to 10 entries; one outcome per entry, in order. A failure of
  /// the whole call is the error.
  result<std::vector<entry_outcome>> send_message_batch(std::string_view queue_url,
                                                        const std::vector<send_entry>& entries,
                                                        std::chrono::milliseconds timeout);
  /// `ReceiveMessage`: long-polls `wait_seconds` (0..20); the HTTP timeout is that plus
  /// `timeout`.
  result<std::vector<wire_message>> receive_message(std::string_view queue_url, int max_messages,
                                                    int wait_seconds,
                                                    std::optional<int> visibility_seconds,
                                                    std::chrono::milliseconds timeout);
  result<void> delete_message(std::string_view queue_url, std::string_view receipt_handle,
                              std::chrono::milliseconds timeout);
  /// `DeleteMessageBatch` of up to 10 receipt handles; one outcome per handle, in order.
  result<std::vector<entry_outcome>> delete_message_batch(
      std::string_view queue_url, const std::vector<std::string_view>& receipt_handles,
      std::chrono::milliseconds timeout);
  result<void> change_visibility(std::string_view queue_url, std::string_view receipt_handle,
                                 int seconds, std::chrono::milliseconds timeout);
  /// `ChangeMessageVisibilityBatch` of up to 10 handles to the same timeout.
  result<std::vector<entry_outcome>> change_visibility_batch(
      std::string_view queue_url, const std::vector<std::string_view>& receipt_handles, int seconds,
      std::chrono::milliseconds timeout);

  /// One signed call: the response JSON object, or the mapped error. Public for tests.
  result<json> call(std::string_view operation, const std::string& request,
                    std::chrono::milliseconds timeout);

  long connects() const noexcept { return http_.connects(); }
  std::int64_t requests() const noexcept { return requests_; }

 private:
  result<void> queue_call(std::string_view operation, std::string_view queue_url,
                          std::chrono::milliseconds timeout);
  result<json> call_once(std::string_view operation, const std::string& request,
                         std::chrono::milliseconds timeout);
  api_options opts_;
  std::string host_;  ///< Host header value (with the port when not the default)
  http_client http_;
  std::int64_t requests_ = 0;
};

/// The error code of an SQS error response: the JSON `__type` after its last '#' (or its
/// `code`), else the legacy code from `x-amzn-query-error` (before ';'). Exposed for tests.
std::string sqs_error_code(const json& body, std::string_view query_error);

/// Parses ReceiveMessage's response (missing `Messages` = none). A message lacking
/// `ReceiptHandle` or `Body` is an error (the server is broken). Exposed for the fuzzer.
result<std::vector<wire_message>> parse_receive_response(const json& response);

/// The outcome of each of the `n` entries of a batch call (ids "0".."n-1") from its
/// response's Successful / Failed lists; an entry the server said nothing about is not sent
/// (code "NoOutcome"). Exposed for the fuzzer.
result<std::vector<entry_outcome>> batch_outcomes(const json& response, std::size_t n,
                                                  std::string_view operation);

/// Hex MD5 of `bytes` (SQS's MD5OfMessageBody).
std::string md5_hex(std::string_view bytes);

}  // namespace babelqueue::inline v1::sqs::detail
