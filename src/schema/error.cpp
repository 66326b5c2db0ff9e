// The "babelqueue.schema" error category.
#include "core/table_category.hpp"

#include <babelqueue/schema/error.hpp>

namespace babelqueue {
inline namespace v1 {
namespace schema {
namespace {

using babelqueue::detail::entry;
constexpr babelqueue::detail::category_entry k_entries[] = {
    entry(errc::invalid_payload, "invalid_payload"),
    entry(errc::invalid_schema, "invalid_schema", condition::invalid_argument),
    entry(errc::invalid_registry, "invalid_registry", condition::invalid_argument),
    entry(errc::io, "io", condition::io),
};
constinit const babelqueue::detail::table_category k_category{"babelqueue.schema", k_entries};

}  // namespace

const std::error_category& category() noexcept { return k_category; }

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
