#pragma once
// proton::message ↔ the Service Bus projection (bindings/asb.hpp) and received_message.
//
// Thread-safety: pure functions over values.
#include <babelqueue/headers.hpp>
#include <babelqueue/runtime/transport.hpp>

#include <proton/message.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace babelqueue::inline v1::asb::detail {

/// The AMQP message of a publish of `body` (see the projection in asb_transport.hpp).
proton::message to_message(std::string_view body, const headers& hdrs,
                           std::optional<std::chrono::milliseconds> delay = std::nullopt);

/// body, hdrs, delivery_count (the 1-based DeliveryCount) and refused_schema_version of a
/// received message.
void read_message(const proton::message& in, received_message& out);

/// The envelope bytes of a received body: a `data` section, an `amqp-value` string or
/// binary; a JSON string literal (the Node adapter's double encoding) is unwrapped once. Any
/// other body is returned in Proton's text form (the runtime dead-letters it); none is empty.
std::string body_of(const proton::message& m);

/// The refused `bq-schema-version` (its text) when the property is present, not blank and
/// not 1 (the integer, or the string "1"); nullopt otherwise (wire-core §9.6, as Python).
std::optional<std::string> refused_schema_version(const proton::message& m);

}  // namespace babelqueue::inline v1::asb::detail
