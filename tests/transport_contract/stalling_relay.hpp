#pragma once
// A test-owned TCP relay in front of a real server: it forwards both ways until stall(),
// after which it keeps every connection open but reads and writes nothing — to the client,
// a server that stopped answering (what SIGSTOP of the server does), without stopping the
// shared server other tests use. Connections made after stall() are accepted by the kernel
// and never served, like a stopped process's listen backlog.
//
// Faithful only where the client talks to the address it was given: not Kafka (advertised
// listeners), Pulsar (topic lookup), Redis Cluster (slot map) or Sentinel (the primary's
// address comes from the Sentinels). target::relay_faithful says which.
//
// Thread-safety: one thread owns the object; the relay runs its own thread.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace bqcontract {

class stalling_relay {
 public:
  /// Relays 127.0.0.1:<port> → 127.0.0.1:`upstream_port`; port() is 0 when it cannot listen.
  explicit stalling_relay(std::uint16_t upstream_port) : upstream_(upstream_port) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = loopback(0);
    socklen_t len = sizeof a;
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listener_, 64) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      return;
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~stalling_relay() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (const auto& p : pairs_) {
      ::close(p.client);
      ::close(p.server);
    }
    if (listener_ >= 0) ::close(listener_);
  }
  stalling_relay(const stalling_relay&) = delete;
  stalling_relay& operator=(const stalling_relay&) = delete;

  std::uint16_t port() const { return port_; }
  /// From now on nothing is read, written or accepted; connections stay open.
  void stall() { stalled_ = true; }

 private:
  struct pair {
    int client;
    int server;
  };

  static sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
  }

  // Copies what `from` has to `to`; false when either side is gone.
  static bool pump(int from, int to) {
    char buf[65536];
    const ssize_t n = ::recv(from, buf, sizeof buf, 0);
    if (n <= 0) return false;
    for (ssize_t off = 0; off < n;) {
      const ssize_t w = ::send(to, buf + off, static_cast<std::size_t>(n - off), MSG_NOSIGNAL);
      if (w <= 0) return false;
      off += w;
    }
    return true;
  }

  void run() {
    while (!stop_) {
      if (stalled_) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        continue;
      }
      std::vector<pollfd> fds{{listener_, POLLIN, 0}};
      for (const auto& p : pairs_) {
        fds.push_back({p.client, POLLIN, 0});
        fds.push_back({p.server, POLLIN, 0});
      }
      if (::poll(fds.data(), fds.size(), 20) <= 0 || stalled_) continue;
      const std::size_t polled = pairs_.size();
      if (fds[0].revents & POLLIN) accept_one();
      std::vector<pair> kept;
      for (std::size_t i = 0; i < polled; ++i) {
        const auto& p = pairs_[i];
        bool ok = true;
        if (fds[1 + 2 * i].revents & (POLLIN | POLLHUP | POLLERR)) ok = pump(p.client, p.server);
        if (ok && (fds[2 + 2 * i].revents & (POLLIN | POLLHUP | POLLERR))) {
          ok = pump(p.server, p.client);
        }
        if (ok) {
          kept.push_back(p);
        } else {
          ::close(p.client);
          ::close(p.server);
        }
      }
      // Pairs accepted in this round (after the poll set was built) are kept too.
      for (std::size_t i = polled; i < pairs_.size(); ++i) kept.push_back(pairs_[i]);
      pairs_ = std::move(kept);
    }
  }

  void accept_one() {
    const int c = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return;
    const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = loopback(upstream_);
    if (s < 0 || ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(c);
      if (s >= 0) ::close(s);
      return;
    }
    pairs_.push_back({c, s});
  }

  std::uint16_t upstream_;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> stalled_{false};
  std::vector<pair> pairs_;  // owned by the relay thread until it ends
  std::thread thread_;
};

}  // namespace bqcontract
