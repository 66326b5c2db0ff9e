// The "babelqueue.gdpr" error category.
#include <babelqueue/gdpr/error.hpp>

namespace babelqueue {
inline namespace v1 {
namespace gdpr {
namespace {

class gdpr_category final : public babelqueue::error_category_base {
 public:
  const char* name() const noexcept override { return "babelqueue.gdpr"; }
  std::string_view reason(int value) const noexcept override {
    switch (static_cast<errc>(value)) {
      case errc::ok: return "ok";
      case errc::invalid_key: return "invalid_key";
      case errc::malformed_ciphertext: return "malformed_ciphertext";
      case errc::decrypt_failed: return "decrypt_failed";
      case errc::not_json: return "not_json";
      case errc::encrypt_failed: return "encrypt_failed";
      case errc::invalid_schema: return "invalid_schema";
      case errc::invalid_argument: return "invalid_argument";
    }
    return "unknown";
  }
  int condition_of(int value) const noexcept override {
    switch (static_cast<errc>(value)) {
      case errc::invalid_key:
      case errc::invalid_schema:
      case errc::invalid_argument: return static_cast<int>(condition::invalid_argument);
      default: return 0;
    }
  }
};

}  // namespace

const std::error_category& category() noexcept {
  static const gdpr_category instance;
  return instance;
}

}  // namespace gdpr
}  // namespace v1
}  // namespace babelqueue
