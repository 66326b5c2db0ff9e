// The "babelqueue.outbox" error category.
#include <babelqueue/outbox/error.hpp>

namespace babelqueue {
inline namespace v1 {
namespace outbox {
namespace {

class outbox_category final : public babelqueue::error_category_base {
 public:
  const char* name() const noexcept override { return "babelqueue.outbox"; }
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
      case errc::not_found:
        return "not_found";
    }
    return "unknown";
  }
  int condition_of(int value) const noexcept override {
    switch (static_cast<errc>(value)) {
      case errc::invalid_argument:
        return static_cast<int>(condition::invalid_argument);
      case errc::unavailable:
        return static_cast<int>(condition::unavailable);
      case errc::not_found:
        return static_cast<int>(condition::not_found);
      default:
        return 0;
    }
  }
};

}  // namespace

const std::error_category& category() noexcept {
  static const outbox_category instance;
  return instance;
}

}  // namespace outbox
}  // namespace v1
}  // namespace babelqueue
