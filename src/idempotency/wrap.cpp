// The idempotent handler wrapper (wrap.hpp): the spec's decision order.
#include <babelqueue/error.hpp>
#include <babelqueue/idempotency/error.hpp>
#include <babelqueue/idempotency/wrap.hpp>

#include <utility>

namespace babelqueue {
inline namespace v1 {
namespace idempotency {

handler wrap(std::shared_ptr<store> seen_set, handler inner, wrap_options options) {
  if (!seen_set) throw_invalid_argument("idempotency::wrap: the store is null");
  if (!inner) throw_invalid_argument("idempotency::wrap: the handler is empty");
  return [seen_set = std::move(seen_set), inner = std::move(inner), options](message& msg) {
    const std::string_view id = msg.id();  // empty: absent, not a string, or ""
    if (id.empty()) {
      inner(msg);  // fail-open: a message without a key is never dropped
      return;
    }
    auto already = seen_set->seen(id);
    if (!already) throw babelqueue::error(already.error());
    if (*already) return;           // the effect happened: ack without running it again
    inner(msg);                     // a throw propagates; the id stays unmarked
    if (!options.remember) return;  // transactional mode: the handler committed the mark
    if (auto marked = seen_set->remember(id); !marked) throw babelqueue::error(marked.error());
  };
}

}  // namespace idempotency
}  // namespace v1
}  // namespace babelqueue
