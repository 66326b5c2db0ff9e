// The seam's own checks of a delayed publish, written once so that every binding refuses the
// same bad delay the same way (issue #37), before anything reaches a broker.
#include <babelqueue/runtime/transport.hpp>

#include <string>

namespace babelqueue::inline v1 {
namespace {

// What the seam answers for `delay` before the binding sees it: an error, or nothing when the
// binding should be called (publish_later()/publish_batch_later(); a binding without
// delayed_publish answers there, so that after close() it says closed, as every call must).
result<void> check_delay(const transport& t, std::chrono::milliseconds delay) {
  if (delay.count() < 0) {
    return fail(transport_errc::invalid_argument, std::string(t.scheme()) +
                                                      ": a publish delay must be >= 0 (got " +
                                                      std::to_string(delay.count()) + " ms)");
  }
  const transport_capabilities caps = t.capabilities();
  if (caps.delayed_publish && caps.max_delay.count() > 0 && delay > caps.max_delay) {
    return fail(transport_errc::invalid_argument,
                std::string(t.scheme()) + ": a publish delay of " + std::to_string(delay.count()) +
                    " ms is over the " + std::to_string(caps.max_delay.count()) +
                    " ms this binding can hold; nothing was sent");
  }
  return {};
}

}  // namespace

result<void> transport::publish_delayed(std::string_view queue, std::string_view body,
                                        const headers& hdrs, std::chrono::milliseconds delay) {
  if (auto r = check_delay(*this, delay); !r) return r;
  if (delay.count() == 0) return publish(queue, body, hdrs);
  return publish_later(queue, body, hdrs, delay);
}

result<void> transport::publish_batch_delayed(std::string_view queue,
                                              std::span<const outgoing_message> messages,
                                              std::chrono::milliseconds delay) {
  if (auto r = check_delay(*this, delay); !r) return r;
  if (delay.count() == 0) return publish_batch(queue, messages);
  return publish_batch_later(queue, messages, delay);
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

result<void> transport::publish_batch_later(std::string_view queue,
                                            std::span<const outgoing_message> messages,
                                            std::chrono::milliseconds delay) {
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (auto r = publish_later(queue, messages[i].body, messages[i].hdrs, delay); !r) {
      error_info e = r.error();
      e.message = "message " + std::to_string(i) + " of " + std::to_string(messages.size()) + ": " +
                  e.message;
      return fail(std::move(e));
    }
  }
  return {};
}

result<void> transport::first_failure(std::span<const result<void>> results) {
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!results[i]) {
      error_info e = results[i].error();
      e.message = "message " + std::to_string(i) + " of " + std::to_string(results.size()) + ": " +
                  e.message;
      return fail(std::move(e));
    }
  }
  return {};
}

}  // namespace babelqueue::inline v1
