// amqp:// URL → options (1:1 with the query keys; see rabbitmq_transport.hpp), and the one
// validation of options, shared with rabbitmq_transport::open().
#include "rabbitmq/options.hpp"

#include "core/propagate.hpp"
#include "runtime/binding_support.hpp"

#include <babelqueue/bindings/rabbitmq.hpp>

#include <algorithm>

namespace babelqueue::inline v1::rabbitmq {

namespace {

error_info bad(std::string what) {
  return babelqueue::detail::option_error("amqp", std::move(what));
}

result<void> positive(std::string_view key, std::chrono::milliseconds v) {
  return babelqueue::detail::require_positive("amqp", key, v);
}

result<void> within(std::string_view key, std::int64_t v, std::int64_t min, std::int64_t max) {
  if (v < min || v > max) {
    return fail(bad(std::string(key) + " must be " + std::to_string(min) + ".." +
                    std::to_string(max) + " (got " + std::to_string(v) + ")"));
  }
  return {};
}

}  // namespace

namespace detail {

result<void> validate(const options& o) {
  if (o.host.empty()) return fail(bad("host must not be empty"));
  if (o.port == 0) return fail(bad("port must be 1..65535"));
  if (o.vhost.empty() || o.vhost.size() > bindings::rabbitmq::max_short_string) {
    return fail(bad("vhost must be 1..255 bytes (the URL path; /%2F is the vhost '/')"));
  }
  if (auto r = positive("connect_timeout", o.connect_timeout); !r) return r;
  if (auto r = positive("operation_timeout", o.operation_timeout); !r) return r;
  if (auto r = within("heartbeat (seconds)", o.heartbeat.count(), 0, 65535); !r) return r;
  if (auto r = within("prefetch", o.prefetch, 1, 65535); !r) return r;
  if (auto r = within("confirm_window", o.confirm_window, 1, 65535); !r) return r;
  if (auto r = within("frame_max", o.frame_max, 4096, 1 << 20); !r) return r;
  if (auto r = babelqueue::detail::require_backoff("amqp", o.reconnect_backoff_min,
                                                   o.reconnect_backoff_max);
      !r) {
    return r;
  }
  if (auto r = babelqueue::detail::validate_tls_options(o, "amqp", "amqps"); !r) return r;
  return {};
}

}  // namespace detail

result<options> options_from_url(const broker_url& url) {
  options o;
  if (url.scheme != "amqp" && url.scheme != "amqps") {
    return fail(transport_errc::invalid_argument,
                "not an amqp:// or amqps:// URL (scheme '" + url.scheme + "')");
  }
  o.tls = url.scheme == "amqps";
  o.port = o.tls ? 5671 : 5672;
  if (!url.host.empty()) o.host = url.host;
  if (url.port) o.port = *url.port;
  if (!url.user.empty()) o.username = url.user;
  if (url.has_password) o.password = url.password;
  // The path is percent-decoded already: `/%2F` arrived as `//`, the vhost `/`.
  if (url.path.size() > 1) o.vhost = url.path.substr(1);

  query_options q(url);
  BABELQUEUE_TRY(q.get("connect_timeout", o.connect_timeout));
  BABELQUEUE_TRY(q.get("operation_timeout", o.operation_timeout));
  std::chrono::milliseconds heartbeat = o.heartbeat;
  BABELQUEUE_TRY(q.get("heartbeat", heartbeat));
  if (heartbeat.count() % 1000 != 0) {
    return fail(bad("heartbeat must be whole seconds (e.g. 30s), or 0 for none"));
  }
  o.heartbeat = std::chrono::duration_cast<std::chrono::seconds>(heartbeat);
  BABELQUEUE_TRY(q.get("prefetch", o.prefetch));
  BABELQUEUE_TRY(q.get("confirm_window", o.confirm_window));
  BABELQUEUE_TRY(q.get("frame_max", o.frame_max));
  BABELQUEUE_TRY(q.get("declare_queues", o.declare_queues));
  BABELQUEUE_TRY(q.get("reconnect_backoff_min", o.reconnect_backoff_min));
  BABELQUEUE_TRY(q.get("reconnect_backoff_max", o.reconnect_backoff_max));
  BABELQUEUE_TRY(babelqueue::detail::read_tls_options(url, q, o, "amqp", "amqps"));
  BABELQUEUE_TRY(q.finish(o.tls ? "amqps" : "amqp"));

  BABELQUEUE_TRY(detail::validate(o));
  return o;
}

}  // namespace babelqueue::inline v1::rabbitmq
