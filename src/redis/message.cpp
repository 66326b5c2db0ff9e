// The envelope and its headers <-> what Redis stores (message.hpp).
#include "redis/message.hpp"

#include <babelqueue/bindings/redis.hpp>

#include <utility>

namespace babelqueue::inline v1::redis::detail {

namespace binding = babelqueue::bindings::redis;

// The value to store for a body with (non-empty) headers. A body that is not valid UTF-8
// (a poison message being dead-lettered as its original bytes) cannot travel inside the JSON
// frame; it is stored bare — its exact bytes matter more than the informational headers —
// and this is the only case where headers are dropped.
result<std::string> framed_value(std::string_view body, const headers& hdrs) {
  auto v = binding::stored_value(body, hdrs);
  if (!v && v.code() == errc::invalid_utf8) {
    auto bare = binding::stored_value(body);
    if (bare) return bare;
  }
  return v;
}

received_message deliver(const settlement_owner& owner, reservation_ptr res, bool laravel) {
  received_message m;
  if (laravel) {
    m.body = res->job;  // the job as popped; `raw` (its :reserved member) is only the handle
  } else {
    auto un = binding::unframe(res->raw);
    m.body = std::move(un.body);
    m.hdrs = headers(un.hdrs.begin(), un.hdrs.end());
  }
  m.queue = res->queue;
  m.handle = owner.issue(std::move(res));
  return m;
}

}  // namespace babelqueue::inline v1::redis::detail
