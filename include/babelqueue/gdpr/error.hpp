#pragma once
/// @file gdpr/error.hpp
/// @brief The GDPR helper's own error codes, exceptions and `outcome<T>`.
///
/// The core `errc` set has no "cannot decrypt" code, and a consumer must be able to tell a
/// wrong key or a tampered value (retry / dead-letter, alert the key owner) from a schema or
/// programming mistake. So the gdpr module carries its own category ("babelqueue.gdpr") and a
/// two-level exception hierarchy: `gdpr::error` for everything, `gdpr::decrypt_error` for the
/// three codes a consumer sees when it cannot read a protected field (the equivalent of Go's
/// `ErrDecrypt`, Python's `DecryptError`, PHP's `DecryptException`).
///
/// Non-throwing functions return `outcome<T>`; `outcome::value()` throws the right exception.
/// @note Thread-safety: value types; no shared state.

#include <cassert>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <variant>

namespace babelqueue {
inline namespace v1 {
namespace gdpr {

enum class errc : int {
  ok = 0,
  invalid_key = 1,           ///< AES key is not 16, 24 or 32 bytes
  malformed_ciphertext = 2,  ///< not standard padded base64, or too short for nonce + tag
  decrypt_failed = 3,        ///< authentication failed: wrong key or tampered value
  not_json = 4,              ///< decrypted plaintext is not strict JSON
  encrypt_failed = 5,        ///< the cipher (or the leaf's canonical JSON) failed on protect
  invalid_schema = 6,        ///< a mark the walk cannot honour (rejected at plan build)
  invalid_argument = 7,      ///< unusable caller input (e.g. data is not an object)
};

/// The category of gdpr::errc values ("babelqueue.gdpr").
const std::error_category& category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), category()};
}

/// Stable snake_case name of a code (`decrypt_failed`, ...).
std::string_view reason(errc e) noexcept;

/// True for the codes a consumer gets when it cannot read a protected field.
constexpr bool is_decrypt_error(errc e) noexcept {
  return e == errc::malformed_ciphertext || e == errc::decrypt_failed || e == errc::not_json;
}

/// A code, a message, and the concrete data path (`addresses[1].line`) when one applies.
struct error_info {
  errc code = errc::ok;
  std::string message;
  std::string path;
};

/// Base exception; `what()` is "<reason>: <message>" plus " (at <path>)" when there is a path.
class error : public std::system_error {
 public:
  explicit error(error_info info);
  errc code_value() const noexcept { return info_.code; }
  const error_info& info() const noexcept { return info_; }
  const std::string& path() const noexcept { return info_.path; }

 private:
  error_info info_;
};

/// Wrong key, tampered or malformed ciphertext, or non-JSON plaintext. Let it propagate out
/// of a handler so the runtime retries and finally dead-letters the message.
class decrypt_error : public error {
 public:
  using error::error;
};

/// Throws decrypt_error for is_decrypt_error() codes, else error.
[[noreturn]] void throw_error(error_info info);

/// Builds a failed outcome: `return gdpr::fail(errc::x, "why")`.
struct failure {
  error_info info;
};
inline failure fail(errc code, std::string message, std::string path = {}) {
  return failure{error_info{code, std::move(message), std::move(path)}};
}

/// A value or a gdpr::error_info (the gdpr twin of babelqueue::result).
template <class T>
class [[nodiscard]] outcome {
 public:
  outcome(const T& v) : state_(std::in_place_index<0>, v) {}                 // NOLINT
  outcome(T&& v) : state_(std::in_place_index<0>, std::move(v)) {}           // NOLINT
  outcome(failure f) : state_(std::in_place_index<1>, std::move(f.info)) {}  // NOLINT

  bool has_value() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  /// @throws gdpr::decrypt_error or gdpr::error when this holds an error.
  T& value() & {
    check();
    return std::get<0>(state_);
  }
  const T& value() const& {
    check();
    return std::get<0>(state_);
  }
  T&& value() && {
    check();
    return std::move(std::get<0>(state_));
  }
  T& operator*() & noexcept { return *std::get_if<0>(&state_); }
  const T& operator*() const& noexcept { return *std::get_if<0>(&state_); }
  T* operator->() noexcept { return std::get_if<0>(&state_); }
  const T* operator->() const noexcept { return std::get_if<0>(&state_); }

  /// Only meaningful when !has_value().
  const error_info& error() const& noexcept { return *std::get_if<1>(&state_); }
  errc code() const noexcept { return has_value() ? errc::ok : error().code; }

 private:
  void check() const {
    if (!has_value()) throw_error(*std::get_if<1>(&state_));
  }
  std::variant<T, error_info> state_;
};

template <>
class [[nodiscard]] outcome<void> {
 public:
  outcome() = default;
  outcome(failure f) : error_(std::move(f.info)) {}  // NOLINT

  bool has_value() const noexcept { return error_.code == errc::ok; }
  explicit operator bool() const noexcept { return has_value(); }
  /// @throws gdpr::decrypt_error or gdpr::error when this holds an error.
  void value() const {
    if (!has_value()) throw_error(error_);
  }
  const error_info& error() const& noexcept { return error_; }
  errc code() const noexcept { return error_.code; }

 private:
  error_info error_;
};

}  // namespace gdpr
}  // namespace v1
}  // namespace babelqueue

template <>
struct std::is_error_code_enum<babelqueue::gdpr::errc> : std::true_type {};
