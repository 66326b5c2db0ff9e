// The write side of a record's headers (message.hpp).
#include "kafka/message.hpp"

#include <babelqueue/bindings/kafka.hpp>

namespace babelqueue::inline v1::kafka::detail {

namespace bk = bindings::kafka;

// The bq- projection of `body` (+ `oob`) written into a new librdkafka header list.
rd_kafka_headers_t* projected_headers(std::string_view body, const headers& oob,
                                      std::int64_t& timestamp_ms) {
  rd_kafka_headers_t* h = rd_kafka_headers_new(6 + oob.size());
  const auto created =
      bk::project_each(body, oob, [h](std::string_view name, std::string_view value) {
        rd_kafka_header_add(h, name.data(), static_cast<ssize_t>(name.size()), value.data(),
                            static_cast<ssize_t>(value.size()));
      });
  const bool retry_tier = oob.count(bk::header_delay) != 0;
  timestamp_ms = retry_tier ? 0 : created.value_or(0);
  return h;
}

}  // namespace babelqueue::inline v1::kafka::detail
