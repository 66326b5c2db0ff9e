// The "babelqueue.gdpr" error category and the exception factory.
#include <babelqueue/gdpr/error.hpp>

namespace babelqueue {
inline namespace v1 {
namespace gdpr {
namespace {

class gdpr_category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "babelqueue.gdpr"; }
  std::string message(int code) const override {
    return std::string(reason(static_cast<errc>(code)));
  }
};

std::string describe(const error_info& info) {
  std::string text(reason(info.code));
  text += ": ";
  text += info.message;
  if (!info.path.empty()) {
    text += " (at ";
    text += info.path;
    text += ')';
  }
  return text;
}

}  // namespace

const std::error_category& category() noexcept {
  static const gdpr_category instance;
  return instance;
}

std::string_view reason(errc e) noexcept {
  switch (e) {
    case errc::ok:
      return "ok";
    case errc::invalid_key:
      return "invalid_key";
    case errc::malformed_ciphertext:
      return "malformed_ciphertext";
    case errc::decrypt_failed:
      return "decrypt_failed";
    case errc::not_json:
      return "not_json";
    case errc::encrypt_failed:
      return "encrypt_failed";
    case errc::invalid_schema:
      return "invalid_schema";
    case errc::invalid_argument:
      return "invalid_argument";
  }
  return "unknown";
}

error::error(error_info info)
    : std::system_error(make_error_code(info.code), describe(info)), info_(std::move(info)) {}

void throw_error(error_info info) {
  if (is_decrypt_error(info.code)) throw decrypt_error(std::move(info));
  throw error(std::move(info));
}

}  // namespace gdpr
}  // namespace v1
}  // namespace babelqueue
