#pragma once
// librdkafka's rd_kafka_resp_err_t -> transport_errc, in one place (docs/errors.md has the
// table).
//
// Thread-safety: pure.
#include <babelqueue/error.hpp>
#include <babelqueue/runtime/error.hpp>

#include <librdkafka/rdkafka.h>

#include <string>

namespace babelqueue::inline v1::kafka::detail {

/// A librdkafka error seen while doing `context`, as an error_info with the native code.
error_info kafka_error(rd_kafka_resp_err_t err, std::string context);

}  // namespace babelqueue::inline v1::kafka::detail
