#pragma once
// AMQP 1.0 error conditions (a symbol name plus a description, from the broker or from
// Proton itself) → the SDK's transport_errc. Pure; private to the AMQP 1.0 bindings.
//
// Thread-safety: pure functions.

#include <babelqueue/runtime/error.hpp>

#include <proton/error_condition.hpp>

#include <string>
#include <string_view>

namespace babelqueue::inline v1::amqp10 {

/// The transport_errc of an AMQP condition name (AMQP 1.0 §2.8.15-2.8.18, plus Proton's
/// `proton:io` and SASL outcomes, which Proton reports as `amqp:unauthorized-access`).
inline transport_errc errc_of_condition(std::string_view name) {
  if (name == "amqp:unauthorized-access") return transport_errc::permission;
  if (name == "amqp:not-found") return transport_errc::not_found;
  if (name == "amqp:link:message-size-exceeded") return transport_errc::too_large;
  if (name == "amqp:not-allowed" || name == "amqp:not-implemented" ||
      name == "amqp:invalid-field" || name == "amqp:precondition-failed" ||
      name == "amqp:resource-limit-exceeded" || name == "amqp:resource-locked" ||
      name == "amqp:decode-error") {
    return transport_errc::refused;
  }
  return transport_errc::unavailable;  // proton:io, connection/session/link errors
}

/// "<name>: <what> failed: <description> (<condition>)", with the condition kept as the
/// native error (source `qpid-proton`).
inline error_info from_condition(const proton::error_condition& c, const std::string& name,
                                 const std::string& what) {
  const std::string cond = c.name().empty() ? std::string("proton:io") : c.name();
  const std::string text = c.description().empty() ? cond : c.description();
  return error_info(errc_of_condition(cond), name + ": " + what + " failed: " + text, {},
                    native_error{"qpid-proton", 0, cond + ": " + text});
}

}  // namespace babelqueue::inline v1::amqp10
