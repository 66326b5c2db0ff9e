#pragma once
/// @file schema/wrap.hpp
/// @brief Consumer-side safety net: validate each message's `data` before its handler runs.
///
/// `app.handle(urn, schema::wrap(provider, handler))`. A message whose `data` does not match
/// its URN's schema makes the wrapped handler throw `invalid_payload_error` — an ordinary
/// handler failure for the runtime (app.hpp): retried while attempts < max_attempts, then
/// dead-lettered with reason `failed` and the violations in `dead_letter.error`. A schema
/// that cannot be loaded throws babelqueue::error the same way (retried: an operator can fix
/// the file). A URN with no registered schema runs the handler unchanged.
///
/// Prefer the producer guard (schema/guard.hpp): invalid data does not become valid on retry,
/// so on the consumer side every attempt is spent on a message that can never succeed, and
/// the producer that could fix it never hears about it. Wrap is defence in depth, for
/// producers you do not control.
///
/// Header-only, so babelqueue::schema does not link the runtime; include it where you use
/// the app (link babelqueue::runtime and babelqueue::schema).
/// @note Thread-safety: the returned handler runs on the app's worker threads (concurrently
/// when workers > 1); every provider in this library allows that.

#include <babelqueue/runtime/app.hpp>
#include <babelqueue/schema/guard.hpp>
#include <babelqueue/schema/provider.hpp>

#include <memory>
#include <type_traits>
#include <utility>

namespace babelqueue {
inline namespace v1 {
namespace schema {

/// Wraps `next` so it only sees messages whose `data` matches `msg.urn()`'s schema.
inline handler wrap(std::shared_ptr<const provider> schemas, handler next) {
  return [schemas = std::move(schemas), next = std::move(next)](message& msg) {
    // msg.data() throws on a number no C++ type holds: also a handler failure.
    validate(*schemas, msg.urn(), msg.data());
    next(msg);
  };
}

/// As above, taking a provider by value (map_provider, dir_provider — a dir_provider copy
/// shares its cache with the original).
template <class Provider,
          class = std::enable_if_t<std::is_base_of_v<provider, std::decay_t<Provider>>>>
handler wrap(Provider&& schemas, handler next) {
  return wrap(std::static_pointer_cast<const provider>(
                  std::make_shared<std::decay_t<Provider>>(std::forward<Provider>(schemas))),
              std::move(next));
}

/// The schema guard of a typed handler: `app.handle<T>(fn, schema::check_with(provider))`
/// validates `data` against `msg.urn()`'s schema BEFORE it is converted to T, so invalid data
/// fails with the validator's report (invalid_payload_error) rather than a conversion error.
inline typed::data_check check_with(std::shared_ptr<const provider> schemas) {
  return [schemas = std::move(schemas)](const message& msg) {
    validate(*schemas, msg.urn(), msg.data());
  };
}

/// As above, taking a provider by value.
template <class Provider,
          class = std::enable_if_t<std::is_base_of_v<provider, std::decay_t<Provider>>>>
typed::data_check check_with(Provider&& schemas) {
  return check_with(std::static_pointer_cast<const provider>(
      std::make_shared<std::decay_t<Provider>>(std::forward<Provider>(schemas))));
}

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
