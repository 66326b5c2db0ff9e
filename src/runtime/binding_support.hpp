#pragma once
// Pieces every networked binding repeats, written once: the `tls_*` URL keys (the same five
// on rediss://, amqps://, ...) with their checks, and the URL factory that turns a binding's
// options parser and open() into a transport_factory. Header-only and private
// (`#include "runtime/binding_support.hpp"`); templates over the binding's options struct,
// which must have the fields `tls`, `tls_ca_file`, `tls_cert_file`, `tls_key_file`,
// `tls_server_name`, `tls_verify`.
//
// Thread-safety: pure functions.

#include "core/propagate.hpp"

#include <babelqueue/result.hpp>
#include <babelqueue/runtime/transport.hpp>
#include <babelqueue/runtime/url.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::inline v1::detail {

/// "<scheme> option <what>" as transport_errc::invalid_argument (never the option's value:
/// it may be a secret).
inline error_info option_error(std::string_view scheme, std::string what) {
  return error_info(transport_errc::invalid_argument,
                    std::string(scheme) + " option " + std::move(what));
}

/// A host that is this machine: a secret sent there in clear text crosses no network.
inline bool loopback_host(std::string_view host) noexcept {
  return host.empty() || host == "localhost" || host.starts_with("127.") || host == "::1" ||
         host == "[::1]";
}

/// What a binding's security_warnings() says (transport.hpp): certificate checks off on a
/// TLS connection; `credential` (e.g. "password") sent without TLS to a host that is not
/// this machine (`secure` names the scheme that would protect it).
struct security_facts {
  std::string_view scheme;
  bool tls = false;
  bool tls_verify = true;
  std::string_view credential;  ///< what is sent, e.g. "password"; "" = none
  std::string_view host;
  std::string_view secure;  ///< e.g. "amqps://"
};
inline std::vector<std::string> security_warnings_of(const security_facts& f) {
  std::vector<std::string> out;
  if (f.tls && !f.tls_verify) {
    out.push_back(std::string(f.scheme) +
                  ": tls_verify=false: the server's certificate is not checked, so the "
                  "connection is encrypted but not authenticated (anyone on the path can pose "
                  "as the server); for tests only");
  }
  if (!f.tls && !f.credential.empty() && !loopback_host(f.host)) {
    out.push_back(std::string(f.scheme) + ": the " + std::string(f.credential) +
                  " is sent without TLS to " + std::string(f.host) +
                  ": anyone on the network path can read it; use " + std::string(f.secure));
  }
  return out;
}

/// A duration option that must be > 0.
inline result<void> require_positive(std::string_view scheme, std::string_view key,
                                     std::chrono::milliseconds v) {
  if (v.count() <= 0) return fail(option_error(scheme, std::string(key) + " must be > 0"));
  return {};
}

/// The reconnect backoff pair every networked binding takes: min > 0, max >= min.
inline result<void> require_backoff(std::string_view scheme, std::chrono::milliseconds min,
                                    std::chrono::milliseconds max) {
  if (auto r = require_positive(scheme, "reconnect_backoff_min", min); !r) return r;
  if (max < min) {
    return fail(option_error(scheme, "reconnect_backoff_max must be >= reconnect_backoff_min"));
  }
  return {};
}

/// The message of a `tls_*` option on a plain scheme (`redis`, `amqp`, ...).
inline std::string tls_needs_secure_scheme(std::string_view plain, std::string_view secure) {
  return std::string(plain) + " tls_* options need TLS: the " + std::string(secure) +
         ":// scheme, or options::tls (" + std::string(plain) + ":// is plain TCP)";
}

/// Reads the `tls_*` keys into `o`. Any `tls_*` key on the plain scheme is refused — even
/// one that repeats a default — so that a typo in the scheme cannot silently drop TLS.
template <class Options>
result<void> read_tls_options(const broker_url& url, query_options& q, Options& o,
                              std::string_view plain, std::string_view secure) {
  const bool tls_keys = std::any_of(url.query.begin(), url.query.end(),
                                    [](const auto& kv) { return kv.first.rfind("tls_", 0) == 0; });
  if (tls_keys && !o.tls) {
    return fail(transport_errc::invalid_argument, tls_needs_secure_scheme(plain, secure));
  }
  if (auto r = q.get("tls_ca_file", o.tls_ca_file); !r) return r;
  if (auto r = q.get("tls_cert_file", o.tls_cert_file); !r) return r;
  if (auto r = q.get("tls_key_file", o.tls_key_file); !r) return r;
  if (auto r = q.get("tls_server_name", o.tls_server_name); !r) return r;
  return q.get("tls_verify", o.tls_verify);
}

/// The TLS rules of options built in code: no TLS settings without TLS, and a client
/// certificate only with its key.
template <class Options>
result<void> validate_tls_options(const Options& o, std::string_view plain,
                                  std::string_view secure) {
  if (!o.tls && (!o.tls_ca_file.empty() || !o.tls_cert_file.empty() || !o.tls_key_file.empty() ||
                 !o.tls_server_name.empty() || !o.tls_verify)) {
    return fail(transport_errc::invalid_argument, tls_needs_secure_scheme(plain, secure));
  }
  if (o.tls_cert_file.empty() != o.tls_key_file.empty()) {
    return fail(transport_errc::invalid_argument,
                std::string(plain) +
                    " options tls_cert_file and tls_key_file go together (a client certificate "
                    "and its key)");
  }
  return {};
}

/// A transport_factory from a binding's `options_from_url` and `Transport::open`. A URL with
/// a comma-separated host list is refused unless `HostList` (Kafka's bootstrap servers).
template <class Transport, bool HostList = false, class ParseOptions>
transport_factory url_factory(ParseOptions parse) {
  return [parse](const broker_url& url) -> result<std::unique_ptr<transport>> {
    if (!url.more_hosts.empty() && !HostList) {
      return fail(transport_errc::invalid_argument,
                  url.scheme + ":// takes one host, not a comma-separated list");
    }
    BABELQUEUE_TRY_LET(o, parse(url));
    BABELQUEUE_TRY_LET(t, Transport::open(std::move(*o)));
    return std::unique_ptr<transport>(std::move(*t));
  };
}

}  // namespace babelqueue::inline v1::detail
