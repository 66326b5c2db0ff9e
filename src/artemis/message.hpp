#pragma once
// proton::message ↔ the Artemis projection (bindings/artemis.hpp) and received_message.
//
// Thread-safety: pure functions over values.
#include <babelqueue/headers.hpp>
#include <babelqueue/runtime/transport.hpp>

#include <proton/message.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace babelqueue::inline v1::artemis::detail {

/// The AMQP message of a publish of `body` (see the projection in artemis_transport.hpp).
/// `durable` false clears the projection's `header.durable` (options::durable).
proton::message to_message(std::string_view body, const headers& hdrs,
                           std::optional<std::chrono::milliseconds> delay = std::nullopt,
                           bool durable = true);

/// The envelope bytes of a received message: an `amqp-value` string or binary, or `data`
/// sections (a STOMP or JMS BytesMessage producer). Any other body (an AMQP sequence, a
/// map, null) is not an envelope: its Proton text form is returned, which the runtime then
/// dead-letters as undecodable rather than dropping it. No body section reads as empty.
std::string body_of(const proton::message& m);

/// The string application properties minus the contract ones.
headers headers_of(const proton::message& m);

}  // namespace babelqueue::inline v1::artemis::detail
