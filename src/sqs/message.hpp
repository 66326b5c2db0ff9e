#pragma once
// What the transport checks and derives from a message before SQS is asked to take it: the
// characters and size of the body and its attributes (the projection of bindings/sqs.hpp),
// and the FIFO deduplication id.
//
// Thread-safety: pure functions.
#include <babelqueue/bindings/sqs.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/runtime/error.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::inline v1::sqs::detail {

/// The bytes the attributes add to a message (names, data types, values).
std::size_t attributes_size(const std::vector<bindings::sqs::attribute>& attributes);

/// The FIFO deduplication id: meta.id, as the spec says, for a first publish; `<meta.id>:<n>`
/// for a copy carrying attempts n > 0 — the App's retry republishes the same meta.id within
/// SQS's 5-minute deduplication window, and SQS would silently drop it as a duplicate; and
/// `…:r<token>` for a message of a redrive run (`hdrs` carry redrive_header): the redriven
/// body is the original byte for byte (attempts 0), and so are its retry and dead-letter
/// copies, so without the token a redrive (or a second failure) within the window would be
/// swallowed as a duplicate of the first generation — and the DLQ message acked, the message
/// lost. An id over SQS's 128 characters becomes the SHA-256 hex of it (64), still distinct.
std::string deduplication_id(std::string_view body, std::string id, const headers& hdrs);

/// What publish and publish_each check before any call: the body's characters and size.
result<void> check_message(std::string_view body,
                           const std::vector<bindings::sqs::attribute>& attributes,
                           std::int64_t max_bytes);

}  // namespace babelqueue::inline v1::sqs::detail
