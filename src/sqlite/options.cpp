// sqlite:// URL → sqlite::options, 1:1 (query key = field name).
#include "sqlite/options.hpp"

#include "core/propagate.hpp"

#include <babelqueue/sqlite/sqlite_transport.hpp>

#include <chrono>
#include <string>

namespace babelqueue {
inline namespace v1 {
namespace sqlite {

result<options> options_from_url(const broker_url& url) {
  if (url.scheme != "sqlite") {
    return fail(transport_errc::invalid_argument, "not a sqlite:// URL: " + url.redacted());
  }
  if (!url.user.empty() || url.has_password || url.port) {
    return fail(transport_errc::invalid_argument,
                "sqlite:// takes a file path, not user, password or port: " + url.redacted());
  }
  options opts;
  opts.path = url.location();
  if (opts.path.empty()) {
    return fail(transport_errc::invalid_argument,
                "sqlite:// needs a file path, e.g. sqlite:///var/lib/app/queue.db or "
                "sqlite://queue.db");
  }
  if (opts.path == ":memory:") {
    // An in-memory database is private to its connection: each App worker (and every
    // other process) would see its own empty queue. memory:// is the in-process queue.
    return fail(transport_errc::invalid_argument,
                "sqlite:// needs a file; '" + opts.path +
                    "' is not shareable between transport instances (use memory:// instead)");
  }

  query_options q(url);
  BABELQUEUE_TRY(q.get("visibility_timeout", opts.visibility_timeout));
  BABELQUEUE_TRY(q.get("poll_interval", opts.poll_interval));
  BABELQUEUE_TRY(q.get("busy_timeout", opts.busy_timeout));
  BABELQUEUE_TRY(q.get("create", opts.create));
  std::string sync = "normal";
  BABELQUEUE_TRY(q.get("synchronous", sync));
  if (sync == "normal" || sync == "NORMAL") {
    opts.synchronous = synchronous_mode::normal;
  } else if (sync == "full" || sync == "FULL") {
    opts.synchronous = synchronous_mode::full;
  } else {
    return fail(transport_errc::invalid_argument,
                "sqlite option synchronous must be normal or full, got '" + sync + "'");
  }
  BABELQUEUE_TRY(q.finish("sqlite"));
  BABELQUEUE_TRY(detail::validate(opts));
  return opts;
}

}  // namespace sqlite
}  // namespace v1
}  // namespace babelqueue

namespace babelqueue::inline v1::sqlite::detail {
namespace {

using std::chrono::milliseconds;

// Upper bounds keep `now + timeout` far from int64 overflow and the busy timeout within
// SQLite's `int` milliseconds; they are far above any sensible value.
constexpr milliseconds max_visibility{std::chrono::hours(24 * 365)};
constexpr milliseconds max_poll{std::chrono::minutes(1)};
constexpr milliseconds max_busy{std::chrono::hours(1)};

result<void> check_range(std::string_view key, milliseconds value, milliseconds max) {
  if (value.count() <= 0 || value > max) {
    return fail(transport_errc::invalid_argument,
                "sqlite option " + std::string(key) +
                    " must be > 0 and <= " + std::to_string(max.count()) + "ms, got " +
                    std::to_string(value.count()) + "ms");
  }
  return {};
}

}  // namespace

// Validation shared by open(): options built in code skip the URL parser.
result<void> validate(const sqlite::options& opts) {
  if (opts.path.empty())
    return fail(transport_errc::invalid_argument, "sqlite: empty database path");
  if (opts.path == ":memory:") {
    return fail(transport_errc::invalid_argument,
                "sqlite: ':memory:' is not shareable between instances (use memory://)");
  }
  if (auto r = check_range("visibility_timeout", opts.visibility_timeout, max_visibility); !r) {
    return r;
  }
  if (auto r = check_range("poll_interval", opts.poll_interval, max_poll); !r) return r;
  return check_range("busy_timeout", opts.busy_timeout, max_busy);
}

}  // namespace babelqueue::inline v1::sqlite::detail
