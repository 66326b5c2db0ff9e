#pragma once
/// @file result.hpp
/// @brief `result<T>`: a value or an error_info, shaped like C++23 `std::expected`; the one
/// result type of every component.
///
/// GCC 12 in C++20 mode has no `<expected>`, so this is a small in-house equivalent.
/// Checked access (`value()`) throws babelqueue::error; `*r` / `r->` are unchecked.
///
/// Thread-safety: a value type, like `std::optional`: concurrent reads of one result are
/// safe, a write needs exclusive access.

#include <babelqueue/error.hpp>
#include <babelqueue/export/core.hpp>

#include <cassert>
#include <type_traits>
#include <utility>
#include <variant>

namespace babelqueue {
inline namespace v1 {

/// Tag-carrying error value used to build a failed result: `return fail(errc::x, "why")`.
struct BABELQUEUE_CORE_EXPORT failure {
  error_info info;
};

/// Any code of any babelqueue category (the enums convert implicitly).
inline failure fail(std::error_code code, std::string message) {
  return failure{error_info{code, std::move(message)}};
}
/// With the client library's own code and text kept beside the mapped code.
inline failure fail(std::error_code code, std::string message, native_error native) {
  return failure{error_info{code, std::move(message), {}, std::move(native)}};
}
inline failure fail(error_info info) { return failure{std::move(info)}; }

template <class T>
class [[nodiscard]] result {
 public:
  using value_type = T;

  result(const T& v) : state_(std::in_place_index<0>, v) {}  // NOLINT(google-explicit-constructor)
  result(T&& v) : state_(std::in_place_index<0>, std::move(v)) {}           // NOLINT
  result(failure f) : state_(std::in_place_index<1>, std::move(f.info)) {}  // NOLINT
  template <class... Args>
  explicit result(std::in_place_t, Args&&... args)
      : state_(std::in_place_index<0>, std::forward<Args>(args)...) {}

  bool has_value() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  /// @throws babelqueue::error when this holds an error.
  T& value() & {
    throw_if_error();
    return std::get<0>(state_);
  }
  const T& value() const& {
    throw_if_error();
    return std::get<0>(state_);
  }
  /// By value from an rvalue, so `for (auto& x : f().value())` cannot dangle.
  T value() && {
    throw_if_error();
    return std::move(std::get<0>(state_));
  }

  T& operator*() & noexcept { return *std::get_if<0>(&state_); }
  const T& operator*() const& noexcept { return *std::get_if<0>(&state_); }
  T operator*() && { return std::move(*std::get_if<0>(&state_)); }
  T* operator->() noexcept { return std::get_if<0>(&state_); }
  const T* operator->() const noexcept { return std::get_if<0>(&state_); }

  template <class U>
  T value_or(U&& fallback) const& {
    return has_value() ? std::get<0>(state_) : static_cast<T>(std::forward<U>(fallback));
  }

  /// The error; only meaningful when !has_value().
  const error_info& error() const& noexcept { return *std::get_if<1>(&state_); }
  /// By value from an rvalue (as value() &&), so `auto&& e = f().error()` cannot dangle and
  /// `return fail(std::move(r).error())` moves the message instead of copying it.
  error_info error() && noexcept { return std::move(*std::get_if<1>(&state_)); }
  /// errc::ok when this holds a value.
  std::error_code code() const noexcept {
    return has_value() ? make_error_code(errc::ok) : error().code;
  }

 private:
  void throw_if_error() const {
    if (!has_value()) throw babelqueue::error(*std::get_if<1>(&state_));
  }
  std::variant<T, error_info> state_;
};

template <>
class [[nodiscard]] result<void> {
 public:
  result() = default;
  result(failure f) : error_(std::move(f.info)) {}  // NOLINT(google-explicit-constructor)

  bool has_value() const noexcept { return !error_.code; }
  explicit operator bool() const noexcept { return has_value(); }
  /// @throws babelqueue::error when this holds an error.
  void value() const {
    if (!has_value()) throw babelqueue::error(error_);
  }
  const error_info& error() const& noexcept { return error_; }
  /// By value from an rvalue, as result<T>::error() &&.
  error_info error() && noexcept { return std::move(error_); }
  std::error_code code() const noexcept { return error_.code; }

 private:
  error_info error_;
};

}  // namespace v1
}  // namespace babelqueue
