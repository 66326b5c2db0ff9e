#pragma once
// The one validation of kafka::options, shared by options_from_url() and open().
#include <babelqueue/kafka/kafka_transport.hpp>

namespace babelqueue::inline v1::kafka::detail {

/// transport_errc::invalid_argument with a reason when `o` cannot be used (librdkafka
/// properties are checked by librdkafka when the client is created).
result<void> validate(const options& o);

}  // namespace babelqueue::inline v1::kafka::detail
