#pragma once
// An error category described by a table: its name and, per value, the reason name and the
// portable condition. The components' categories (gdpr, schema, idempotency, outbox) are
// each one constant of this type, so the pair of switches every category needs is written
// once. Constant-initialized: category() is an address, with no guarded static.
//
// Private and header-only (not installed): components include it through their private
// `-I src`, as they include core/shared_helpers.hpp.

#include <babelqueue/error.hpp>

#include <cstddef>
#include <span>
#include <string_view>

namespace babelqueue::inline v1::detail {

struct category_entry {
  int value;
  std::string_view reason;
  int condition = 0;  // a babelqueue::condition, or 0 for none
};

/// The table entry of an enumerator: `entry(errc::io, "io", condition::io)`.
template <class Enum>
constexpr category_entry entry(Enum value, std::string_view reason, condition c) noexcept {
  return {static_cast<int>(value), reason, static_cast<int>(c)};
}
template <class Enum>
constexpr category_entry entry(Enum value, std::string_view reason) noexcept {
  return {static_cast<int>(value), reason, 0};
}

class table_category final : public error_category_base {
 public:
  constexpr table_category(const char* name, std::span<const category_entry> entries) noexcept
      : name_(name), entries_(entries) {}

  const char* name() const noexcept override { return name_; }
  std::string_view reason(int value) const noexcept override {
    for (const auto& e : entries_) {
      if (e.value == value) return e.reason;
    }
    return value == 0 ? "ok" : "unknown";
  }
  int condition_of(int value) const noexcept override {
    for (const auto& e : entries_) {
      if (e.value == value) return e.condition;
    }
    return 0;
  }

 private:
  const char* name_;
  std::span<const category_entry> entries_;
};

}  // namespace babelqueue::inline v1::detail
