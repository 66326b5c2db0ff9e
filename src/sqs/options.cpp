// sqs:// URL → options (1:1 with the query keys; see sqs_transport.hpp), and the one
// validation of options, shared with sqs_transport::open().
#include "sqs/options.hpp"

#include "core/propagate.hpp"
#include "runtime/binding_support.hpp"
#include "sqs/credentials.hpp"

#include <babelqueue/bindings/sqs.hpp>

namespace babelqueue::inline v1::sqs {

namespace {

error_info bad(std::string what) {
  return babelqueue::detail::option_error("sqs", std::move(what));
}

result<void> in_range(std::string_view k, std::int64_t v, std::int64_t min, std::int64_t max) {
  if (v < min || v > max) {
    return fail(bad(std::string(k) + " must be " + std::to_string(min) + ".." +
                    std::to_string(max) + " (got " + std::to_string(v) + ")"));
  }
  return {};
}

bool is_region(std::string_view r) {
  if (r.empty() || r.size() > 64) return false;
  for (char c : r) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

bool http_url(std::string_view u) { return u.starts_with("http://") || u.starts_with("https://"); }

}  // namespace

namespace detail {

result<void> validate(const options& o) {
  if (!is_region(o.region)) {
    return fail(
        bad("region '" + o.region +
            "' is not an AWS region name (lower-case letters, digits, '-'; e.g. us-east-1)"));
  }
  if (!o.endpoint.empty() && !http_url(o.endpoint)) {
    return fail(bad("endpoint must be an http:// or https:// URL (got '" + o.endpoint + "')"));
  }
  if (!o.prefix.empty() && !http_url(o.prefix)) {
    return fail(
        bad("prefix must be an http:// or https:// queue URL prefix (got '" + o.prefix + "')"));
  }
  if (auto r = in_range("wait_time", o.wait_time, 0, 20); !r) return r;
  if (auto r = in_range("visibility", o.visibility, -1, 43200); !r) return r;
  if (auto r = in_range("batch", o.batch, 1, 10); !r) return r;
  if (auto r = in_range("max_message_bytes", o.max_message_bytes, 1, 1048576); !r) return r;
  if (auto r = in_range("retries", o.retries, 0, 10); !r) return r;
  if (o.group_id.size() > bindings::sqs::max_fifo_id)
    return fail(bad("group_id is longer than 128 characters"));
  if (!o.dlq.empty() && !bindings::sqs::is_valid_queue_name(o.dlq)) {
    return fail(bad("dlq '" + o.dlq +
                    "' is not a legal SQS queue name ([A-Za-z0-9_-], at most 80, "
                    "optional .fifo)"));
  }
  for (char c : o.dlq_suffix) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-')) {
      return fail(bad("dlq_suffix '" + o.dlq_suffix + "' may hold only [A-Za-z0-9_-]"));
    }
  }
  if (auto r = babelqueue::detail::require_positive("sqs", "connect_timeout", o.connect_timeout);
      !r)
    return r;
  if (auto r =
          babelqueue::detail::require_positive("sqs", "operation_timeout", o.operation_timeout);
      !r)
    return r;
  return {};
}

std::string endpoint_of(const options& o) {
  std::string e = o.endpoint.empty() ? "https://sqs." + o.region + ".amazonaws.com" : o.endpoint;
  while (!e.empty() && e.back() == '/') e.pop_back();
  return e;
}

}  // namespace detail

result<options> options_from_url(const broker_url& url) {
  options o;
  if (url.scheme != "sqs") {
    return fail(transport_errc::invalid_argument,
                "not an sqs:// URL (scheme '" + url.scheme + "')");
  }
  if (!url.user.empty() || url.has_password) {
    return fail(
        bad("credentials do not go in the URL: use AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY "
            "or a shared credentials profile"));
  }
  if (url.port) return fail(bad("sqs://<region> takes no port: set endpoint=http://host:port"));
  if (url.path.size() > 1)
    return fail(bad("path '" + url.path + "' is not used: queues are named per call"));
  o.region = url.host;
  if (o.region.empty()) {
    o.region = sqs::detail::process_env("AWS_REGION")
                   .value_or(sqs::detail::process_env("AWS_DEFAULT_REGION").value_or(""));
    if (o.region.empty()) {
      return fail(bad("no region: write sqs://<region> or set AWS_REGION / AWS_DEFAULT_REGION"));
    }
  }
  query_options q(url);
  BABELQUEUE_TRY(q.get("endpoint", o.endpoint));
  BABELQUEUE_TRY(q.get("prefix", o.prefix));
  BABELQUEUE_TRY(q.get("fifo", o.fifo));
  BABELQUEUE_TRY(q.get("group_id", o.group_id));
  BABELQUEUE_TRY(q.get("content_based_dedup", o.content_based_dedup));
  BABELQUEUE_TRY(q.get("wait_time", o.wait_time));
  BABELQUEUE_TRY(q.get("visibility", o.visibility));
  BABELQUEUE_TRY(q.get("batch", o.batch));
  BABELQUEUE_TRY(q.get("dlq_suffix", o.dlq_suffix));
  BABELQUEUE_TRY(q.get("dlq", o.dlq));
  BABELQUEUE_TRY(q.get("create_queues", o.create_queues));
  BABELQUEUE_TRY(q.get("ack_batch", o.ack_batch));
  BABELQUEUE_TRY(q.get("max_message_bytes", o.max_message_bytes));
  BABELQUEUE_TRY(q.get("connect_timeout", o.connect_timeout));
  BABELQUEUE_TRY(q.get("operation_timeout", o.operation_timeout));
  BABELQUEUE_TRY(q.get("retries", o.retries));
  BABELQUEUE_TRY(q.get("profile", o.profile));
  BABELQUEUE_TRY(q.get("tls_ca_file", o.tls_ca_file));
  BABELQUEUE_TRY(q.get("tls_verify", o.tls_verify));
  BABELQUEUE_TRY(q.finish("sqs"));
  BABELQUEUE_TRY(detail::validate(o));
  return o;
}

}  // namespace babelqueue::inline v1::sqs
