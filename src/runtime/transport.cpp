// The seam's own checks of a delayed publish, written once so that every binding refuses the
// same bad delay the same way (issue #37), before anything reaches a broker.
#include <babelqueue/runtime/transport.hpp>

#include <string>

namespace babelqueue::inline v1 {

result<void> transport::publish_delayed(std::string_view queue, std::string_view body,
                                        const headers& hdrs, std::chrono::milliseconds delay) {
  if (delay.count() < 0) {
    return fail(transport_errc::invalid_argument, std::string(scheme()) +
                                                      ": a publish delay must be >= 0 (got " +
                                                      std::to_string(delay.count()) + " ms)");
  }
  if (delay.count() == 0) return publish(queue, body, hdrs);
  const transport_capabilities caps = capabilities();
  if (!caps.delayed_publish) {
    // Still the binding's call: one that lacks delays only in some modes (Kafka without
    // retry tiers) answers closed after close(), as every call must, and not_supported else.
    return publish_later(queue, body, hdrs, delay);
  }
  if (caps.max_delay.count() > 0 && delay > caps.max_delay) {
    return fail(transport_errc::invalid_argument,
                std::string(scheme()) + ": a publish delay of " + std::to_string(delay.count()) +
                    " ms is over the " + std::to_string(caps.max_delay.count()) +
                    " ms this binding can hold; nothing was sent");
  }
  return publish_later(queue, body, hdrs, delay);
}

result<void> transport::publish_later(std::string_view queue, std::string_view body,
                                      const headers& hdrs, std::chrono::milliseconds delay) {
  (void)queue;
  (void)body;
  (void)hdrs;
  (void)delay;
  return fail(transport_errc::not_supported,
              std::string(scheme()) + ": this transport cannot publish with a delay");
}

}  // namespace babelqueue::inline v1
