// The core and condition categories, reason names, is_transient().
#include <babelqueue/error.hpp>

namespace babelqueue {
inline namespace v1 {
namespace {

class core_category_impl final : public error_category_base {
 public:
  const char* name() const noexcept override { return "babelqueue.core"; }
  std::string_view reason(int value) const noexcept override {
    switch (static_cast<errc>(value)) {
      case errc::ok:
        return "ok";
      case errc::malformed_json:
        return "malformed_json";
      case errc::missing_urn:
        return "missing_urn";
      case errc::missing_meta:
        return "missing_meta";
      case errc::unsupported_schema_version:
        return "unsupported_schema_version";
      case errc::invalid_data:
        return "invalid_data";
      case errc::missing_trace_id:
        return "missing_trace_id";
      case errc::invalid_attempts:
        return "invalid_attempts";
      case errc::empty_urn:
        return "empty_urn";
      case errc::invalid_utf8:
        return "invalid_utf8";
      case errc::non_finite_number:
        return "non_finite_number";
      case errc::forbidden_key:
        return "forbidden_key";
      case errc::number_out_of_range:
        return "number_out_of_range";
      case errc::invalid_argument:
        return "invalid_argument";
    }
    return "unknown";
  }
  int condition_of(int value) const noexcept override {
    if (value >= static_cast<int>(errc::malformed_json) &&
        value <= static_cast<int>(errc::invalid_attempts)) {
      return static_cast<int>(condition::rejected);
    }
    if (value == static_cast<int>(errc::empty_urn) ||
        value == static_cast<int>(errc::invalid_argument)) {
      return static_cast<int>(condition::invalid_argument);
    }
    return 0;
  }
};

class condition_category_impl final : public error_category_base {
 public:
  const char* name() const noexcept override { return "babelqueue"; }
  std::string_view reason(int value) const noexcept override {
    switch (static_cast<condition>(value)) {
      case condition::rejected:
        return "rejected";
      case condition::invalid_argument:
        return "invalid_argument";
      case condition::unavailable:
        return "unavailable";
      case condition::timeout:
        return "timeout";
      case condition::permission:
        return "permission";
      case condition::not_found:
        return "not_found";
      case condition::too_large:
        return "too_large";
      case condition::not_supported:
        return "not_supported";
      case condition::closed:
        return "closed";
      case condition::io:
        return "io";
    }
    return "unknown";
  }
  std::error_condition default_error_condition(int value) const noexcept override {
    return {value, *this};
  }
};

std::string with_path(const error_info& info) {
  std::string out(info.reason());
  out += ": ";
  out += info.message;
  if (!info.path.empty()) {
    out += " (at ";
    out += info.path;
    out += ')';
  }
  return out;
}

}  // namespace

std::error_condition error_category_base::default_error_condition(int value) const noexcept {
  const int c = condition_of(value);
  if (c != 0) return {c, condition_category()};
  return {value, *this};
}

// Constant-initialized at namespace scope, so a call is a plain address load: every
// default error_info (and so every successful result) asks for the core category, and a
// function-local static would pay its guard on each of those.
namespace {
constinit const core_category_impl k_core_category{};
constinit const condition_category_impl k_condition_category{};
}  // namespace

const std::error_category& core_category() noexcept { return k_core_category; }
const std::error_category& condition_category() noexcept { return k_condition_category; }

std::string_view reason(const std::error_code& code) noexcept {
  if (const auto* ours = dynamic_cast<const error_category_base*>(&code.category())) {
    return ours->reason(code.value());
  }
  return code ? "unknown" : "ok";
}

std::string_view reason(errc e) noexcept { return reason(make_error_code(e)); }

bool is_transient(const std::error_code& code) noexcept {
  // On the portable conditions, so that every babelqueue category (a component's own, or a
  // user's on error_category_base) is asked the same question.
  return code == condition::unavailable || code == condition::timeout || code == condition::io;
}

error::error(error_info info)
    : std::system_error(info.code), what_(with_path(info)), info_(std::move(info)) {}

}  // namespace v1
}  // namespace babelqueue
