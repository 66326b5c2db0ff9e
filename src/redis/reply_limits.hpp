#pragma once
// A bound on what a Redis server's reply can make this client allocate. hiredis 0.14 allocates
// a multi-bulk reply's element array as soon as it reads the header (`*<n>`), before a single
// element arrives, for any n up to INT_MAX: a broken or hostile server announcing
// `*919999996` makes the client calloc 7 GB (found by fuzz/fuzz_redis_replies.cpp). Bulk
// strings are not a concern: the reader buffers their bytes only as they arrive.
//
// The replies this transport reads are small (LRANGE pages, the scripts' short arrays,
// CLUSTER SLOTS); a reader given bound_reply_sizes() refuses an array of more than
// k_max_reply_elements elements, which hiredis reports as a protocol error ("Out of memory"):
// the connection is dropped and the call fails `unavailable` like any broken connection.
//
// Thread-safety: bound_reply_sizes() may be called from any thread (the table it installs
// is immutable once made).

struct redisReader;

namespace babelqueue::inline v1::redis::detail {

inline constexpr int k_max_reply_elements = 1 << 20;

/// Makes `reader` refuse arrays longer than k_max_reply_elements (otherwise hiredis' own
/// reply objects, unchanged).
void bound_reply_sizes(redisReader* reader) noexcept;

}  // namespace babelqueue::inline v1::redis::detail
