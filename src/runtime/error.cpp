// The "babelqueue.runtime" and "babelqueue.transport" error categories (runtime/error.hpp).
#include "core/table_category.hpp"

#include <babelqueue/runtime/error.hpp>

namespace babelqueue {
inline namespace v1 {
namespace {

using detail::entry;

constexpr detail::category_entry k_runtime_entries[] = {
    entry(runtime_errc::invalid_argument, "invalid_argument", condition::invalid_argument),
    entry(runtime_errc::unknown_scheme, "unknown_scheme", condition::invalid_argument),
    entry(runtime_errc::already_running, "already_running", condition::invalid_argument),
    entry(runtime_errc::resource_exhausted, "resource_exhausted"),
    entry(runtime_errc::handler_failed, "handler_failed"),
    entry(runtime_errc::io, "io", condition::io),
};

constexpr detail::category_entry k_transport_entries[] = {
    entry(transport_errc::unavailable, "unavailable", condition::unavailable),
    entry(transport_errc::timeout, "timeout", condition::timeout),
    entry(transport_errc::refused, "refused"),
    entry(transport_errc::permission, "permission", condition::permission),
    entry(transport_errc::not_found, "not_found", condition::not_found),
    entry(transport_errc::too_large, "too_large", condition::too_large),
    entry(transport_errc::invalid_argument, "invalid_argument", condition::invalid_argument),
    entry(transport_errc::not_supported, "not_supported", condition::not_supported),
    entry(transport_errc::closed, "closed", condition::closed),
};

// Constant-initialized (table_category is constexpr): category() is an address load.
constinit const detail::table_category k_runtime_category{"babelqueue.runtime", k_runtime_entries};
constinit const detail::table_category k_transport_category{"babelqueue.transport",
                                                            k_transport_entries};

}  // namespace

const std::error_category& runtime_category() noexcept { return k_runtime_category; }
const std::error_category& transport_category() noexcept { return k_transport_category; }

}  // namespace v1
}  // namespace babelqueue
