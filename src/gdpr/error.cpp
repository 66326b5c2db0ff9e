// The "babelqueue.gdpr" error category.
#include "core/table_category.hpp"

#include <babelqueue/gdpr/error.hpp>

namespace babelqueue {
inline namespace v1 {
namespace gdpr {
namespace {

using detail::entry;
constexpr detail::category_entry k_entries[] = {
    entry(errc::ok, "ok"),
    entry(errc::invalid_key, "invalid_key", condition::invalid_argument),
    entry(errc::malformed_ciphertext, "malformed_ciphertext"),
    entry(errc::decrypt_failed, "decrypt_failed"),
    entry(errc::not_json, "not_json"),
    entry(errc::encrypt_failed, "encrypt_failed"),
    entry(errc::invalid_schema, "invalid_schema", condition::invalid_argument),
    entry(errc::invalid_argument, "invalid_argument", condition::invalid_argument),
};
constinit const detail::table_category k_category{"babelqueue.gdpr", k_entries};

}  // namespace

const std::error_category& category() noexcept { return k_category; }

}  // namespace gdpr
}  // namespace v1
}  // namespace babelqueue
