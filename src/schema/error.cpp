// The "babelqueue.schema" error category.
#include <babelqueue/schema/error.hpp>

namespace babelqueue {
inline namespace v1 {
namespace schema {
namespace {

class schema_category final : public babelqueue::error_category_base {
 public:
  const char* name() const noexcept override { return "babelqueue.schema"; }
  std::string_view reason(int value) const noexcept override {
    switch (static_cast<errc>(value)) {
      case errc::invalid_payload: return "invalid_payload";
      case errc::invalid_schema: return "invalid_schema";
      case errc::invalid_registry: return "invalid_registry";
      case errc::io: return "io";
    }
    return value == 0 ? "ok" : "unknown";
  }
  int condition_of(int value) const noexcept override {
    switch (static_cast<errc>(value)) {
      case errc::invalid_schema:
      case errc::invalid_registry: return static_cast<int>(condition::invalid_argument);
      case errc::io: return static_cast<int>(condition::io);
      case errc::invalid_payload: return 0;
    }
    return 0;
  }
};

}  // namespace

const std::error_category& category() noexcept {
  static const schema_category instance;
  return instance;
}

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
