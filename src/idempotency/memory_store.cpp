// The in-process reference seen-set with the claim extension (store.hpp).
#include <babelqueue/idempotency/error.hpp>
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
  // Committing ends the in-flight claim: the id is now guarded by its committed mark.
  if (auto it = claims_.find(id); it != claims_.end()) claims_.erase(it);
  return {};
}

result<void> memory_store::forget(std::string_view id) {
  std::lock_guard lock(mutex_);
  if (auto it = ids_.find(id); it != ids_.end()) ids_.erase(it);
  return {};
}

result<bool> memory_store::claim(std::string_view id, std::chrono::milliseconds ttl) {
  if (ttl <= std::chrono::milliseconds::zero()) {
    return fail(errc::invalid_argument, "idempotency claim: the ttl must be positive");
  }
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex_);
  if (ids_.find(id) != ids_.end()) return false;  // committed: nothing to claim
  auto it = claims_.find(id);
  if (it != claims_.end() && it->second > now) return false;  // another worker's live claim
  // Absent, or expired (its worker crashed or overran its TTL): this caller takes it.
  if (it == claims_.end()) {
    claims_.emplace(std::string(id), now + ttl);
  } else {
    it->second = now + ttl;
  }
  return true;
}

result<void> memory_store::release(std::string_view id) {
  std::lock_guard lock(mutex_);
  if (auto it = claims_.find(id); it != claims_.end()) claims_.erase(it);
  return {};
}

std::size_t memory_store::size() const {
  std::lock_guard lock(mutex_);
  return ids_.size();
}

std::size_t memory_store::claims() const {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex_);
  std::size_t live = 0;
  for (const auto& [id, until] : claims_) live += until > now ? 1 : 0;
  return live;
}

}  // namespace idempotency
}  // namespace v1
}  // namespace babelqueue
