#pragma once
// The envelope and its headers <-> what Redis stores (the pure bindings/redis.hpp: the bare
// envelope, or the ADR-0028 frame when there are headers): the value to store for a publish,
// and the received_message of a reservation.
//
// Thread-safety: pure functions.
#include "redis/operations.hpp"

#include <babelqueue/headers.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/runtime/settlement_handle.hpp>
#include <babelqueue/runtime/transport.hpp>

#include <string>
#include <string_view>

namespace babelqueue::inline v1::redis::detail {

/// The value to store for a body with (non-empty) headers. A body that is not valid UTF-8
/// (a poison message being dead-lettered as its original bytes) cannot travel inside the JSON
/// frame; it is stored bare — its exact bytes matter more than the informational headers —
/// and this is the only case where headers are dropped.
result<std::string> framed_value(std::string_view body, const headers& hdrs);

/// The received_message of a reservation: its body (unframed, or the Laravel job as popped)
/// and headers; the reservation itself is the handle, issued by `owner`.
received_message deliver(const settlement_owner& owner, reservation_ptr res, bool laravel);

}  // namespace babelqueue::inline v1::redis::detail
