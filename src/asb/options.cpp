// sb:// URL and connection string → options, and their one validation.
#include "asb/options.hpp"

#include "core/propagate.hpp"
#include "runtime/binding_support.hpp"

#include <babelqueue/asb/connection_string.hpp>

namespace babelqueue::inline v1::asb {

namespace {

error_info bad(std::string what) { return babelqueue::detail::option_error("sb", std::move(what)); }

result<void> positive(std::string_view key, std::chrono::milliseconds v) {
  return babelqueue::detail::require_positive("sb", key, v);
}

// Percent-encodes everything but RFC 3986 unreserved characters (a SAS key is base64).
std::string url_escape(std::string_view in) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : in) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace

namespace detail {

result<void> validate(const options& o) {
  if (o.host.empty()) return fail(bad("host (the namespace) must not be empty"));
  if (o.port == 0) return fail(bad("port must be 1..65535"));
  const bool key_pair = !o.key_name.empty() || !o.key.empty();
  if (key_pair && (o.key_name.empty() || o.key.empty())) {
    return fail(bad("a SAS key needs its key name and the key (sb://<key name>:<key>@host)"));
  }
  if (key_pair == !o.sas_token.empty()) {
    return fail(bad(key_pair ? "give a SAS key or sas_token, not both"
                             : "credentials missing: sb://<key name>:<key>@host or ?sas_token="));
  }
  if (!o.sas_token.empty() && o.sas_token.rfind("SharedAccessSignature ", 0) != 0) {
    return fail(bad("sas_token must start with 'SharedAccessSignature '"));
  }
  if (o.token_ttl.count() < 1) return fail(bad("token_ttl must be at least 1 s"));
  if (auto r = positive("connect_timeout", o.connect_timeout); !r) return r;
  if (auto r = positive("operation_timeout", o.operation_timeout); !r) return r;
  if (o.idle_timeout.count() < 0) return fail(bad("idle_timeout must be >= 0"));
  if (o.prefetch < 1 || o.prefetch > 1000) {
    return fail(bad("prefetch must be 1..1000 (got " + std::to_string(o.prefetch) + ")"));
  }
  if (auto r = babelqueue::detail::require_backoff("sb", o.reconnect_backoff_min,
                                                   o.reconnect_backoff_max);
      !r) {
    return r;
  }
  if (!o.tls && (!o.tls_ca_file.empty() || !o.tls_server_name.empty() || !o.tls_verify)) {
    return fail(bad("tls_* options need TLS, which tls=false (or emulator=true) turns off"));
  }
  return {};
}

}  // namespace detail

result<options> options_from_url(const broker_url& url) {
  if (url.scheme != "sb") {
    return fail(transport_errc::invalid_argument, "not an sb:// URL (scheme '" + url.scheme + "')");
  }
  options o;
  o.host = url.host;
  o.key_name = url.user;
  if (url.has_password) o.key = url.password;
  if (url.path.size() > 1) {
    return fail(bad("path '" + url.path + "' is not used: queues are named per call"));
  }
  query_options q(url);
  BABELQUEUE_TRY(q.get("emulator", o.emulator));
  o.tls = !o.emulator;
  BABELQUEUE_TRY(q.get("tls", o.tls));
  o.port = o.tls ? 5671 : 5672;
  if (url.port) o.port = *url.port;
  BABELQUEUE_TRY(q.get("sas_token", o.sas_token));
  BABELQUEUE_TRY(q.get("entity_path", o.entity_path));
  std::chrono::milliseconds ttl = o.token_ttl;
  BABELQUEUE_TRY(q.get("token_ttl", ttl));
  o.token_ttl = std::chrono::duration_cast<std::chrono::seconds>(ttl);
  BABELQUEUE_TRY(q.get("connect_timeout", o.connect_timeout));
  BABELQUEUE_TRY(q.get("operation_timeout", o.operation_timeout));
  BABELQUEUE_TRY(q.get("idle_timeout", o.idle_timeout));
  BABELQUEUE_TRY(q.get("prefetch", o.prefetch));
  BABELQUEUE_TRY(q.get("reconnect_backoff_min", o.reconnect_backoff_min));
  BABELQUEUE_TRY(q.get("reconnect_backoff_max", o.reconnect_backoff_max));
  BABELQUEUE_TRY(q.get("tls_ca_file", o.tls_ca_file));
  BABELQUEUE_TRY(q.get("tls_server_name", o.tls_server_name));
  BABELQUEUE_TRY(q.get("tls_verify", o.tls_verify));
  BABELQUEUE_TRY(q.finish("sb"));
  BABELQUEUE_TRY(detail::validate(o));
  return o;
}

result<options> options_from_connection_string(std::string_view text) {
  BABELQUEUE_TRY_LET(cs, parse_connection_string(text));
  options o;
  o.host = cs->host;
  o.emulator = cs->use_development_emulator;
  o.tls = !o.emulator;
  o.port = cs->port.value_or(o.emulator ? 5672 : 5671);
  o.key_name = cs->shared_access_key_name.value_or("");
  o.key = cs->shared_access_key.value_or("");
  o.sas_token = cs->shared_access_signature.value_or("");
  o.entity_path = cs->entity_path.value_or("");
  BABELQUEUE_TRY(detail::validate(o));
  return o;
}

result<std::string> url_from_connection_string(std::string_view text) {
  BABELQUEUE_TRY_LET(o, options_from_connection_string(text));
  std::string url = "sb://";
  if (!o->key_name.empty()) url += url_escape(o->key_name) + ":" + url_escape(o->key) + "@";
  const bool ipv6 = o->host.find(':') != std::string::npos;
  url += (ipv6 ? "[" + o->host + "]" : o->host) + ":" + std::to_string(o->port);
  std::string query;
  auto add = [&](std::string_view k, std::string_view v) {
    // Appended piece by piece: `"?" + std::string(k) + ...` makes GCC 12 at -O3 warn
    // (-Wrestrict, a false positive).
    query += query.empty() ? '?' : '&';
    query.append(k);
    query += '=';
    query.append(url_escape(v));
  };
  if (o->emulator) add("emulator", "true");
  if (!o->sas_token.empty()) add("sas_token", o->sas_token);
  if (!o->entity_path.empty()) add("entity_path", o->entity_path);
  return url + query;
}

}  // namespace babelqueue::inline v1::asb
