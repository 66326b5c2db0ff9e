#pragma once
// The Sentinel and WAIT parts of the redis options: `redis+sentinel://` / `rediss+sentinel://`
// URLs and their checks, kept apart from options.cpp (which calls these) so that the plain
// `redis://` parsing stays as it is.
//
//   redis+sentinel://[[user]:password@]host[:port][,host[:port]...]/<master-name>[/db]?...
//
// The host list is the Sentinels (port 26379 when omitted); the userinfo is the data nodes'
// AUTH, `sentinel_username`/`sentinel_password` the Sentinels'.
//
// Thread-safety: pure functions.

#include <babelqueue/redis/redis_transport.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/runtime/url.hpp>

namespace babelqueue::inline v1::redis::detail {

/// Whether `scheme` is `redis+sentinel` or `rediss+sentinel`.
bool is_sentinel_scheme(std::string_view scheme) noexcept;

/// Sentinel endpoints, master name and db from the URL's host list and path.
/// transport_errc::invalid_argument on an empty master name or a bad db.
result<void> read_sentinel_location(const broker_url& url, options& o);

/// The query keys sentinel_username / sentinel_password (Sentinel schemes only) and
/// wait_replicas / wait_timeout (every scheme).
result<void> read_sentinel_query(query_options& q, options& o, bool sentinel_scheme);

/// transport_errc::invalid_argument naming the first unusable Sentinel or WAIT option:
/// an empty master name or Sentinel host, Sentinel port 0, master_name/sentinel_* set without
/// Sentinels, wait_replicas outside 0..64, wait_timeout ≤ 0 or not below command_timeout.
result<void> validate_sentinel(const options& o);

}  // namespace babelqueue::inline v1::redis::detail
