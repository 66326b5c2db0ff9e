#pragma once
/// @file url.hpp
/// @brief Broker URLs and the scheme → transport factory registry.
///
/// URL form: `scheme://[user[:password]@]host[:port][/path][?key=value&...]`. Every
/// component is percent-decoded; `+` is NOT a space. IPv6 hosts are written `[::1]`.
/// Examples: `memory://orders`, `sqlite:///var/lib/app/queue.db?visibility=30s`,
/// `sqlite://queue.db` (relative: host `queue.db`, see broker_url::location()),
/// `redis://:secret@127.0.0.1:6379/2?timeout=5s`.
///
/// Registration is explicit, because each transport is its own library and static
/// self-registration would be dropped by the linker. Each transport library exposes one
/// function that calls register_transport() for its scheme(s):
///
///     babelqueue::memory::register_transport();   // <babelqueue/memory/memory_transport.hpp>
///     babelqueue::sqlite::register_transport();   // <babelqueue/sqlite/sqlite_transport.hpp>
///     babelqueue::redis::register_transport();    // <babelqueue/redis/redis_transport.hpp>
///     auto t = babelqueue::open_transport("redis://127.0.0.1:6379");
///
/// Calling a register function twice is harmless (the later factory replaces the earlier).
///
/// Options: the query string maps 1:1 onto the transport's options struct (same names,
/// snake_case), every timeout with a finite default. Transports read them with
/// query_options, which rejects unknown keys and malformed values with
/// runtime_errc::invalid_argument, so a typo never silently falls back to a default.
///
/// @note Thread-safety: broker_url and query_options are value types (one thread per
/// object). register_transport(), open_transport() and registered_schemes() are
/// thread-safe (the registry is guarded by a mutex; factories run outside it, on the
/// calling thread).

#include <babelqueue/export/runtime.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/runtime/error.hpp>
#include <babelqueue/runtime/transport.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace babelqueue {
inline namespace v1 {

/// A parsed, percent-decoded broker URL.
struct BABELQUEUE_RUNTIME_EXPORT broker_url {
  std::string scheme;  ///< lower-cased: `memory`, `sqlite`, `redis`, `rediss`, ...
  std::string user;
  std::string password;
  bool has_password = false;  ///< `redis://:@h` vs `redis://h`
  std::string host;           ///< without IPv6 brackets
  std::optional<std::uint16_t> port;
  /// The further entries of a comma-separated host list (`kafka://a:9092,b:9092`: host `a`,
  /// port 9092, more_hosts {{"b", 9092}}). Bindings that take one host refuse a list.
  std::vector<std::pair<std::string, std::optional<std::uint16_t>>> more_hosts;
  std::string path;  ///< with its leading `/`, or empty
  std::map<std::string, std::string, std::less<>> query;

  /// runtime_errc::invalid_argument with a reason on: no `scheme://`, bad scheme characters, bad
  /// percent escape, port not a number in 1..65535, unterminated `[`, a repeated query key.
  static result<broker_url> parse(std::string_view url);

  /// host + path: the "where" of file/name-based schemes. `sqlite:///a/b.db` → `/a/b.db`,
  /// `sqlite://b.db` → `b.db`, `sqlite://dir/b.db` → `dir/b.db`, `memory://x` → `x`.
  std::string location() const {
    std::string out = host;
    for (const auto& [h, p] : more_hosts) {
      out += ',' + h;
      if (p) out += ':' + std::to_string(*p);
    }
    return out + path;
  }

  /// The URL re-assembled with the password and secret query values replaced by `***`
  /// (for logs and errors). See redact_url().
  std::string redacted() const;
};

/// The one redaction of the SDK: `url` with the password of `user:password@` and the value
/// of every secret query option (is_secret_option()) replaced by `***`, and any `#fragment`
/// dropped. Works on any text, parseable or not (`redis://user:***@host:6379/0`). Every
/// transport and the CLI print broker URLs only through this (or broker_url::redacted()), so
/// no error, log record, metric label or span attribute carries a password, token or key.
BABELQUEUE_RUNTIME_EXPORT std::string redact_url(std::string_view url);

/// True for a query option whose value is a secret: names containing `pass`, `secret`,
/// `token`, `sas`, `signature`, `credential`, `auth`, `private`, `apikey`, or `key` / `*_key`.
/// Names ending in `_file` / `_path` (where a secret is kept, e.g. `tls_key_file`) are not.
BABELQUEUE_RUNTIME_EXPORT bool is_secret_option(std::string_view key);

/// Typed reader over a URL's query string. Each get() consumes its key; finish() fails when
/// keys remain (unknown options). Values:
///  - durations: an integer followed by `ms`, `s` or `m` (`250ms`, `5s`, `1m`); a bare
///    integer means milliseconds. Negative values are refused.
///  - booleans: `1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off`.
///  - integers: decimal, optional `-`, within int64.
/// On a bad value the error names the key and the value; `out` is left unchanged.
class BABELQUEUE_RUNTIME_EXPORT query_options {
 public:
  explicit query_options(const broker_url& url) : remaining_(url.query) {}

  result<void> get(std::string_view key, std::string& out);
  result<void> get(std::string_view key, std::int64_t& out);
  result<void> get(std::string_view key, bool& out);
  result<void> get(std::string_view key, std::chrono::milliseconds& out);
  /// Integers restricted to [min, max].
  result<void> get(std::string_view key, std::int64_t& out, std::int64_t min, std::int64_t max);

  /// runtime_errc::invalid_argument "unknown option(s) for <scheme>: a, b" when keys were
  /// not read.
  result<void> finish(std::string_view scheme) const;

 private:
  std::optional<std::string> take(std::string_view key);
  std::map<std::string, std::string, std::less<>> remaining_;
};

/// Parses a duration as query_options does (`250ms`, `5s`, `1m`, bare = ms).
BABELQUEUE_RUNTIME_EXPORT result<std::chrono::milliseconds> parse_duration(std::string_view text);

/// Builds a transport from a parsed URL. Runs on the thread calling open_transport().
using transport_factory = std::function<result<std::unique_ptr<transport>>(const broker_url&)>;

/// Registers (or replaces) the factory for `scheme` (lower-case, without `://`).
BABELQUEUE_RUNTIME_EXPORT void register_transport(std::string scheme, transport_factory factory);

/// Parses `url` and opens a transport through the factory registered for its scheme.
/// runtime_errc::unknown_scheme (message lists the registered schemes) when none is registered;
/// runtime_errc::invalid_argument for a malformed URL or options; otherwise the factory's
/// error.
BABELQUEUE_RUNTIME_EXPORT result<std::unique_ptr<transport>> open_transport(std::string_view url);
/// As above with an already parsed URL.
BABELQUEUE_RUNTIME_EXPORT result<std::unique_ptr<transport>> open_transport(const broker_url& url);

/// The currently registered schemes, sorted.
BABELQUEUE_RUNTIME_EXPORT std::vector<std::string> registered_schemes();

}  // namespace v1
}  // namespace babelqueue
