// The "babelqueue.outbox" error category.
#include "core/table_category.hpp"

#include <babelqueue/outbox/error.hpp>

namespace babelqueue {
inline namespace v1 {
namespace outbox {
namespace {

using detail::entry;
constexpr detail::category_entry k_entries[] = {
    entry(errc::ok, "ok"),
    entry(errc::invalid_argument, "invalid_argument", condition::invalid_argument),
    entry(errc::unavailable, "unavailable", condition::unavailable),
    entry(errc::backend, "backend"),
    entry(errc::not_found, "not_found", condition::not_found),
    entry(errc::not_supported, "not_supported", condition::not_supported),
};
constinit const detail::table_category k_category{"babelqueue.outbox", k_entries};

}  // namespace

const std::error_category& category() noexcept { return k_category; }

}  // namespace outbox
}  // namespace v1
}  // namespace babelqueue
