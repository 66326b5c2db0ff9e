#include "rabbitmq/wait_queue.hpp"

#include <babelqueue/bindings/rabbitmq.hpp>

#include <openssl/evp.h>

#include <algorithm>
#include <array>

namespace babelqueue::inline v1::rabbitmq {

namespace {

using std::chrono::milliseconds;

// The first 8 bytes of SHA-256(`s`) as 16 lowercase hex digits: what tells two long queue
// names apart once they are cut (SHA-256 because every peer language has it built in).
std::string short_digest(std::string_view s) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  if (EVP_Digest(s.data(), s.size(), md.data(), &len, EVP_sha256(), nullptr) != 1 || len < 8) {
    // Only without a working libcrypto; the cut name then still differs by its delay and
    // window, and a clash would show as PRECONDITION_FAILED, never as a wrong route.
    return "0000000000000000";
  }
  static constexpr std::string_view hex = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < 8; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 0x0f];
  }
  return out;
}

/// The start of the window holding `now`, in whole Unix seconds (windows are whole seconds:
/// the TTL is, and the minimum window is an hour).
std::int64_t window_start_s(milliseconds window, std::chrono::system_clock::time_point now) {
  const auto since_epoch = std::chrono::duration_cast<milliseconds>(now.time_since_epoch()).count();
  const auto w = window.count();
  const auto start = (since_epoch >= 0 ? since_epoch / w : (since_epoch - w + 1) / w) * w;
  return start / 1000;
}

std::string name_of(std::string_view queue, milliseconds ttl, std::int64_t window_start) {
  std::string name(wait_queue_prefix);
  name += std::to_string(ttl.count());
  name += "ms.";
  name += std::to_string(window_start);
  name += '.';
  const std::size_t room = bindings::rabbitmq::max_short_string - name.size();
  if (queue.size() <= room) return name + std::string(queue);
  // Too long for an AMQP short string: keep a prefix of the queue (cut on a UTF-8 character
  // boundary, so the name stays valid UTF-8) and name the whole queue by its digest.
  std::size_t keep = room - 17;  // "~" + 16 hex digits
  while (keep > 0 && (static_cast<unsigned char>(queue[keep]) & 0xC0) == 0x80) --keep;
  name.append(queue.substr(0, keep));
  name += '~';
  name += short_digest(queue);
  return name;
}

}  // namespace

std::string wait_queue_name(std::string_view queue, std::chrono::milliseconds delay,
                            std::chrono::system_clock::time_point at) {
  const auto ttl = detail::wait_ttl(delay);
  return name_of(queue, ttl, window_start_s(detail::wait_window(ttl), at));
}

namespace detail {

milliseconds wait_ttl(milliseconds delay) {
  const auto g = publish_delay_granularity.count();
  return milliseconds((delay.count() + g - 1) / g * g);
}

milliseconds wait_window(milliseconds ttl) { return std::max(ttl, wait_queue_min_window); }

wait_queue wait_queue_for(std::string_view target, milliseconds delay,
                          std::chrono::system_clock::time_point now) {
  const auto ttl = wait_ttl(delay);
  const auto window = wait_window(ttl);
  const std::int64_t start = window_start_s(window, now);
  const auto end = std::chrono::system_clock::time_point(std::chrono::seconds(start)) + window;
  return wait_queue{name_of(target, ttl, start), std::string(target), ttl.count(),
                    (window + ttl + wait_queue_grace).count(),
                    std::chrono::duration_cast<milliseconds>(end - now)};
}

}  // namespace detail

}  // namespace babelqueue::inline v1::rabbitmq
