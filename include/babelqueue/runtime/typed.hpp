#pragma once
/// @file runtime/typed.hpp
/// @brief The runtime side of typed messages: the handler behind `app.handle<T>(fn)`.
///
/// A typed handler runs, for each message of T's URN:
///  1. the optional `check` (e.g. schema::check_with(provider): the schema guard validates
///     `data` before any conversion, so an invalid body fails with the validator's report);
///  2. typed::from_data<T>(msg.data()); a body that does not convert throws
///     babelqueue::error (errc::invalid_data) whose what() names the URN, the problem and the
///     pointer — `invalid_data: data for "urn:…" does not convert: expected an integer, got
///     string (at /lines/2/qty)`. For the runtime that is an ordinary handler failure:
///     retried while attempts < max_attempts, then dead-lettered with reason `failed` and that
///     text in `dead_letter.error`. Never a crash;
///  3. `fn(value, msg)` (or `fn(value)`).
/// Invalid data does not become valid on retry: set max_attempts accordingly, or validate on
/// the producer side (schema/guard.hpp), as for schema::wrap.
/// @note Thread-safety: as any handler (app.hpp): it runs on the app's worker threads.

#include <babelqueue/runtime/message.hpp>
#include <babelqueue/typed/convert.hpp>

#include <functional>
#include <type_traits>
#include <utility>

namespace babelqueue {
inline namespace v1 {
namespace typed {

/// Runs before conversion and throws to fail the message (schema::check_with()).
using data_check = std::function<void(const message& msg)>;

/// The untyped handler that converts and calls `fn(const T&, message&)` or `fn(const T&)`.
template <message_type T, class Fn>
std::function<void(message&)> make_handler(Fn fn, data_check check = {}) {
  static_assert(
      std::is_invocable_v<Fn&, const T&, message&> || std::is_invocable_v<Fn&, const T&>,
      "a typed handler is callable as fn(const T&, babelqueue::message&) or fn(const T&)");
  return [fn = std::move(fn), check = std::move(check)](message& msg) mutable {
    if (check) check(msg);
    // data() throws on a number no C++ type holds: a handler failure as well.
    auto value = from_data<T>(msg.data());
    if (!value) throw babelqueue::error(std::move(value).error());
    if constexpr (std::is_invocable_v<Fn&, const T&, message&>) {
      fn(std::as_const(*value), msg);
    } else {
      fn(std::as_const(*value));
    }
  };
}

}  // namespace typed
}  // namespace v1
}  // namespace babelqueue
