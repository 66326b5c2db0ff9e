#pragma once
// The TCP socket under the AMQP 1.0 client's connection driver: a non-blocking connect (the
// client's loop polls for its completion within its own deadlines), and reads and writes
// that never block. TLS and SASL are not here: Proton's transport layer does them on the
// bytes that pass through.
//
// Thread-safety: a value owned by one thread at a time (the client's I/O lock).

#include <cstddef>
#include <cstdint>
#include <string>

namespace babelqueue::inline v1::amqp10::detail {

class tcp_socket {
 public:
  tcp_socket() = default;
  ~tcp_socket() { close(); }
  tcp_socket(const tcp_socket&) = delete;
  tcp_socket& operator=(const tcp_socket&) = delete;

  /// Resolves host:port and starts a non-blocking connect to the first address that takes
  /// one (TCP_NODELAY: frames are written whole by the driver). Empty on success, else why.
  std::string start_connect(const std::string& host, std::uint16_t port);
  /// After the socket became writable: empty when the connect succeeded, else why.
  std::string finish_connect();

  /// Bytes read (> 0), 0 at end of stream, -1 when nothing is there now, -2 on an error
  /// (error() says which).
  std::ptrdiff_t read_some(char* data, std::size_t size);
  /// Bytes written (>= 0; 0 when the socket is full now), -2 on an error.
  std::ptrdiff_t write_some(const char* data, std::size_t size);

  int fd() const noexcept { return fd_; }
  bool open() const noexcept { return fd_ >= 0; }
  const std::string& error() const noexcept { return error_; }
  void close() noexcept;

 private:
  int fd_ = -1;
  std::string error_;
};

}  // namespace babelqueue::inline v1::amqp10::detail
