// The "babelqueue.idempotency" error category.
#include "core/table_category.hpp"

#include <babelqueue/idempotency/error.hpp>

namespace babelqueue {
inline namespace v1 {
namespace idempotency {
namespace {

using detail::entry;
constexpr detail::category_entry k_entries[] = {
    entry(errc::ok, "ok"),
    entry(errc::invalid_argument, "invalid_argument", condition::invalid_argument),
    entry(errc::unavailable, "unavailable", condition::unavailable),
    entry(errc::backend, "backend"),
    entry(errc::claim_held, "claim_held"),
};
constinit const detail::table_category k_category{"babelqueue.idempotency", k_entries};

}  // namespace

const std::error_category& category() noexcept { return k_category; }

}  // namespace idempotency
}  // namespace v1
}  // namespace babelqueue
