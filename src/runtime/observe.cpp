// The runtime's side of the observer seam (observe.hpp).
#include "runtime/observe.hpp"

namespace babelqueue {
inline namespace v1 {
namespace detail {
namespace {
std::atomic<std::uint64_t> formatted{0};
}  // namespace

std::uint64_t formatted_log_records() noexcept { return formatted.load(std::memory_order_relaxed); }
void count_formatted_log_record() noexcept { formatted.fetch_add(1, std::memory_order_relaxed); }

}  // namespace detail
}  // namespace v1
}  // namespace babelqueue
