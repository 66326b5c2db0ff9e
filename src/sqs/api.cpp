// The SQS JSON 1.0 API (see api.hpp).
#include "sqs/api.hpp"

#include "core/propagate.hpp"
#include "sqs/json_text.hpp"
#include "sqs/sigv4.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <thread>

namespace babelqueue::inline v1::sqs::detail {

namespace {

using clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::string_view content_type = "application/x-amz-json-1.0";

// The Host header of an endpoint URL: authority without user info, the port kept when it
// is not the scheme's default (SigV4 signs it as sent).
std::string host_of(std::string_view endpoint) {
  std::string_view rest = endpoint;
  bool https = false;
  if (auto p = rest.find("://"); p != std::string_view::npos) {
    https = rest.substr(0, p) == "https";
    rest.remove_prefix(p + 3);
  }
  rest = rest.substr(0, rest.find('/'));
  if (auto at = rest.rfind('@'); at != std::string_view::npos) rest.remove_prefix(at + 1);
  if ((https && rest.ends_with(":443")) || (!https && rest.ends_with(":80"))) {
    rest.remove_suffix(https ? 4 : 3);
  }
  return std::string(rest);
}

std::string path_of(std::string_view endpoint) {
  if (auto p = endpoint.find("://"); p != std::string_view::npos) endpoint.remove_prefix(p + 3);
  auto slash = endpoint.find('/');
  return slash == std::string_view::npos ? "/" : std::string(endpoint.substr(slash));
}

const json* member(const json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::optional<std::string> string_member(const json& obj, std::string_view key) {
  const json* v = member(obj, key);
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}

// `"key":` with a comma before it unless it opens the object.
void key(std::string& out, std::string_view k) {
  if (out.back() != '{') out.push_back(',');
  append_json_string(out, k);
  out.push_back(':');
}

void string_field(std::string& out, std::string_view k, std::string_view v) {
  key(out, k);
  append_json_string(out, v);
}

void int_field(std::string& out, std::string_view k, long long v) {
  key(out, k);
  out += std::to_string(v);
}

void append_attributes(std::string& out, const std::vector<bindings::sqs::attribute>& attributes) {
  key(out, "MessageAttributes");
  out.push_back('{');
  for (const auto& a : attributes) {
    key(out, a.name);
    out.push_back('{');
    string_field(out, "DataType", a.data_type);
    string_field(out, "StringValue", a.string_value);
    out.push_back('}');
  }
  out.push_back('}');
}

void append_entry_fields(std::string& out, const send_entry& e) {
  string_field(out, "MessageBody", e.body);
  if (e.attributes != nullptr && !e.attributes->empty()) append_attributes(out, *e.attributes);
  if (!e.group_id.empty()) string_field(out, "MessageGroupId", e.group_id);
  if (!e.deduplication_id.empty()) string_field(out, "MessageDeduplicationId", e.deduplication_id);
  if (e.delay_seconds > 0) int_field(out, "DelaySeconds", e.delay_seconds);
}

// `{"QueueUrl":…,"Entries":[{"Id":"0","ReceiptHandle":…[,"VisibilityTimeout":n]},…]}`.
std::string receipt_batch(std::string_view queue_url, const std::vector<std::string_view>& handles,
                          std::optional<int> visibility_seconds) {
  std::string req = "{";
  string_field(req, "QueueUrl", queue_url);
  req += ",\"Entries\":[";
  for (std::size_t i = 0; i < handles.size(); ++i) {
    if (i > 0) req += ',';
    req += '{';
    string_field(req, "Id", std::to_string(i));
    string_field(req, "ReceiptHandle", handles[i]);
    if (visibility_seconds) int_field(req, "VisibilityTimeout", *visibility_seconds);
    req += '}';
  }
  req += "]}";
  return req;
}

}  // namespace

// Successful / Failed lists of a batch response, by entry id "0".."n-1".
result<std::vector<entry_outcome>> batch_outcomes(const json& response, std::size_t n,
                                                  std::string_view operation) {
  std::vector<entry_outcome> out(n);
  std::vector<bool> seen(n, false);
  auto index_of = [&](const json& entry) -> std::optional<std::size_t> {
    auto id = string_member(entry, "Id");
    if (!id || id->empty() || id->size() > 2) return std::nullopt;
    std::size_t i = 0;
    for (char c : *id) {
      if (c < '0' || c > '9') return std::nullopt;
      i = i * 10 + static_cast<std::size_t>(c - '0');
    }
    if (i >= n) return std::nullopt;
    return i;
  };
  if (const json* ok = member(response, "Successful"); ok != nullptr && ok->is_array()) {
    for (const auto& e : *ok) {
      if (auto i = index_of(e)) {
        out[*i].ok = true;
        seen[*i] = true;
      }
    }
  }
  if (const json* failed = member(response, "Failed"); failed != nullptr && failed->is_array()) {
    for (const auto& e : *failed) {
      auto i = index_of(e);
      if (!i) continue;
      out[*i].ok = false;
      const json* sf = member(e, "SenderFault");
      out[*i].sender_fault = sf != nullptr && sf->is_boolean() && sf->get<bool>();
      out[*i].code = string_member(e, "Code").value_or("");
      out[*i].message = string_member(e, "Message").value_or("");
      seen[*i] = true;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!seen[i]) {
      // The server said nothing about this entry: not known to be sent (the caller retries).
      out[i].code = "NoOutcome";
      out[i].message =
          std::string(operation) + " response has no outcome for entry " + std::to_string(i);
    }
  }
  return out;
}

std::string md5_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_md5(), nullptr);
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(static_cast<std::size_t>(len) * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(hex[digest[i] >> 4]);
    out.push_back(hex[digest[i] & 0xF]);
  }
  return out;
}

std::string sqs_error_code(const json& body, std::string_view query_error) {
  std::string code;
  if (auto t = string_member(body, "__type")) {
    code = *t;
  } else if (auto c = string_member(body, "code")) {
    code = *c;
  }
  auto cut_namespace = [](std::string& c) {
    if (auto hash = c.rfind('#'); hash != std::string::npos) c.erase(0, hash + 1);
  };
  cut_namespace(code);
  // ElasticMQ 1.5 answered `"__type":"Sender"`: a fault, not a code. The header then says
  // more: `AWS.SimpleQueueService.NonExistentQueue;Sender` (SQS's legacy code;fault) or
  // `com.amazonaws.sqs#QueueDoesNotExist` (ElasticMQ 1.7).
  if ((code.empty() || code == "Sender" || code == "Receiver") && !query_error.empty()) {
    code = std::string(query_error.substr(0, query_error.find(';')));
    cut_namespace(code);
  }
  return code;
}

api::api(api_options opts)
    : opts_(std::move(opts)), host_(host_of(opts_.endpoint)), http_(opts_.http) {
  while (!opts_.endpoint.empty() && opts_.endpoint.back() == '/') opts_.endpoint.pop_back();
}

result<json> api::call(std::string_view operation, const std::string& request,
                       milliseconds timeout) {
  const auto deadline = clock::now() + timeout;
  milliseconds pause{50};
  for (int attempt = 0;; ++attempt) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - clock::now());
    auto r = call_once(operation, request, std::max(left, milliseconds{1}));
    // The one retry predicate; a timeout that spent the call's whole bound stops at the
    // deadline check.
    if (r || !is_transient(r.code()) || attempt >= opts_.retries ||
        clock::now() + pause >= deadline) {
      return r;
    }
    std::this_thread::sleep_for(pause);
    pause *= 2;
  }
}

result<json> api::call_once(std::string_view operation, const std::string& request,
                            milliseconds timeout) {
  const std::string target = "AmazonSQS." + std::string(operation);
  const std::string path = path_of(opts_.endpoint);
  signing_input in;
  in.method = "POST";
  in.path = path;
  in.headers = {
      {"Host", host_}, {"Content-Type", std::string(content_type)}, {"X-Amz-Target", target}};
  in.body = request;
  std::vector<http_header> headers = in.headers;
  for (auto& h : sign(in, {opts_.region, "sqs", std::chrono::system_clock::now()}, opts_.creds)) {
    headers.push_back(std::move(h));
  }
  ++requests_;
  auto response = http_.post(opts_.endpoint + (path == "/" ? "/" : ""), headers, request, timeout);
  if (!response) {
    auto e = std::move(response).error();
    e.message = std::string(operation) + ": " + e.message;
    return fail(std::move(e));
  }
  json body = response->body.empty()
                  ? json::object()
                  : json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  if (response->status >= 200 && response->status < 300) {
    if (body.is_discarded() || !body.is_object()) {
      return fail(transport_errc::unavailable,
                  std::string(operation) + ": the server answered HTTP " +
                      std::to_string(response->status) + " with a body that is not a JSON object",
                  native_error{"sqs", response->status, response->body.substr(0, 200)});
    }
    return body;
  }
  if (body.is_discarded()) body = json::object();
  const std::string code = sqs_error_code(body, response->query_error);
  std::string text =
      string_member(body, "message").value_or(string_member(body, "Message").value_or(""));
  if (text.empty() && !body.is_object()) text = response->body.substr(0, 200);
  std::string msg = std::string(operation) + " failed: HTTP " + std::to_string(response->status) +
                    (code.empty() ? "" : " " + code) + (text.empty() ? "" : ": " + text);
  if (!response->request_id.empty()) msg += " (request id " + response->request_id + ")";
  transport_errc errc = errc_of_sqs_error(response->status, code);
  // An oversized body is `InvalidParameterValue` (SQS) or `InvalidAttributeValue` with the
  // text "MessageTooLong" (ElasticMQ 1.7): the text names it.
  if (errc == transport_errc::invalid_argument &&
      (text.find("too long") != std::string::npos || text.find("TooLong") != std::string::npos ||
       text.find("longer than") != std::string::npos ||
       text.find("exceeds") != std::string::npos)) {
    errc = transport_errc::too_large;
  }
  return fail(errc, std::move(msg),
              native_error{"sqs", response->status, code + (text.empty() ? "" : ": " + text)});
}

result<std::string> api::get_queue_url(std::string_view name, milliseconds timeout) {
  std::string req = "{";
  string_field(req, "QueueName", name);
  req += '}';
  BABELQUEUE_TRY_LET(r, call("GetQueueUrl", req, timeout));
  auto url = string_member(*r, "QueueUrl");
  if (!url || url->empty())
    return fail(transport_errc::unavailable, "GetQueueUrl: no QueueUrl in the answer");
  return *url;
}

result<std::string> api::create_queue(
    std::string_view name, const std::vector<std::pair<std::string, std::string>>& attributes,
    milliseconds timeout) {
  std::string req = "{";
  string_field(req, "QueueName", name);
  if (!attributes.empty()) {
    key(req, "Attributes");
    req += '{';
    for (const auto& [k, v] : attributes) string_field(req, k, v);
    req += '}';
  }
  req += '}';
  BABELQUEUE_TRY_LET(r, call("CreateQueue", req, timeout));
  auto url = string_member(*r, "QueueUrl");
  if (!url || url->empty())
    return fail(transport_errc::unavailable, "CreateQueue: no QueueUrl in the answer");
  return *url;
}

result<void> api::queue_call(std::string_view operation, std::string_view queue_url,
                             milliseconds timeout) {
  std::string req = "{";
  string_field(req, "QueueUrl", queue_url);
  req += '}';
  BABELQUEUE_TRY_LET(r, call(operation, req, timeout));
  return {};
}

result<void> api::delete_queue(std::string_view queue_url, milliseconds timeout) {
  return queue_call("DeleteQueue", queue_url, timeout);
}

result<void> api::purge_queue(std::string_view queue_url, milliseconds timeout) {
  return queue_call("PurgeQueue", queue_url, timeout);
}

result<json> api::get_queue_attributes(std::string_view queue_url, milliseconds timeout) {
  std::string req = "{";
  string_field(req, "QueueUrl", queue_url);
  req += R"(,"AttributeNames":["All"]})";
  BABELQUEUE_TRY_LET(r, call("GetQueueAttributes", req, timeout));
  const json* a = member(*r, "Attributes");
  return a != nullptr && a->is_object() ? *a : json::object();
}

result<void> api::send_message(std::string_view queue_url, const send_entry& entry,
                               milliseconds timeout) {
  std::string req;
  req.reserve(entry.body.size() + entry.body.size() / 8 + 512);
  req = "{";
  string_field(req, "QueueUrl", queue_url);
  append_entry_fields(req, entry);
  req += '}';
  BABELQUEUE_TRY_LET(r, call("SendMessage", req, timeout));
  if (auto md5 = string_member(*r, "MD5OfMessageBody"); md5 && *md5 != md5_hex(entry.body)) {
    return fail(transport_errc::unavailable,
                "SendMessage: MD5OfMessageBody " + *md5 + " does not match the body sent (" +
                    md5_hex(entry.body) + "): the message may have been altered in transit");
  }
  return {};
}

result<std::vector<entry_outcome>> api::send_message_batch(std::string_view queue_url,
                                                           const std::vector<send_entry>& entries,
                                                           milliseconds timeout) {
  std::size_t bytes = 512;
  for (const auto& e : entries) bytes += e.body.size() + e.body.size() / 8 + 256;
  std::string req;
  req.reserve(bytes);
  req = "{";
  string_field(req, "QueueUrl", queue_url);
  key(req, "Entries");
  req += '[';
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) req += ',';
    req += '{';
    string_field(req, "Id", std::to_string(i));
    append_entry_fields(req, entries[i]);
    req += '}';
  }
  req += "]}";
  BABELQUEUE_TRY_LET(r, call("SendMessageBatch", req, timeout));
  return batch_outcomes(*r, entries.size(), "SendMessageBatch");
}

result<std::vector<wire_message>> parse_receive_response(const json& response) {
  std::vector<wire_message> out;
  const json* messages = member(response, "Messages");
  if (messages == nullptr || messages->is_null()) return out;
  if (!messages->is_array()) {
    return fail(transport_errc::unavailable, "ReceiveMessage: `Messages` is not an array");
  }
  out.reserve(messages->size());
  for (const auto& m : *messages) {
    wire_message w;
    auto receipt = string_member(m, "ReceiptHandle");
    auto body = string_member(m, "Body");
    if (!receipt || receipt->empty() || !body) {
      return fail(transport_errc::unavailable,
                  "ReceiveMessage: a message without ReceiptHandle or Body");
    }
    w.receipt_handle = std::move(*receipt);
    w.body = std::move(*body);
    w.message_id = string_member(m, "MessageId").value_or("");
    w.md5_of_body = string_member(m, "MD5OfBody").value_or("");
    if (const json* a = member(m, "Attributes")) {
      w.receive_count = string_member(*a, bindings::sqs::receive_count_attribute);
    }
    if (const json* attrs = member(m, "MessageAttributes");
        attrs != nullptr && attrs->is_object()) {
      for (const auto& [name, value] : attrs->items()) {
        auto type = string_member(value, "DataType");
        auto text = string_member(value, "StringValue");
        if (!type || !text) continue;  // Binary attributes carry no text
        w.attributes.push_back({name, *type, *text});
      }
    }
    out.push_back(std::move(w));
  }
  return out;
}

result<std::vector<wire_message>> api::receive_message(std::string_view queue_url, int max_messages,
                                                       int wait_seconds,
                                                       std::optional<int> visibility_seconds,
                                                       milliseconds timeout) {
  std::string req = "{";
  string_field(req, "QueueUrl", queue_url);
  int_field(req, "MaxNumberOfMessages", max_messages);
  int_field(req, "WaitTimeSeconds", wait_seconds);
  if (visibility_seconds) int_field(req, "VisibilityTimeout", *visibility_seconds);
  // Both names of the receive-count request: emulators honour one or the other.
  req +=
      ",\"MessageAttributeNames\":[\"All\"],\"AttributeNames\":[\"ApproximateReceiveCount\"],"
      "\"MessageSystemAttributeNames\":[\"ApproximateReceiveCount\"]}";
  BABELQUEUE_TRY_LET(r, call("ReceiveMessage", req, timeout + std::chrono::seconds(wait_seconds)));
  return parse_receive_response(*r);
}

result<void> api::delete_message(std::string_view queue_url, std::string_view receipt_handle,
                                 milliseconds timeout) {
  std::string req = "{";
  string_field(req, "QueueUrl", queue_url);
  string_field(req, "ReceiptHandle", receipt_handle);
  req += '}';
  BABELQUEUE_TRY_LET(r, call("DeleteMessage", req, timeout));
  return {};
}

result<std::vector<entry_outcome>> api::delete_message_batch(
    std::string_view queue_url, const std::vector<std::string_view>& receipt_handles,
    milliseconds timeout) {
  auto r =
      call("DeleteMessageBatch", receipt_batch(queue_url, receipt_handles, std::nullopt), timeout);
  if (!r) return fail(std::move(r).error());
  return batch_outcomes(*r, receipt_handles.size(), "DeleteMessageBatch");
}

result<void> api::change_visibility(std::string_view queue_url, std::string_view receipt_handle,
                                    int seconds, milliseconds timeout) {
  std::string req = "{";
  string_field(req, "QueueUrl", queue_url);
  string_field(req, "ReceiptHandle", receipt_handle);
  int_field(req, "VisibilityTimeout", seconds);
  req += '}';
  BABELQUEUE_TRY_LET(r, call("ChangeMessageVisibility", req, timeout));
  return {};
}

result<std::vector<entry_outcome>> api::change_visibility_batch(
    std::string_view queue_url, const std::vector<std::string_view>& receipt_handles, int seconds,
    milliseconds timeout) {
  BABELQUEUE_TRY_LET(r, call("ChangeMessageVisibilityBatch",
                             receipt_batch(queue_url, receipt_handles, seconds), timeout));
  return batch_outcomes(*r, receipt_handles.size(), "ChangeMessageVisibilityBatch");
}

}  // namespace babelqueue::inline v1::sqs::detail
