// The envelope and its headers -> a Pulsar message (message.hpp).
#include "pulsar/message.hpp"

#include <babelqueue/bindings/pulsar.hpp>

#include <cstdint>
#include <string>

namespace babelqueue::inline v1::pulsar::detail {

namespace bp = bindings::pulsar;
namespace pc = ::pulsar;

delivery_delay deliver_at_of(std::chrono::milliseconds delay) {
  if (delay.count() <= 0) return {};
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  return {delay, static_cast<std::uint64_t>((now + delay).count())};
}

void set_delay(pc::MessageBuilder& b, const delivery_delay& d) {
  if (d.delay.count() <= 0) return;
  // deliverAt, not deliverAfter: deliverAfter reads the clock when the message is built, after
  // whatever preceded it; both land in the one metadata field, deliver_at_time.
  b.setDeliverAt(d.deliver_at_ms);
  b.setProperty(std::string(bp::property_delay), std::to_string(d.delay.count()));
}

pc::Message build_message(std::string_view body, const headers& hdrs, const delivery_delay& d) {
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
  set_delay(b, d);
  return b.build();
}

}  // namespace babelqueue::inline v1::pulsar::detail
