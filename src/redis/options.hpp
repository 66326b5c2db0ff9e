#pragma once
// The one check of redis options, whichever way they came: options_from_url() (after
// parsing the URL) and redis_transport::open() (options built in code) both call it, so an
// option is refused by the same rule with the same message either way.
#include <babelqueue/redis/redis_transport.hpp>
#include <babelqueue/result.hpp>

namespace babelqueue::inline v1::redis::detail {

/// transport_errc::invalid_argument naming the first unusable option: an empty host, port 0, a
/// timeout or backoff ≤ 0, backoff max < min, max_pending_acks outside 1..100000, prefetch
/// outside 1..255 or > 1 without track_reservations, a negative retry_after, a db outside
/// 0..1000000, an empty processing_suffix, a client certificate without its key (or the
/// other way round), or tls_* settings without tls.
result<void> validate(const options& o);

}  // namespace babelqueue::inline v1::redis::detail
