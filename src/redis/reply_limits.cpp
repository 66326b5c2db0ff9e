// A bound on the reply arrays hiredis allocates (reply_limits.hpp).
#include "redis/reply_limits.hpp"

#include <hiredis/hiredis.h>

namespace babelqueue::inline v1::redis::detail {
namespace {

// hiredis' own reply functions: the table a plain reader is made with (a static of the
// library, valid after the reader that showed it is freed).
const redisReplyObjectFunctions* hiredis_functions() noexcept {
  static const redisReplyObjectFunctions* const functions = [] {
    redisReader* probe = redisReaderCreate();
    const redisReplyObjectFunctions* f = probe == nullptr ? nullptr : probe->fn;
    if (probe != nullptr) redisReaderFree(probe);
    return f;
  }();
  return functions;
}

void* bounded_array(const redisReadTask* task, int elements) {
  if (elements > k_max_reply_elements) return nullptr;  // hiredis: a protocol error
  return hiredis_functions()->createArray(task, elements);
}

}  // namespace

void bound_reply_sizes(redisReader* reader) noexcept {
  if (reader == nullptr || hiredis_functions() == nullptr) return;
  static redisReplyObjectFunctions bounded = [] {
    redisReplyObjectFunctions f = *hiredis_functions();
    f.createArray = bounded_array;
    return f;
  }();
  reader->fn = &bounded;
}

}  // namespace babelqueue::inline v1::redis::detail
