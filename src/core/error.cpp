// The core, runtime, transport and condition categories, reason names, is_transient().
#include <babelqueue/error.hpp>

namespace babelqueue {
inline namespace v1 {
namespace {

class core_category_impl final : public error_category_base {
 public:
  const char* name() const noexcept override { return "babelqueue.core"; }
  std::string_view reason(int value) const noexcept override {
    switch (static_cast<errc>(value)) {
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

class runtime_category_impl final : public error_category_base {
 public:
  const char* name() const noexcept override { return "babelqueue.runtime"; }
  std::string_view reason(int value) const noexcept override {
    switch (static_cast<runtime_errc>(value)) {
      case runtime_errc::invalid_argument: return "invalid_argument";
      case runtime_errc::unknown_scheme: return "unknown_scheme";
      case runtime_errc::already_running: return "already_running";
      case runtime_errc::resource_exhausted: return "resource_exhausted";
      case runtime_errc::handler_failed: return "handler_failed";
      case runtime_errc::io: return "io";
    }
    return value == 0 ? "ok" : "unknown";
  }
  int condition_of(int value) const noexcept override {
    switch (static_cast<runtime_errc>(value)) {
      case runtime_errc::invalid_argument:
      case runtime_errc::unknown_scheme:
      case runtime_errc::already_running: return static_cast<int>(condition::invalid_argument);
      case runtime_errc::io: return static_cast<int>(condition::io);
      case runtime_errc::resource_exhausted:
      case runtime_errc::handler_failed: return 0;
    }
    return 0;
  }
};

class transport_category_impl final : public error_category_base {
 public:
  const char* name() const noexcept override { return "babelqueue.transport"; }
  std::string_view reason(int value) const noexcept override {
    switch (static_cast<transport_errc>(value)) {
      case transport_errc::unavailable: return "unavailable";
      case transport_errc::timeout: return "timeout";
      case transport_errc::refused: return "refused";
      case transport_errc::permission: return "permission";
      case transport_errc::not_found: return "not_found";
      case transport_errc::too_large: return "too_large";
      case transport_errc::invalid_argument: return "invalid_argument";
      case transport_errc::not_supported: return "not_supported";
      case transport_errc::closed: return "closed";
    }
    return value == 0 ? "ok" : "unknown";
  }
  int condition_of(int value) const noexcept override {
    switch (static_cast<transport_errc>(value)) {
      case transport_errc::unavailable: return static_cast<int>(condition::unavailable);
      case transport_errc::timeout: return static_cast<int>(condition::timeout);
      case transport_errc::refused: return 0;
      case transport_errc::permission: return static_cast<int>(condition::permission);
      case transport_errc::not_found: return static_cast<int>(condition::not_found);
      case transport_errc::too_large: return static_cast<int>(condition::too_large);
      case transport_errc::invalid_argument: return static_cast<int>(condition::invalid_argument);
      case transport_errc::not_supported: return static_cast<int>(condition::not_supported);
      case transport_errc::closed: return static_cast<int>(condition::closed);
    }
    return 0;
  }
};

class condition_category_impl final : public error_category_base {
 public:
  const char* name() const noexcept override { return "babelqueue"; }
  std::string_view reason(int value) const noexcept override {
    switch (static_cast<condition>(value)) {
      case condition::rejected: return "rejected";
      case condition::invalid_argument: return "invalid_argument";
      case condition::unavailable: return "unavailable";
      case condition::timeout: return "timeout";
      case condition::permission: return "permission";
      case condition::not_found: return "not_found";
      case condition::too_large: return "too_large";
      case condition::not_supported: return "not_supported";
      case condition::closed: return "closed";
      case condition::io: return "io";
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
constinit const runtime_category_impl k_runtime_category{};
constinit const transport_category_impl k_transport_category{};
constinit const condition_category_impl k_condition_category{};
}  // namespace

const std::error_category& core_category() noexcept { return k_core_category; }
const std::error_category& runtime_category() noexcept { return k_runtime_category; }
const std::error_category& transport_category() noexcept { return k_transport_category; }
const std::error_category& condition_category() noexcept { return k_condition_category; }

std::string_view reason(const std::error_code& code) noexcept {
  if (const auto* ours = dynamic_cast<const error_category_base*>(&code.category())) {
    return ours->reason(code.value());
  }
  return code ? "unknown" : "ok";
}

std::string_view reason(errc e) noexcept { return reason(make_error_code(e)); }

bool is_transient(const std::error_code& code) noexcept {
  return code == transport_errc::unavailable || code == transport_errc::timeout ||
         code == runtime_errc::io;
}

error::error(error_info info)
    : std::system_error(info.code), what_(with_path(info)), info_(std::move(info)) {}

}  // namespace v1
}  // namespace babelqueue
