// artemis:// URL → options (1:1 with the query keys; see artemis_transport.hpp), and the one
// validation of options, shared with artemis_transport::open().
#include "artemis/options.hpp"

#include "core/propagate.hpp"
#include "runtime/binding_support.hpp"

namespace babelqueue::inline v1::artemis {

namespace {

error_info bad(std::string what) {
  return babelqueue::detail::option_error("artemis", std::move(what));
}

result<void> positive(std::string_view key, std::chrono::milliseconds v) {
  return babelqueue::detail::require_positive("artemis", key, v);
}

}  // namespace

namespace detail {

result<void> validate(const options& o) {
  if (o.host.empty()) return fail(bad("host must not be empty"));
  if (o.port == 0) return fail(bad("port must be 1..65535"));
  if (o.username.empty() && !o.password.empty()) {
    return fail(bad("password given without a user"));
  }
  if (auto r = positive("connect_timeout", o.connect_timeout); !r) return r;
  if (auto r = positive("operation_timeout", o.operation_timeout); !r) return r;
  if (o.idle_timeout.count() < 0) return fail(bad("idle_timeout must be >= 0"));
  if (o.prefetch < 1 || o.prefetch > 10000) {
    return fail(bad("prefetch must be 1..10000 (got " + std::to_string(o.prefetch) + ")"));
  }
  if (auto r = babelqueue::detail::require_backoff("artemis", o.reconnect_backoff_min,
                                                   o.reconnect_backoff_max);
      !r) {
    return r;
  }
  return babelqueue::detail::validate_tls_options(o, "artemis", "artemis+ssl");
}

}  // namespace detail

result<options> options_from_url(const broker_url& url) {
  options o;
  if (url.scheme != "artemis" && url.scheme != "artemis+ssl") {
    return fail(transport_errc::invalid_argument,
                "not an artemis:// or artemis+ssl:// URL (scheme '" + url.scheme + "')");
  }
  o.tls = url.scheme == "artemis+ssl";
  o.port = o.tls ? 5671 : 5672;
  if (!url.host.empty()) o.host = url.host;
  if (url.port) o.port = *url.port;
  o.username = url.user;
  if (url.has_password) o.password = url.password;
  if (url.path.size() > 1) {
    return fail(bad("path '" + url.path + "' is not used: queues are named per call"));
  }

  query_options q(url);
  BABELQUEUE_TRY(q.get("connect_timeout", o.connect_timeout));
  BABELQUEUE_TRY(q.get("operation_timeout", o.operation_timeout));
  BABELQUEUE_TRY(q.get("idle_timeout", o.idle_timeout));
  BABELQUEUE_TRY(q.get("prefetch", o.prefetch));
  BABELQUEUE_TRY(q.get("reconnect_backoff_min", o.reconnect_backoff_min));
  BABELQUEUE_TRY(q.get("reconnect_backoff_max", o.reconnect_backoff_max));
  BABELQUEUE_TRY(q.get("durable", o.durable));
  BABELQUEUE_TRY(babelqueue::detail::read_tls_options(url, q, o, "artemis", "artemis+ssl"));
  BABELQUEUE_TRY(q.finish(o.tls ? "artemis+ssl" : "artemis"));
  BABELQUEUE_TRY(detail::validate(o));
  return o;
}

}  // namespace babelqueue::inline v1::artemis
