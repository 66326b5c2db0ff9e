// The envelope and its headers -> a Pulsar message (message.hpp).
#include "pulsar/message.hpp"

#include <babelqueue/bindings/pulsar.hpp>

#include <cstdint>
#include <string>

namespace babelqueue::inline v1::pulsar::detail {

namespace bp = bindings::pulsar;
namespace pc = ::pulsar;

// A native delay and its `bq-delay` mirror (ms).
void set_delay(pc::MessageBuilder& b, std::chrono::milliseconds delay) {
  b.setDeliverAfter(delay);
  b.setProperty(std::string(bp::property_delay), std::to_string(delay.count()));
}

// Builds a message: the payload, the bq- projection, the event time, and a native delay.
pc::Message build_message(std::string_view body, const headers& hdrs,
                          std::chrono::milliseconds delay) {
  pc::MessageBuilder b;
  b.setContent(body.data(), body.size());
  // Two scratch strings serve every property (setProperty copies them into the metadata).
  std::string name, value;
  const auto created = bp::project_each(body, hdrs, [&](std::string_view n, std::string_view v) {
    name.assign(n);
    value.assign(v);
    b.setProperty(name, value);
  });
  if (created && *created > 0) b.setEventTimestamp(static_cast<std::uint64_t>(*created));
  if (delay.count() > 0) {
    set_delay(b, delay);
  }
  return b.build();
}

}  // namespace babelqueue::inline v1::pulsar::detail
