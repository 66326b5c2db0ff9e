// The store contract's defaults (store.hpp): what a store written before delivery times
// existed answers, and the one clock every store and the relay read.
#include <babelqueue/outbox/error.hpp>
#include <babelqueue/outbox/store.hpp>

namespace babelqueue {
inline namespace v1 {
namespace outbox {

due_time due_now() noexcept {
  return std::chrono::floor<std::chrono::milliseconds>(std::chrono::system_clock::now());
}

result<std::string> store::save_at(std::string_view body, std::string_view queue,
                                   due_time deliver_at) {
  (void)body;
  (void)queue;
  (void)deliver_at;
  return fail(errc::not_supported,
              "outbox: this store cannot keep a delivery time; nothing was saved");
}

result<std::vector<record>> store::fetch_due(std::size_t limit, due_time until) {
  (void)until;
  return fetch_unpublished(limit);
}

}  // namespace outbox
}  // namespace v1
}  // namespace babelqueue
