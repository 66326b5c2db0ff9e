#pragma once
// The Service Bus stand-in's scheduler: a test-owned AMQP 1.0 front between an sb:// client and
// the stand-in's broker (Apache Artemis, scripts/services/asb.sh), for ScheduledEnqueueTime.
//
// Service Bus holds a message whose message annotation `x-opt-scheduled-enqueue-time` is an AMQP
// timestamp until that time (the .NET SDK's ScheduledEnqueueTime; a value of another type is
// not a ScheduledEnqueueTime to the SDKs' converters, so the message is enqueued at once).
// Artemis ignores that annotation and schedules only on its own `x-opt-delivery-time` (a
// number). So this front reads every transfer a client sends, and for the first frame of each
// delivery whose message annotations carry `x-opt-scheduled-enqueue-time`:
//  - records what it saw (the value's AMQP type code, its value, when) for the tests to check
//    what the SDK sends (seen());
//  - when the value is a timestamp: adds `x-opt-delivery-time` = the same instant as an AMQP
//    long, so that the broker holds the message until then (the original annotation stays,
//    as a consumer of Service Bus would see it);
//  - otherwise (another type, a map already naming x-opt-delivery-time, no room in the frame,
//    an annotation section split over frames) forwards the frame unchanged and says why: the
//    message is then NOT held, and a delay test fails, as it would on Service Bus.
// One more rewrite, for the Azure SDKs: they address an entity as `amqps://127.0.0.1:<port>/q`
// with the port they connected to, and the stand-in's broker strips only its own
// `amqps://127.0.0.1:<broker port>/` prefix. So in `attach` frames `127.0.0.1:<front port>`
// becomes `127.0.0.1:<broker port>` (the front listens on a port of as many digits, so every
// length stays). CBS requests are left alone: the token's `sr` must keep covering its audience.
// Everything else (protocol headers, SASL, CBS, other frames, the broker's answers) is
// forwarded byte for byte. A bare TCP front: it forwards every connection to one upstream
// 127.0.0.1 port. Not Service Bus: see docs/testing.md "Azure Service Bus stand-in".
//
// Thread-safety: start()/seen()/the destructor from any thread; each connection runs two
// threads of its own (one per direction), all joined by the destructor.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace bqtest {

/// What the front read of one `x-opt-scheduled-enqueue-time` annotation.
struct scheduled_enqueue {
  std::uint8_t amqp_type = 0;   ///< the value's AMQP constructor: 0x83 = timestamp, 0x81 = long
  std::int64_t value_ms = 0;    ///< the value (Unix ms) when a timestamp or a long, else 0
  std::int64_t seen_at_ms = 0;  ///< when the front read it (Unix ms)
  bool held = false;            ///< passed on with `x-opt-delivery-time`: the broker holds it
  std::string why;              ///< why it was not held (empty when held)
};

namespace amqp_front_detail {

inline std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}
inline std::int64_t be64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return static_cast<std::int64_t>(v);
}
inline void put32(std::string& out, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>((v >> s) & 0xff));
}
inline void put64(std::string& out, std::int64_t v) {
  const auto u = static_cast<std::uint64_t>(v);
  for (int s = 56; s >= 0; s -= 8) out.push_back(static_cast<char>((u >> s) & 0xff));
}

/// The encoded size of the AMQP value at `p` (at most `n` bytes), 0 when it is cut short or
/// not a valid constructor. Described values included.
inline std::size_t value_size(const unsigned char* p, std::size_t n) {
  if (n == 0) return 0;
  const unsigned char c = p[0];
  if (c == 0x00) {
    const std::size_t d = value_size(p + 1, n - 1);
    if (d == 0) return 0;
    const std::size_t v = value_size(p + 1 + d, n - 1 - d);
    return v == 0 ? 0 : 1 + d + v;
  }
  // The constructor's high nibble gives the width: 0x4-0x9 fixed (0, 1, 2, 4, 8, 16 bytes),
  // 0xa/0xc/0xe a 1-byte size, 0xb/0xd/0xf a 4-byte size.
  static constexpr std::size_t fixed[] = {1, 2, 3, 5, 9, 17};
  const unsigned hi = c >> 4;
  std::size_t total = 0;
  if (hi >= 0x4 && hi <= 0x9) {
    total = fixed[hi - 4];
  } else if (hi == 0xa || hi == 0xc || hi == 0xe) {
    if (n < 2) return 0;
    total = 2 + std::size_t{p[1]};
  } else if (hi == 0xb || hi == 0xd || hi == 0xf) {
    if (n < 5) return 0;
    total = 5 + std::size_t{be32(p + 1)};
  } else {
    return 0;
  }
  return total <= n ? total : 0;
}

/// The elements of a list (0x45 / 0xc0 / 0xd0) or a map (0xc1 / 0xd1) at `p`: where they start
/// and how many there are. nullopt for anything else.
struct compound {
  std::size_t header = 0;  ///< bytes before the first element
  std::size_t count = 0;
};
inline std::optional<compound> compound_at(const unsigned char* p, std::size_t n) {
  if (n == 0) return std::nullopt;
  if (p[0] == 0x45) return compound{1, 0};
  if ((p[0] == 0xc0 || p[0] == 0xc1) && n >= 3) return compound{3, p[2]};
  if ((p[0] == 0xd0 || p[0] == 0xd1) && n >= 9) return compound{9, be32(p + 5)};
  return std::nullopt;
}

/// The descriptor code of a described value at `p` (0x00 then a ulong), else nullopt; `size`
/// gets the descriptor's encoded size (the 0x00 included).
inline std::optional<std::uint64_t> descriptor_at(const unsigned char* p, std::size_t n,
                                                  std::size_t& size) {
  if (n >= 3 && p[0] == 0x00 && p[1] == 0x53) {
    size = 3;
    return p[2];
  }
  if (n >= 10 && p[0] == 0x00 && p[1] == 0x80) {
    size = 10;
    return static_cast<std::uint64_t>(be64(p + 2));
  }
  return std::nullopt;
}

inline std::optional<std::uint32_t> uint_at(const unsigned char* p, std::size_t n) {
  if (n >= 1 && (p[0] == 0x43 || p[0] == 0x40)) return 0;
  if (n >= 2 && p[0] == 0x52) return p[1];
  if (n >= 5 && p[0] == 0x70) return be32(p + 1);
  return std::nullopt;
}

inline bool bool_at(const unsigned char* p, std::size_t n) {
  if (n >= 1 && p[0] == 0x41) return true;
  if (n >= 2 && p[0] == 0x56) return p[1] != 0;
  return false;
}

/// A symbol value (0xa3 / 0xb3) at `p`, else nullopt.
inline std::optional<std::string_view> symbol_at(const unsigned char* p, std::size_t n) {
  if (n >= 2 && p[0] == 0xa3 && n >= 2 + std::size_t{p[1]})
    return std::string_view(reinterpret_cast<const char*>(p + 2), p[1]);
  if (n >= 5 && p[0] == 0xb3 && n >= 5 + std::size_t{be32(p + 1)})
    return std::string_view(reinterpret_cast<const char*>(p + 5), be32(p + 1));
  return std::nullopt;
}

inline std::int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace amqp_front_detail

class scheduling_front {
 public:
  static constexpr std::string_view scheduled_key = "x-opt-scheduled-enqueue-time";
  static constexpr std::string_view delivery_key = "x-opt-delivery-time";

  /// Listens on 127.0.0.1:<free port>, forwarding to 127.0.0.1:`upstream_port`; nullptr (with
  /// `why`) when it cannot listen.
  static std::unique_ptr<scheduling_front> start(std::uint16_t upstream_port, std::string& why) {
    std::unique_ptr<scheduling_front> f(new scheduling_front(upstream_port));
    // A free port with as many digits as the broker's (see the attach rewrite above).
    for (int attempt = 0; attempt < 50; ++attempt) {
      const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in a = loopback(0);
      socklen_t len = sizeof a;
      if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
          ::listen(fd, 64) != 0 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
        why = std::string("scheduling front: cannot listen: ") + std::strerror(errno);
        if (fd >= 0) ::close(fd);
        return nullptr;
      }
      f->listener_ = fd;
      f->port_ = ntohs(a.sin_port);
      if (std::to_string(f->port_).size() == std::to_string(upstream_port).size()) break;
      ::close(fd);
      f->listener_ = -1;
    }
    if (f->listener_ < 0) {
      why =
          "scheduling front: no free port with as many digits as " + std::to_string(upstream_port);
      return nullptr;
    }
    f->acceptor_ = std::thread([p = f.get()] { p->accept_loop(); });
    return f;
  }

  /// `text` (a URL or a connection string) with its first `127.0.0.1:<port>` replaced by the
  /// front's; `upstream` gets the port it named. nullopt when it names none.
  static std::optional<std::string> through(const std::string& text, std::uint16_t front_port,
                                            std::uint16_t* upstream = nullptr) {
    const std::string host = "127.0.0.1:";
    const auto at = text.find(host);
    if (at == std::string::npos) return std::nullopt;
    auto end = at + host.size();
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    if (end == at + host.size()) return std::nullopt;
    if (upstream != nullptr)
      *upstream = static_cast<std::uint16_t>(std::stoi(text.substr(at + host.size())));
    return text.substr(0, at) + host + std::to_string(front_port) + text.substr(end);
  }

  ~scheduling_front() {
    stop_ = true;
    if (listener_ >= 0) ::shutdown(listener_, SHUT_RDWR);  // wakes accept()
    if (acceptor_.joinable()) acceptor_.join();
    std::lock_guard<std::mutex> lock(connections_mutex_);
    for (auto& c : connections_) hang_up(*c);
    for (auto& c : connections_) join(*c);
    if (listener_ >= 0) ::close(listener_);
  }
  scheduling_front(const scheduling_front&) = delete;
  scheduling_front& operator=(const scheduling_front&) = delete;

  std::uint16_t port() const { return port_; }

  /// Every `x-opt-scheduled-enqueue-time` read so far, in order.
  std::vector<scheduled_enqueue> seen() const {
    std::lock_guard<std::mutex> lock(seen_mutex_);
    return seen_;
  }

 private:
  struct connection {
    int client = -1;
    int upstream = -1;
    std::atomic<std::uint32_t> max_frame{512};  ///< the broker's max-frame-size (its open)
    std::atomic<int> finished{0};               ///< directions that ended
    std::thread to_broker;
    std::thread to_client;
  };

  explicit scheduling_front(std::uint16_t upstream) : upstream_(upstream) {}

  static sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
  }

  static bool send_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t w = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(w));
    }
    return true;
  }

  static void hang_up(connection& c) {
    ::shutdown(c.client, SHUT_RDWR);
    ::shutdown(c.upstream, SHUT_RDWR);
  }
  static void join(connection& c) {
    if (c.to_broker.joinable()) c.to_broker.join();
    if (c.to_client.joinable()) c.to_client.join();
    ::close(c.client);
    ::close(c.upstream);
  }

  void accept_loop() {
    while (!stop_) {
      const int c = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;  // shut down
      }
      const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in a = loopback(upstream_);
      if (s < 0 || ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(c);  // the client sees the broker gone, as it would without the front
        if (s >= 0) ::close(s);
        continue;
      }
      std::lock_guard<std::mutex> lock(connections_mutex_);
      // Connections whose both directions ended are joined and dropped here.
      for (auto it = connections_.begin(); it != connections_.end();) {
        if ((*it)->finished == 2) {
          join(**it);
          it = connections_.erase(it);
        } else {
          ++it;
        }
      }
      auto conn = std::make_unique<connection>();
      conn->client = c;
      conn->upstream = s;
      connection* p = conn.get();
      conn->to_broker = std::thread([this, p] { client_to_broker(*p); });
      conn->to_client = std::thread([this, p] { broker_to_client(*p); });
      connections_.push_back(std::move(conn));
    }
  }

  // The broker's side is copied as it comes; only its `open` is read, for its max-frame-size.
  void broker_to_client(connection& c) {
    std::string buf;
    bool looking = true;
    char chunk[65536];
    for (;;) {
      const ssize_t n = ::recv(c.upstream, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || !send_all(c.client, std::string_view(chunk, static_cast<std::size_t>(n)))) {
        break;
      }
      if (!looking) continue;
      buf.append(chunk, static_cast<std::size_t>(n));
      looking = find_open(buf, c);
    }
    hang_up(c);
    ++c.finished;
  }

  // Reads frames of `buf` (consumed as read) until the AMQP open; false once it was found (or
  // the stream cannot be read as frames).
  static bool find_open(std::string& buf, connection& c) {
    namespace d = amqp_front_detail;
    for (;;) {
      if (buf.size() >= 8 && buf.compare(0, 4, "AMQP") == 0) {
        buf.erase(0, 8);
        continue;
      }
      if (buf.size() < 8) return true;
      const auto* p = reinterpret_cast<const unsigned char*>(buf.data());
      const std::uint32_t size = d::be32(p);
      if (size < 8) return false;
      if (buf.size() < size) return true;
      const std::size_t body = std::size_t{p[4]} * 4;
      std::size_t dsize = 0;
      if (p[5] == 0 && body < size) {
        const auto code = d::descriptor_at(p + body, size - body, dsize);
        if (code && *code == 0x10) {  // open: container-id, hostname, max-frame-size
          const unsigned char* l = p + body + dsize;
          std::size_t left = size - body - dsize;
          auto list = d::compound_at(l, left);
          if (list && list->count >= 3) {
            l += list->header;
            left -= list->header;
            for (int i = 0; i < 2; ++i) {
              const std::size_t s = d::value_size(l, left);
              if (s == 0) return false;
              l += s;
              left -= s;
            }
            if (left >= 1 && l[0] == 0x40) {
              c.max_frame = 0xffffffffu;
            } else if (auto v = d::uint_at(l, left)) {
              c.max_frame = *v;
            }
          } else if (list) {
            c.max_frame = 0xffffffffu;  // no max-frame-size: unlimited
          }
          return false;
        }
      }
      buf.erase(0, size);
    }
  }

  void client_to_broker(connection& c) {
    namespace d = amqp_front_detail;
    std::string buf;
    bool raw = false;  // the stream stopped looking like AMQP frames: copy it as it comes
    std::map<std::uint64_t, bool> continued;  // (channel, handle) → the last transfer had more
    char chunk[65536];
    for (;;) {
      const ssize_t n = ::recv(c.client, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      buf.append(chunk, static_cast<std::size_t>(n));
      std::string out;
      while (!raw) {
        if (buf.size() >= 8 && buf.compare(0, 4, "AMQP") == 0) {
          out.append(buf, 0, 8);
          buf.erase(0, 8);
          continue;
        }
        if (buf.size() < 8) break;
        const std::uint32_t size = d::be32(reinterpret_cast<const unsigned char*>(buf.data()));
        if (size < 8) {
          raw = true;
          break;
        }
        if (buf.size() < size) break;
        out += frame(std::string_view(buf.data(), size), c, continued);
        buf.erase(0, size);
      }
      if (raw) {
        out += buf;
        buf.clear();
      }
      if (!send_all(c.upstream, out)) break;
    }
    hang_up(c);
    ++c.finished;
  }

  // One client frame, rewritten when it is the first frame of a delivery that asks for a
  // ScheduledEnqueueTime.
  std::string frame(std::string_view f, connection& c, std::map<std::uint64_t, bool>& continued) {
    namespace d = amqp_front_detail;
    const auto* p = reinterpret_cast<const unsigned char*>(f.data());
    const std::size_t body = std::size_t{p[4]} * 4;
    if (p[5] != 0 || body >= f.size()) return std::string(f);  // SASL, or an empty frame
    std::size_t dsize = 0;
    const auto code = d::descriptor_at(p + body, f.size() - body, dsize);
    if (code && *code == 0x12) return attach(f);
    if (!code || *code != 0x14) return std::string(f);  // not a transfer
    const std::size_t list_at = body + dsize;
    const std::size_t list_size = d::value_size(p + list_at, f.size() - list_at);
    auto list = d::compound_at(p + list_at, f.size() - list_at);
    if (list_size == 0 || !list) return std::string(f);
    // handle (0) and more (5)
    std::uint32_t handle = 0;
    bool more = false;
    const unsigned char* e = p + list_at + list->header;
    std::size_t left = list_size - list->header;
    for (std::size_t i = 0; i < list->count && i <= 5; ++i) {
      const std::size_t s = d::value_size(e, left);
      if (s == 0) return std::string(f);
      if (i == 0) handle = d::uint_at(e, s).value_or(0);
      if (i == 5) more = d::bool_at(e, s);
      e += s;
      left -= s;
    }
    const std::uint16_t channel = static_cast<std::uint16_t>((p[6] << 8) | p[7]);
    const std::uint64_t link = (std::uint64_t{channel} << 32) | handle;
    const bool first = !continued[link];
    continued[link] = more;
    if (!first) return std::string(f);
    const std::size_t payload_at = list_at + list_size;
    auto payload = schedule(f.substr(payload_at), f.size(), c.max_frame);
    if (!payload) return std::string(f);
    std::string out;
    put_frame_header(out, payload_at + payload->size(), f);
    out.append(f.substr(8, payload_at - 8));
    out += *payload;
    return out;
  }

  // An attach frame with the front's `127.0.0.1:<port>` named as the broker's (same length).
  std::string attach(std::string_view f) const {
    std::string out(f);
    const std::string mine = "127.0.0.1:" + std::to_string(port_);
    const std::string broker = "127.0.0.1:" + std::to_string(upstream_);
    if (mine.size() != broker.size()) return out;
    for (auto at = out.find(mine); at != std::string::npos; at = out.find(mine, at + 1)) {
      out.replace(at, mine.size(), broker);
    }
    return out;
  }

  static void put_frame_header(std::string& out, std::size_t size, std::string_view original) {
    amqp_front_detail::put32(out, static_cast<std::uint32_t>(size));
    out.append(original.substr(4, 4));  // doff, type, channel
  }

  // The payload with `x-opt-delivery-time` added to its message annotations, when they ask for
  // a ScheduledEnqueueTime that can be honoured; nullopt to forward it unchanged.
  std::optional<std::string> schedule(std::string_view payload, std::size_t frame_size,
                                      std::uint32_t max_frame) {
    namespace d = amqp_front_detail;
    const auto* p = reinterpret_cast<const unsigned char*>(payload.data());
    std::size_t at = 0;
    while (at < payload.size()) {
      std::size_t dsize = 0;
      const auto code = d::descriptor_at(p + at, payload.size() - at, dsize);
      if (!code || *code > 0x72) return std::nullopt;  // past the message annotations
      const std::size_t value_at = at + dsize;
      const std::size_t vsize = d::value_size(p + value_at, payload.size() - value_at);
      if (*code != 0x72) {
        if (vsize == 0) return std::nullopt;
        at = value_at + vsize;
        continue;
      }
      scheduled_enqueue s;
      s.seen_at_ms = d::unix_ms_now();
      auto map = d::compound_at(p + value_at, payload.size() - value_at);
      if (vsize == 0 || !map || (p[value_at] != 0xc1 && p[value_at] != 0xd1)) {
        // Only recorded when the annotation can be seen at all.
        if (payload.find(scheduled_key) == std::string_view::npos) return std::nullopt;
        s.why = "the message annotations are cut by the frame or not a map";
        record(s);
        return std::nullopt;
      }
      const unsigned char* e = p + value_at + map->header;
      std::size_t left = vsize - map->header;
      bool found = false;
      bool has_delivery_time = false;
      for (std::size_t i = 0; i < map->count; i += 2) {
        const std::size_t ks = d::value_size(e, left);
        if (ks == 0) return std::nullopt;
        const std::size_t vs = d::value_size(e + ks, left - ks);
        if (vs == 0) return std::nullopt;
        const auto key = d::symbol_at(e, ks);
        if (key && *key == scheduled_key) {
          found = true;
          s.amqp_type = e[ks];
          if ((e[ks] == 0x83 || e[ks] == 0x81) && vs == 9) s.value_ms = d::be64(e + ks + 1);
        }
        if (key && *key == delivery_key) has_delivery_time = true;
        e += ks + vs;
        left -= ks + vs;
      }
      if (!found) return std::nullopt;
      if (s.amqp_type != 0x83) {
        s.why = "not an AMQP timestamp: Service Bus would not schedule it";
      } else if (has_delivery_time) {
        s.why = "the message already names x-opt-delivery-time";
      }
      // The new map: every entry kept, x-opt-delivery-time added (map32).
      std::string entries(payload.substr(value_at + map->header, vsize - map->header));
      entries.push_back(static_cast<char>(0xa3));
      entries.push_back(static_cast<char>(delivery_key.size()));
      entries.append(delivery_key);
      entries.push_back(static_cast<char>(0x81));
      d::put64(entries, s.value_ms);
      std::string section(payload.substr(at, dsize));
      section.push_back(static_cast<char>(0xd1));
      d::put32(section, static_cast<std::uint32_t>(entries.size() + 4));
      d::put32(section, static_cast<std::uint32_t>(map->count + 2));
      section += entries;
      const std::size_t grown = section.size() - (dsize + vsize);
      if (s.why.empty() && frame_size + grown > max_frame) {
        s.why = "no room in the frame for x-opt-delivery-time";
      }
      s.held = s.why.empty();
      record(s);
      if (!s.held) return std::nullopt;
      std::string out(payload.substr(0, at));
      out += section;
      out.append(payload.substr(value_at + vsize));
      return out;
    }
    return std::nullopt;
  }

  void record(const scheduled_enqueue& s) {
    std::lock_guard<std::mutex> lock(seen_mutex_);
    seen_.push_back(s);
  }

  std::uint16_t upstream_;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  std::mutex connections_mutex_;
  std::list<std::unique_ptr<connection>> connections_;
  mutable std::mutex seen_mutex_;
  std::vector<scheduled_enqueue> seen_;
};

}  // namespace bqtest
