#pragma once
/// @file outbox/memory_store.hpp
/// @brief The in-process reference outbox store (wire-helpers §2.3): row ids `ob-1`,
/// `ob-2`, ... in insertion order (= oldest first), plus this SDK's parking and delivery
/// times (store.hpp).
/// Rows live as long as the store: for tests and for single-process relays whose
/// "transaction" is the process itself; production keeps rows in the business database.
/// @note Thread-safety: every member may be called from any thread (one mutex).

#include <babelqueue/export/outbox.hpp>
#include <babelqueue/outbox/store.hpp>

#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace outbox {

struct BABELQUEUE_OUTBOX_EXPORT memory_store_options {
  /// A row is parked when its publish failed this many times; 0 = never park (the peers'
  /// behaviour, which lets failing rows block newer ones).
  std::int64_t park_after = 5;
};

class BABELQUEUE_OUTBOX_EXPORT memory_store final : public store {
 public:
  explicit memory_store(memory_store_options options = {}) : options_(options) {}
  result<std::string> save(std::string_view body, std::string_view queue) override;
  result<std::string> save_at(std::string_view body, std::string_view queue,
                              due_time deliver_at) override;
  result<std::vector<record>> fetch_unpublished(std::size_t limit) override;
  result<std::vector<record>> fetch_due(std::size_t limit, due_time until) override;
  result<void> mark_published(std::span<const std::string> ids) override;
  result<void> mark_failed(std::string_view id, std::string_view reason) override;
  result<std::vector<record>> list(const list_options& options) override;
  result<std::size_t> retry(std::span<const std::string> ids) override;

 private:
  record* find(std::string_view id);
  result<std::string> insert(std::string_view body, std::string_view queue,
                             std::optional<due_time> deliver_at);

  memory_store_options options_;
  mutable std::mutex mutex_;
  std::vector<record> rows_;
  std::uint64_t next_ = 1;
};

}  // namespace outbox
}  // namespace v1
}  // namespace babelqueue
