#include <babelqueue/error.hpp>

namespace babelqueue {
inline namespace v1 {
namespace {

class babelqueue_category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "babelqueue"; }
  std::string message(int code) const override {
    return std::string(reason(static_cast<errc>(code)));
  }
};

}  // namespace

const std::error_category& category() noexcept {
  static const babelqueue_category instance;
  return instance;
}

std::string_view reason(errc e) noexcept {
  switch (e) {
    case errc::ok: return "ok";
    case errc::malformed_json: return "malformed_json";
    case errc::missing_urn: return "missing_urn";
    case errc::missing_meta: return "missing_meta";
    case errc::unsupported_schema_version: return "unsupported_schema_version";
    case errc::invalid_data: return "invalid_data";
    case errc::missing_trace_id: return "missing_trace_id";
    case errc::invalid_attempts: return "invalid_attempts";
    case errc::empty_urn: return "empty_urn";
    case errc::invalid_utf8: return "invalid_utf8";
    case errc::non_finite_number: return "non_finite_number";
    case errc::forbidden_key: return "forbidden_key";
    case errc::number_out_of_range: return "number_out_of_range";
    case errc::invalid_argument: return "invalid_argument";
    case errc::timeout: return "timeout";
    case errc::transport: return "transport";
    case errc::closed: return "closed";
    case errc::not_supported: return "not_supported";
    case errc::unknown_scheme: return "unknown_scheme";
    case errc::handler_failed: return "handler_failed";
    case errc::io: return "io";
  }
  return "unknown";
}

}  // namespace v1
}  // namespace babelqueue
