// redis:// URL → options (1:1 with the query keys; see redis_transport.hpp), and the one
// validation of options (options.hpp) shared with redis_transport::open().
#include "redis/options.hpp"

#include "core/propagate.hpp"
#include "redis/sentinel_options.hpp"
#include "runtime/binding_support.hpp"

#include <babelqueue/redis/redis_transport.hpp>

#include <algorithm>
#include <charconv>

namespace babelqueue::inline v1::redis {

namespace {

result<void> positive(std::string_view key, std::chrono::milliseconds v) {
  if (v.count() <= 0) {
    return fail(transport_errc::invalid_argument,
                "redis option " + std::string(key) + " must be > 0");
  }
  return {};
}

result<void> within(std::string_view key, std::int64_t v, std::int64_t min, std::int64_t max) {
  if (v < min || v > max) {
    return fail(transport_errc::invalid_argument,
                "redis option " + std::string(key) + " must be " + std::to_string(min) + ".." +
                    std::to_string(max) + " (got " + std::to_string(v) + ")");
  }
  return {};
}

}  // namespace

namespace detail {

result<void> validate(const options& o) {
  if (o.host.empty())
    return fail(transport_errc::invalid_argument, "redis option host must not be empty");
  if (o.port == 0)
    return fail(transport_errc::invalid_argument, "redis option port must be 1..65535");
  if (auto r = positive("connect_timeout", o.connect_timeout); !r) return r;
  if (auto r = positive("command_timeout", o.command_timeout); !r) return r;
  if (auto r = positive("reconnect_backoff_min", o.reconnect_backoff_min); !r) return r;
  if (o.reconnect_backoff_max < o.reconnect_backoff_min) {
    return fail(transport_errc::invalid_argument,
                "redis option reconnect_backoff_max must be >= reconnect_backoff_min");
  }
  if (auto r = within("max_pending_acks", o.max_pending_acks, 1, 100000); !r) return r;
  if (auto r = within("prefetch", o.prefetch, 1, 255); !r) return r;
  if (o.prefetch > 1 && !o.track_reservations) {
    return fail(transport_errc::invalid_argument,
                "redis option prefetch > 1 needs track_reservations=true");
  }
  if (o.retry_after && o.retry_after->count() < 0) {
    return fail(transport_errc::invalid_argument,
                "redis option retry_after must be >= 0 (or never)");
  }
  if (auto r = within("db (the URL path /N)", o.db, 0, 1'000'000); !r) return r;
  if (o.reclaim_after.count() < 0) {
    return fail(transport_errc::invalid_argument, "redis option reclaim_after must be >= 0");
  }
  if (o.reclaim_after.count() > 0 && o.laravel && !o.retry_after) {
    return fail(transport_errc::invalid_argument,
                "redis option reclaim_after needs a reservation age, which laravel=1 with "
                "retry_after=never does not keep");
  }
  if (o.processing_suffix.empty()) {
    return fail(transport_errc::invalid_argument,
                "redis option processing_suffix must not be empty");
  }
  if (o.migration_batch == 0 || o.migration_batch < -1) {
    return fail(transport_errc::invalid_argument,
                "redis option migration_batch must be -1 (all) or >= 1 (got " +
                    std::to_string(o.migration_batch) + ")");
  }
  if (o.laravel && o.prefetch > 1) {
    return fail(transport_errc::invalid_argument,
                "redis option prefetch > 1 is not supported with laravel=1 (Laravel's pop "
                "reserves one job per call)");
  }
  if (auto r = babelqueue::detail::validate_tls_options(o, "redis", "rediss"); !r) return r;
  if (!o.cluster && !o.cluster_seeds.empty()) {
    return fail(transport_errc::invalid_argument,
                "redis takes one host, not a list, unless cluster=1 (the hosts are then the "
                "cluster's seed nodes)");
  }
  if (o.cluster && o.db != 0) {
    return fail(transport_errc::invalid_argument,
                "redis cluster=1 has database 0 only (got /" + std::to_string(o.db) + ")");
  }
  for (const auto& [host, port] : o.cluster_seeds) {
    if (host.empty() || port == 0) {
      return fail(transport_errc::invalid_argument,
                  "redis cluster seed nodes need a host and port");
    }
  }
  if (o.cluster && !o.sentinels.empty()) {
    return fail(
        transport_errc::invalid_argument,
        "redis cluster=1 and Sentinels exclude each other (a cluster fails over by itself)");
  }
  return validate_sentinel(o);
}

}  // namespace detail

result<options> options_from_url(const broker_url& url) {
  options o;
  const bool sentinel = detail::is_sentinel_scheme(url.scheme);
  if (!sentinel && url.scheme != "redis" && url.scheme != "rediss") {
    return fail(transport_errc::invalid_argument,
                "not a redis://, rediss://, redis+sentinel:// or rediss+sentinel:// URL (scheme '" +
                    url.scheme + "')");
  }
  o.tls = url.scheme == "rediss" || url.scheme == "rediss+sentinel";
  if (sentinel) {
    BABELQUEUE_TRY(detail::read_sentinel_location(url, o));
  } else if (!url.host.empty()) {
    o.host = url.host;
  }
  if (url.port && !sentinel) o.port = *url.port;
  o.username = url.user;
  o.password = url.password;
  if (!sentinel && !url.path.empty() && url.path != "/") {
    std::string_view db = std::string_view(url.path).substr(1);
    std::int64_t n = -1;
    auto [p, ec] = std::from_chars(db.data(), db.data() + db.size(), n);
    if (ec != std::errc() || p != db.data() + db.size() || db.empty()) {
      return fail(transport_errc::invalid_argument,
                  "redis URL path must be a database number (/0, /1, …), got '" + url.path + "'");
    }
    o.db = n;
  }

  query_options q(url);
  BABELQUEUE_TRY(q.get("connect_timeout", o.connect_timeout));
  BABELQUEUE_TRY(q.get("command_timeout", o.command_timeout));
  BABELQUEUE_TRY(q.get("reclaim_after", o.reclaim_after));
  BABELQUEUE_TRY(q.get("processing_suffix", o.processing_suffix));
  BABELQUEUE_TRY(q.get("track_reservations", o.track_reservations));
  std::string retry_after;
  BABELQUEUE_TRY(q.get("retry_after", retry_after));
  if (!retry_after.empty()) {
    if (retry_after == "never" || retry_after == "none" || retry_after == "null") {
      o.retry_after.reset();
    } else {
      // A bare number is whole seconds, the unit of the Python SDK's `retry_after=90` (and of
      // the score it becomes), so a peer's URL means the same here.
      const bool bare = retry_after.find_first_not_of("0123456789") == std::string::npos;
      auto d = parse_duration(bare ? retry_after + "s" : retry_after);
      if (!d) {
        return fail(
            transport_errc::invalid_argument,
            "redis option retry_after must be a duration (90s) or 'never': " + d.error().message);
      }
      o.retry_after = std::chrono::duration_cast<std::chrono::seconds>(*d);
    }
  }
  BABELQUEUE_TRY(q.get("pipeline_acks", o.pipeline_acks));
  BABELQUEUE_TRY(q.get("cluster", o.cluster));
  if (!sentinel) {  // a Sentinel URL's host list is its Sentinels (read above)
    for (const auto& [host, port] : url.more_hosts)
      o.cluster_seeds.emplace_back(host, port.value_or(6379));
  }
  BABELQUEUE_TRY(q.get("laravel", o.laravel));
  bool laravel_compat = false;  // the Python SDK's other spelling of `laravel`
  BABELQUEUE_TRY(q.get("laravel_compat", laravel_compat));
  o.laravel = o.laravel || laravel_compat;
  BABELQUEUE_TRY(q.get("prefix", o.prefix));
  if (o.prefix.empty()) o.prefix = options{}.prefix;  // `prefix=` keeps the default (Python)
  BABELQUEUE_TRY(q.get("migration_batch", o.migration_batch));
  // Ranges are validate()'s, below: the same rule and message as for options built in code.
  BABELQUEUE_TRY(q.get("max_pending_acks", o.max_pending_acks));
  BABELQUEUE_TRY(q.get("prefetch", o.prefetch));
  BABELQUEUE_TRY(q.get("reconnect_backoff_min", o.reconnect_backoff_min));
  BABELQUEUE_TRY(q.get("reconnect_backoff_max", o.reconnect_backoff_max));
  BABELQUEUE_TRY(babelqueue::detail::read_tls_options(url, q, o, "redis", "rediss"));
  BABELQUEUE_TRY(detail::read_sentinel_query(q, o, sentinel));
  BABELQUEUE_TRY(q.finish(url.scheme));

  BABELQUEUE_TRY(detail::validate(o));
  return o;
}

}  // namespace babelqueue::inline v1::redis
