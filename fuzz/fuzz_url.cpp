// Fuzz target: broker URLs (url.hpp), the typed query options, and the redis:// and
// sqlite:// option parsers (pure functions: nothing is opened or connected).
//
// Invariants:
//  - broker_url::parse() never crashes; a refusal is condition::invalid_argument;
//  - a parsed URL re-serialised with every component percent-encoded parses back to the same
//    components (scheme lower-case, port 1..65535, path empty or starting with `/`);
//  - parse_duration() and every query_options getter accept only what they document, never
//    yield a negative duration or an out-of-range integer, and leave `out` unchanged on a
//    refusal; finish() fails exactly when keys remain;
//  - the input as a secret (a password, a token), raw inside a URL, whatever bytes it holds,
//    never appears whole in redact_url(), broker_url::redacted(), a parse error or an
//    unknown-option error (issue #38); it is wrapped in two control bytes that no message of
//    the SDK contains, so a match can only be a copy of the input;
//  - redis::options_from_url() / sqlite::options_from_url() (run on every parsed URL, with
//    the scheme replaced by theirs) either refuse with condition::invalid_argument or return
//    options that satisfy their documented ranges.
#include "fuzz_check.hpp"

#include <babelqueue/error.hpp>
#include <babelqueue/runtime/url.hpp>
#if defined(BABELQUEUE_FUZZ_WITH_REDIS)
#include <babelqueue/redis/redis_transport.hpp>
#endif
#if defined(BABELQUEUE_FUZZ_WITH_SQLITE)
#include <babelqueue/sqlite/sqlite_transport.hpp>
#endif

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

namespace bq = babelqueue;
using std::chrono::milliseconds;

// Percent-encodes everything but RFC 3986 unreserved characters (and `/` in a path).
std::string encode(std::string_view in, bool keep_slash = false) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (char ch : in) {
    const auto c = static_cast<unsigned char>(ch);
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
                            c == '~' || (keep_slash && c == '/');
    if (unreserved) {
      out += ch;
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string serialise(const bq::broker_url& u) {
  std::string out = u.scheme + "://";
  if (!u.user.empty() || u.has_password) {
    out += encode(u.user);
    if (u.has_password) out += ':' + encode(u.password);
    out += '@';
  }
  out += encode(u.host);
  if (u.port) out += ':' + std::to_string(*u.port);
  for (const auto& [h, p] : u.more_hosts) {  // `kafka://a:1,b:2`
    out += ',' + encode(h);
    if (p) out += ':' + std::to_string(*p);
  }
  out += encode(u.path, true);
  char sep = '?';
  for (const auto& [k, v] : u.query) {
    out += sep;
    out += encode(k) + '=' + encode(v);
    sep = '&';
  }
  return out;
}

bool same(const bq::broker_url& a, const bq::broker_url& b) {
  return a.scheme == b.scheme && a.user == b.user && a.password == b.password &&
         a.has_password == b.has_password && a.host == b.host && a.port == b.port &&
         a.more_hosts == b.more_hosts && a.path == b.path && a.query == b.query;
}

void check_duration_text(std::string_view text) {
  auto d = bq::parse_duration(text);
  if (d) {
    FUZZ_CHECK(d->count() >= 0, "parse_duration() returned a negative duration");
  } else {
    FUZZ_CHECK(d.code() == bq::condition::invalid_argument, "parse_duration() error code");
  }
}

// Every typed getter on one key, each on a fresh reader.
void check_getters(const bq::broker_url& u, const std::string& key, const std::string& value) {
  {
    bq::query_options q(u);
    std::string out = "untouched";
    FUZZ_CHECK(q.get(key, out).has_value() && out == value, "string option not read as is");
    FUZZ_CHECK(q.finish("fuzz").has_value() == (u.query.size() == 1),
               "finish() disagrees with the keys left");
    std::string again = "untouched";
    FUZZ_CHECK(q.get(key, again).has_value() && again == "untouched", "a key read twice");
  }
  {
    bq::query_options q(u);
    std::int64_t out = 7;
    if (auto r = q.get(key, out); !r) {
      FUZZ_CHECK(r.code() == bq::condition::invalid_argument && out == 7,
                 "bad integer changed out");
    }
  }
  {
    bq::query_options q(u);
    std::int64_t out = 7;
    if (auto r = q.get(key, out, 1, 255); r) {
      FUZZ_CHECK(out >= 1 && out <= 255, "ranged integer out of its range");
    } else {
      FUZZ_CHECK(r.code() == bq::condition::invalid_argument && out == 7,
                 "bad integer changed out");
    }
  }
  {
    bq::query_options q(u);
    bool out = true;
    bool out2 = false;
    bq::query_options q2(u);
    auto r = q.get(key, out);
    auto r2 = q2.get(key, out2);
    FUZZ_CHECK(r.has_value() == r2.has_value(), "boolean parse depends on the old value");
    if (r) {
      FUZZ_CHECK(out == out2, "boolean parse depends on the old value");
    } else {
      FUZZ_CHECK(r.code() == bq::condition::invalid_argument && out && !out2,
                 "bad bool changed out");
    }
  }
  {
    bq::query_options q(u);
    milliseconds out{-5};
    if (auto r = q.get(key, out); r) {
      FUZZ_CHECK(out.count() >= 0, "negative duration option");
    } else {
      FUZZ_CHECK(r.code() == bq::condition::invalid_argument && out.count() == -5,
                 "bad duration changed out");
    }
  }
}

#if defined(BABELQUEUE_FUZZ_WITH_REDIS)
void check_redis(bq::broker_url u) {
  u.scheme = "redis";
  auto o = bq::redis::options_from_url(u);
  if (!o) {
    FUZZ_CHECK(o.code() == bq::condition::invalid_argument, "redis options error code");
    return;
  }
  FUZZ_CHECK(o->connect_timeout.count() > 0 && o->command_timeout.count() > 0,
             "redis timeouts must be > 0");
  FUZZ_CHECK(
      o->reconnect_backoff_min.count() > 0 && o->reconnect_backoff_max >= o->reconnect_backoff_min,
      "redis backoff range");
  FUZZ_CHECK(o->prefetch >= 1 && o->prefetch <= 255, "redis prefetch range");
  FUZZ_CHECK(o->prefetch == 1 || o->track_reservations, "prefetch > 1 without tracking");
  FUZZ_CHECK(o->max_pending_acks >= 1 && o->max_pending_acks <= 100000, "max_pending_acks");
  FUZZ_CHECK(o->db >= 0 && o->db <= 1'000'000, "redis db range");
  FUZZ_CHECK(!o->processing_suffix.empty(), "empty processing suffix");
  FUZZ_CHECK(!o->retry_after || o->retry_after->count() >= 0, "negative retry_after");
  FUZZ_CHECK(o->port != 0, "redis port 0");
}
#endif

#if defined(BABELQUEUE_FUZZ_WITH_SQLITE)
void check_sqlite(bq::broker_url u) {
  u.scheme = "sqlite";
  auto o = bq::sqlite::options_from_url(u);
  if (!o) {
    FUZZ_CHECK(o.code() == bq::condition::invalid_argument, "sqlite options error code");
    return;
  }
  FUZZ_CHECK(!o->path.empty() && o->path != ":memory:", "unusable sqlite path accepted");
  FUZZ_CHECK(o->path == u.location(), "sqlite path is not the URL location");
  FUZZ_CHECK(o->visibility_timeout.count() > 0 && o->poll_interval.count() > 0 &&
                 o->busy_timeout.count() > 0,
             "sqlite timeouts must be > 0");
}
#endif

void check_secret_never_shown(std::string_view text) {
  const std::string secret = '\x01' + std::string(text) + '\x02';
  const auto hidden = [&](const std::string& shown, const char* where) {
    FUZZ_CHECK(shown.find(secret) == std::string::npos, where);
  };
  for (const std::string& url :
       {"amqp://user:" + secret + "@host:5672/v?x=1", "pulsar://h:1?token=" + secret + "&x=1",
        "user:" + secret + "@h"}) {
    hidden(bq::redact_url(url), "redact_url() showed a secret");
    auto u = bq::broker_url::parse(url);
    if (!u) {
      hidden(u.error().message, "a URL parse error showed a secret");
      continue;
    }
    hidden(u->redacted(), "redacted() showed a secret");
    bq::query_options q(*u);
    if (auto unknown = q.finish(u->scheme); !unknown) {
      hidden(unknown.error().message, "an unknown-option error showed a secret");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(bytes), size);
  check_duration_text(text);
  check_secret_never_shown(text);

  auto url = bq::broker_url::parse(text);
  if (!url) {
    FUZZ_CHECK(url.code() == bq::condition::invalid_argument,
               "URL refusal must be invalid_argument");
    return 0;
  }
  const bq::broker_url& u = *url;
  FUZZ_CHECK(!u.scheme.empty(), "empty scheme accepted");
  for (char c : u.scheme) FUZZ_CHECK(!(c >= 'A' && c <= 'Z'), "scheme not lower-cased");
  FUZZ_CHECK(!u.port || *u.port != 0, "port 0 accepted");
  FUZZ_CHECK(u.path.empty() || u.path.front() == '/', "path without its leading '/'");
  std::string hosts = u.host;
  for (const auto& [h, p] : u.more_hosts) {
    FUZZ_CHECK(!h.empty(), "an empty host in a host list accepted");
    FUZZ_CHECK(!p || *p != 0, "port 0 accepted in a host list");
    hosts += ',' + h + (p ? ':' + std::to_string(*p) : std::string());
  }
  FUZZ_CHECK(u.location() == hosts + u.path, "location() is not the host list + path");
  (void)u.redacted();

  const std::string again_text = serialise(u);
  auto again = bq::broker_url::parse(again_text);
  FUZZ_CHECK(again.has_value(), "a re-serialised URL does not parse");
  FUZZ_CHECK(same(*again, u), "a re-serialised URL parses to other components");
  FUZZ_CHECK(again->redacted() == u.redacted(), "redacted() differs for equal URLs");

  std::size_t keys = 0;
  for (const auto& [key, value] : u.query) {
    if (++keys > 8) break;  // bound the work per input
    check_duration_text(value);
    check_getters(u, key, value);
  }

#if defined(BABELQUEUE_FUZZ_WITH_REDIS)
  check_redis(u);
#endif
#if defined(BABELQUEUE_FUZZ_WITH_SQLITE)
  check_sqlite(u);
#endif
  return 0;
}
