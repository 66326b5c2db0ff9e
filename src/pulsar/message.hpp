#pragma once
// The envelope and its headers -> a Pulsar message: the payload, the `bq-` properties of the
// pure projection (bindings/pulsar.hpp), the event time and a native delay. (The read side is
// bindings::pulsar::read_properties() on the received message's properties.)
//
// Thread-safety: pure functions.
#include <babelqueue/headers.hpp>

#include <pulsar/Message.h>
#include <pulsar/MessageBuilder.h>

#include <chrono>
#include <string_view>

namespace babelqueue::inline v1::pulsar::detail {

/// A native delay and its `bq-delay` mirror (ms).
void set_delay(::pulsar::MessageBuilder& b, std::chrono::milliseconds delay);

/// Builds a message: the payload, the bq- projection, the event time, and a native delay.
::pulsar::Message build_message(std::string_view body, const headers& hdrs,
                                std::chrono::milliseconds delay);

}  // namespace babelqueue::inline v1::pulsar::detail
