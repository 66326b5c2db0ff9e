// The process-wide owner ids of settlement handles (settlement_handle.hpp).
#include <babelqueue/runtime/settlement_handle.hpp>

#include <atomic>

namespace babelqueue::inline v1 {

std::uint64_t settlement_owner::next_id() noexcept {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace babelqueue::inline v1
