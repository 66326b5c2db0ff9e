// pulsar:// URL → options (1:1 with the query keys; see pulsar_transport.hpp), and the one
// validation of options, shared with pulsar_transport::open().
#include "pulsar/options.hpp"

#include "core/propagate.hpp"
#include "runtime/binding_support.hpp"

#include <babelqueue/bindings/pulsar.hpp>
#include <babelqueue/text.hpp>

#include <array>

namespace babelqueue::inline v1::pulsar {

namespace {

error_info bad(std::string what) {
  return babelqueue::detail::option_error("pulsar", std::move(what));
}

bool one_of(std::string_view value, std::initializer_list<std::string_view> allowed) {
  for (auto a : allowed) {
    if (value == a) return true;
  }
  return false;
}

// Tenant and namespace: Pulsar's own rule for named entities, [-=:.\w]+.
bool valid_entity(std::string_view name) {
  if (name.empty() || name.size() > 255) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '=' || c == ':' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

namespace detail {

std::optional<subscription_kind> subscription_kind_of(std::string_view text) {
  const std::string t = ascii_lower(text);
  if (t == "shared") return subscription_kind::shared;
  if (t == "key_shared" || t == "keyshared") return subscription_kind::key_shared;
  if (t == "failover") return subscription_kind::failover;
  if (t == "exclusive") return subscription_kind::exclusive;
  return std::nullopt;
}

result<void> validate(const options& o) {
  using babelqueue::detail::require_positive;
  if (o.host.empty()) return fail(bad("host must not be empty"));
  if (o.port == 0) return fail(bad("port must be 1..65535"));
  if (o.subscription.empty() || o.subscription.size() > 255) {
    return fail(bad("subscription must be 1..255 characters"));
  }
  if (o.initial_position != "earliest" && o.initial_position != "latest") {
    return fail(bad("initial_position must be earliest or latest"));
  }
  if (!valid_entity(o.tenant))
    return fail(bad("tenant must be 1..255 characters of [-=:.A-Za-z0-9_]"));
  if (!valid_entity(o.namespace_)) {
    return fail(bad("namespace must be 1..255 characters of [-=:.A-Za-z0-9_]"));
  }
  // 0 (a zero-queue consumer) cannot receive with a timeout, which every receive() does.
  if (o.receiver_queue < 1 || o.receiver_queue > 1000000) {
    return fail(bad("receiver_queue must be 1..1000000"));
  }
  if (o.ack_timeout.count() != 0 && o.ack_timeout < std::chrono::seconds(10)) {
    return fail(bad("ack_timeout must be 0 (off) or at least 10s (the Pulsar client's minimum)"));
  }
  if (o.negative_ack_delay.count() < 0) return fail(bad("negative_ack_delay must be >= 0"));
  if (o.max_redeliver < 0 || o.max_redeliver > 1000000) {
    return fail(bad("max_redeliver must be 0..1000000"));
  }
  if (o.batch_max_messages < 1 || o.batch_max_messages > 100000) {
    return fail(bad("batch_max_messages must be 1..100000"));
  }
  if (o.batch_delay.count() < 0) return fail(bad("batch_delay must be >= 0"));
  if (!one_of(o.compression, {"none", "lz4", "zlib", "zstd", "snappy"})) {
    return fail(bad("compression must be none, lz4, zlib, zstd or snappy"));
  }
  if (auto r = require_positive("pulsar", "connect_timeout", o.connect_timeout); !r) return r;
  if (auto r = require_positive("pulsar", "operation_timeout", o.operation_timeout); !r) return r;
  if (!o.token.empty() && !o.token_file.empty()) {
    return fail(bad("token and token_file are alternatives: give one"));
  }
  if (o.io_threads < 1 || o.io_threads > 16) return fail(bad("io_threads must be 1..16"));
  if (!o.tls_server_name.empty()) {
    return fail(transport_errc::not_supported,
                "pulsar option tls_server_name: the Pulsar C++ client cannot override the TLS "
                "server name; connect to the name the certificate carries");
  }
  return babelqueue::detail::validate_tls_options(o, "pulsar", "pulsar+ssl");
}

}  // namespace detail

result<options> options_from_url(const broker_url& url) {
  options o;
  if (url.scheme != "pulsar" && url.scheme != "pulsar+ssl") {
    return fail(transport_errc::invalid_argument,
                "not a pulsar:// or pulsar+ssl:// URL (scheme '" + url.scheme + "')");
  }
  o.tls = url.scheme == "pulsar+ssl";
  o.port = o.tls ? 6651 : 6650;
  if (!url.host.empty()) o.host = url.host;
  if (url.port) o.port = *url.port;
  if (!url.user.empty() || url.has_password) {
    return fail(bad("credentials go in token or token_file, not in the URL authority"));
  }
  if (url.path.size() > 1) {
    return fail(bad("path '" + url.path + "' is not used: queues are named per call"));
  }

  query_options q(url);
  BABELQUEUE_TRY(q.get("subscription", o.subscription));
  std::string type;
  BABELQUEUE_TRY(q.get("subscription_type", type));
  if (!type.empty()) {
    auto kind = detail::subscription_kind_of(type);
    if (!kind) {
      return fail(bad("subscription_type must be shared, key_shared, failover or exclusive"));
    }
    o.subscription_type = *kind;
  }
  BABELQUEUE_TRY(q.get("initial_position", o.initial_position));
  o.initial_position = ascii_lower(o.initial_position);
  BABELQUEUE_TRY(q.get("tenant", o.tenant));
  BABELQUEUE_TRY(q.get("namespace", o.namespace_));
  BABELQUEUE_TRY(q.get("receiver_queue", o.receiver_queue));
  BABELQUEUE_TRY(q.get("ack_timeout", o.ack_timeout));
  BABELQUEUE_TRY(q.get("negative_ack_delay", o.negative_ack_delay));
  BABELQUEUE_TRY(q.get("max_redeliver", o.max_redeliver));
  BABELQUEUE_TRY(q.get("ensure_subscription", o.ensure_subscription));
  BABELQUEUE_TRY(q.get("batching", o.batching));
  BABELQUEUE_TRY(q.get("batch_max_messages", o.batch_max_messages));
  BABELQUEUE_TRY(q.get("batch_delay", o.batch_delay));
  BABELQUEUE_TRY(q.get("compression", o.compression));
  o.compression = ascii_lower(o.compression);
  BABELQUEUE_TRY(q.get("connect_timeout", o.connect_timeout));
  BABELQUEUE_TRY(q.get("operation_timeout", o.operation_timeout));
  BABELQUEUE_TRY(q.get("token", o.token));
  BABELQUEUE_TRY(q.get("token_file", o.token_file));
  BABELQUEUE_TRY(q.get("io_threads", o.io_threads));
  BABELQUEUE_TRY(babelqueue::detail::read_tls_options(url, q, o, "pulsar", "pulsar+ssl"));
  BABELQUEUE_TRY(q.finish(o.tls ? "pulsar+ssl" : "pulsar"));
  BABELQUEUE_TRY(detail::validate(o));
  return o;
}

}  // namespace babelqueue::inline v1::pulsar
