#pragma once
// The envelope and its headers -> a Pulsar message: the payload, the `bq-` properties of the
// pure projection (bindings/pulsar.hpp), the event time and a native delay. (The read side is
// bindings::pulsar::read_properties() on the received message's properties.)
//
// Thread-safety: pure functions (deliver_at_of() reads the wall clock).
#include <babelqueue/headers.hpp>

#include <pulsar/Message.h>
#include <pulsar/MessageBuilder.h>

#include <chrono>
#include <cstdint>
#include <string_view>

namespace babelqueue::inline v1::pulsar::detail {

/// A delay as Pulsar carries it: `deliverAt` (absolute, Unix ms of the broker's clock) and the
/// requested delay mirrored on `bq-delay`. `delay` 0 = no delay.
struct delivery_delay {
  std::chrono::milliseconds delay{0};
  std::uint64_t deliver_at_ms = 0;
};

/// `delay` from now: the wall clock read once, here, so every later step (a producer made on
/// first use, a reconnect, a resend) counts against the same due time instead of moving it.
delivery_delay deliver_at_of(std::chrono::milliseconds delay);

/// Sets a native delay (deliverAt) and its `bq-delay` mirror (the requested delay in ms,
/// decimal) on `b`; nothing when `d.delay` is 0.
void set_delay(::pulsar::MessageBuilder& b, const delivery_delay& d);

/// Builds a message: the payload, the bq- projection, the event time, and a native delay.
::pulsar::Message build_message(std::string_view body, const headers& hdrs,
                                const delivery_delay& d = {});

}  // namespace babelqueue::inline v1::pulsar::detail
