// The "babelqueue.asb.auth" error category.
#include <babelqueue/asb/auth_error.hpp>

namespace babelqueue {
inline namespace v1 {
namespace asb {
namespace {

class auth_category_impl final : public babelqueue::error_category_base {
 public:
  const char* name() const noexcept override { return "babelqueue.asb.auth"; }
  std::string_view reason(int value) const noexcept override {
    switch (static_cast<auth_errc>(value)) {
      case auth_errc::ok:
        return "ok";
      case auth_errc::invalid_argument:
        return "invalid_argument";
      case auth_errc::crypto_failed:
        return "crypto_failed";
      case auth_errc::malformed:
        return "malformed";
      case auth_errc::missing_key:
        return "missing_key";
      case auth_errc::duplicate_key:
        return "duplicate_key";
      case auth_errc::unknown_key:
        return "unknown_key";
      case auth_errc::invalid_value:
        return "invalid_value";
      case auth_errc::conflicting_keys:
        return "conflicting_keys";
    }
    return "unknown";
  }
  int condition_of(int value) const noexcept override {
    switch (static_cast<auth_errc>(value)) {
      case auth_errc::ok:
      case auth_errc::crypto_failed:
        return 0;
      case auth_errc::invalid_argument:
      case auth_errc::malformed:
      case auth_errc::missing_key:
      case auth_errc::duplicate_key:
      case auth_errc::unknown_key:
      case auth_errc::invalid_value:
      case auth_errc::conflicting_keys:
        return static_cast<int>(condition::invalid_argument);
    }
    return 0;
  }
};

}  // namespace

const std::error_category& auth_category() noexcept {
  static const auth_category_impl instance;
  return instance;
}

}  // namespace asb
}  // namespace v1
}  // namespace babelqueue
