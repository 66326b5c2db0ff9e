// Fuzz target: what the redis:// transport reads from a server it does not trust (src/redis/;
// target babelqueue::redis). The first byte picks an operation — CLUSTER SLOTS (the cluster
// topology), the owned and the Laravel reserving scripts, recover (both layouts), LRANGE,
// LLEN, publish — the rest is raw RESP bytes. They go through hiredis' own reader, as the
// connection reads them, and each reply, in command order, through interpret() and the
// operation's finish() exactly as engine::run() drives a round; every error reply is also
// read as a cluster redirect and as a Sentinel failover reply.
//
// Invariants:
//  - nothing crashes, hangs or throws: an unexpected reply is a typed error;
//  - no reply header makes the client allocate more than the reader's bound
//    (reply_limits.hpp; libFuzzer's malloc limit catches it: it found `*919999996`);
//  - a slot range read from CLUSTER SLOTS lies within 0..16383, first <= last, port > 0;
//  - a redirect read from MOVED/ASK names a slot within 0..16383.
#include "fuzz_check.hpp"
#include "redis/cluster_topology.hpp"
#include "redis/laravel_operations.hpp"
#include "redis/operations.hpp"
#include "redis/reply_limits.hpp"
#include "redis/sentinel.hpp"

#include <hiredis/hiredis.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rd = babelqueue::redis::detail;
using namespace std::chrono_literals;

namespace {

struct reader_deleter {
  void operator()(redisReader* r) const noexcept { redisReaderFree(r); }
};

// Feeds `resp` to hiredis and hands `op` one reply per command of its request, as a round
// does; then undo() (an incomplete or broken round) or finish().
void drive(rd::operation& op, std::string_view resp) {
  rd::request req;
  const std::array<std::string, 16> shas{};
  op.compose(req, rd::script_shas(shas.data(), shas.size()));
  std::unique_ptr<redisReader, reader_deleter> reader(redisReaderCreate());
  if (!reader) return;
  rd::bound_reply_sizes(reader.get());  // as the connection's reader
  if (redisReaderFeed(reader.get(), resp.data(), resp.size()) != REDIS_OK) return;
  rd::round_outcome out;
  for (std::size_t i = 0; i < req.size(); ++i) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader.get(), &raw) != REDIS_OK || raw == nullptr) {
      op.undo();  // a protocol error or too few replies: the round did not complete
      return;
    }
    std::unique_ptr<redisReply, void (*)(void*)> reply(static_cast<redisReply*>(raw),
                                                       freeReplyObject);
    if (reply->type == REDIS_REPLY_ERROR) {
      const std::string_view text(reply->str, reply->len);
      if (auto redirect = rd::parse_redirect(text)) {
        FUZZ_CHECK(redirect->slot < 16384, "a redirect slot out of range");
      }
      (void)rd::is_failover_reply(text);
    }
    rd::interpret(op, req.meta(i), *reply, out);
  }
  if (out.noscript) {
    op.undo();
    return;
  }
  (void)op.finish(out.error);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view resp(reinterpret_cast<const char*>(data) + 1, size - 1);
  babelqueue::redis::options opts;
  rd::transport_state st(opts);
  rd::laravel_context lc(st, opts);
  const auto later = rd::clock::now() + 1h;
  switch (data[0] % 8) {
    case 0: {
      rd::cluster_slots_op op;
      drive(op, resp);
      for (const auto& r : op.ranges) {
        FUZZ_CHECK(r.first <= r.last && r.last < 16384, "a slot range out of order or range");
        FUZZ_CHECK(r.primary.port > 0, "a slot range without a port");
      }
      break;
    }
    case 1: {
      rd::reserve_op op(st, "q", later);
      drive(op, resp);
      break;
    }
    case 2: {
      rd::laravel_reserve_op op(lc, "q", later);
      drive(op, resp);
      break;
    }
    case 3: {
      rd::recover_op op(st, "q", 1000ms);
      drive(op, resp);
      break;
    }
    case 4: {
      rd::laravel_recover_op op(lc, "q", 1000ms);
      drive(op, resp);
      break;
    }
    case 5: {
      rd::range_op op("q", 0, 9);
      drive(op, resp);
      break;
    }
    case 6: {
      rd::length_op op("q");
      drive(op, resp);
      break;
    }
    default: {
      const std::string_view values[] = {"a", "b"};
      rd::publish_op op(st, "q", values);
      drive(op, resp);
      break;
    }
  }
  return 0;
}
