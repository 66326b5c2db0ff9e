// The in-process reference seen-set (store.hpp).
#include <babelqueue/idempotency/store.hpp>

namespace babelqueue {
inline namespace v1 {
namespace idempotency {

result<bool> memory_store::seen(std::string_view id) {
  std::lock_guard lock(mutex_);
  return ids_.find(id) != ids_.end();
}

result<void> memory_store::remember(std::string_view id) {
  std::lock_guard lock(mutex_);
  ids_.emplace(id);
  return {};
}

result<void> memory_store::forget(std::string_view id) {
  std::lock_guard lock(mutex_);
  if (auto it = ids_.find(id); it != ids_.end()) ids_.erase(it);
  return {};
}

std::size_t memory_store::size() const {
  std::lock_guard lock(mutex_);
  return ids_.size();
}

}  // namespace idempotency
}  // namespace v1
}  // namespace babelqueue
