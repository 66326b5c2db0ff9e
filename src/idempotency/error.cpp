// The "babelqueue.idempotency" error category.
#include <babelqueue/idempotency/error.hpp>

namespace babelqueue {
inline namespace v1 {
namespace idempotency {
namespace {

class idempotency_category final : public babelqueue::error_category_base {
 public:
  const char* name() const noexcept override { return "babelqueue.idempotency"; }
  std::string_view reason(int value) const noexcept override {
    switch (static_cast<errc>(value)) {
      case errc::ok:
        return "ok";
      case errc::invalid_argument:
        return "invalid_argument";
      case errc::unavailable:
        return "unavailable";
      case errc::backend:
        return "backend";
      case errc::claim_held:
        return "claim_held";
    }
    return "unknown";
  }
  int condition_of(int value) const noexcept override {
    switch (static_cast<errc>(value)) {
      case errc::invalid_argument:
        return static_cast<int>(condition::invalid_argument);
      case errc::unavailable:
        return static_cast<int>(condition::unavailable);
      default:
        return 0;
    }
  }
};

}  // namespace

const std::error_category& category() noexcept {
  static const idempotency_category instance;
  return instance;
}

}  // namespace idempotency
}  // namespace v1
}  // namespace babelqueue
