// The claiming wrapper (wrap.hpp): PHP's ClaimingDispatch order on a claiming_store.
#include <babelqueue/error.hpp>
#include <babelqueue/idempotency/error.hpp>
#include <babelqueue/idempotency/wrap.hpp>

#include <string>
#include <utility>

namespace babelqueue {
inline namespace v1 {
namespace idempotency {
namespace {

[[noreturn]] void parked(std::string_view id, std::chrono::milliseconds delay) {
  throw defer_delivery(delay, "Idempotency claim for message id '" + std::string(id) +
                                  "' is held by another worker; parking for redelivery.");
}

}  // namespace

handler wrap_claiming(std::shared_ptr<claiming_store> claims, handler inner,
                      claim_options options) {
  if (!claims) throw_invalid_argument("idempotency::wrap_claiming: the store is null");
  if (!inner) throw_invalid_argument("idempotency::wrap_claiming: the handler is empty");
  if (options.ttl <= std::chrono::milliseconds::zero()) {
    throw_invalid_argument("idempotency::wrap_claiming: the claim ttl must be positive");
  }
  if (options.park_delay <= std::chrono::milliseconds::zero()) {
    throw_invalid_argument("idempotency::wrap_claiming: the park delay must be positive");
  }
  return [claims = std::move(claims), inner = std::move(inner), options](message& msg) {
    const std::string_view id = msg.id();
    if (id.empty()) {
      inner(msg);  // fail-open, as the plain wrap
      return;
    }
    auto already = claims->seen(id);
    if (!already) throw babelqueue::error(already.error());
    if (*already) return;
    auto won = claims->claim(id, options.ttl);
    if (!won) throw babelqueue::error(won.error());
    if (!*won) {
      // Lost the claim: the holder may have committed between our seen() and claim().
      auto now_seen = claims->seen(id);
      if (!now_seen) throw babelqueue::error(now_seen.error());
      if (*now_seen) return;
      parked(id, options.park_delay);
    }
    try {
      inner(msg);
    } catch (...) {
      // Give the id back at once so the retry can claim it; a release error must not hide
      // the handler's own failure (the claim then simply expires after its TTL).
      (void)claims->release(id);
      throw;
    }
    if (auto marked = claims->remember(id); !marked) {
      (void)claims->release(id);
      throw babelqueue::error(marked.error());
    }
  };
}

}  // namespace idempotency
}  // namespace v1
}  // namespace babelqueue
