#pragma once
// TLS for the redis connection (`rediss://`) on OpenSSL. Debian's hiredis 0.14 has no TLS,
// but the connection already does its own socket I/O and uses hiredis only to make the TCP
// connection and parse replies, so TLS slots in between: hiredis makes the TCP connection,
// tls_client runs the handshake on its socket, and tls_stream replaces send/recv.
//
// The socket BIO is this file's own: it writes with send(MSG_NOSIGNAL) (OpenSSL's socket BIO
// writes with write(2), which raises SIGPIPE when the server has gone away) and keeps the
// errno of the last failed call, so a socket timeout (SO_RCVTIMEO/SO_SNDTIMEO, set by the
// connection) is reported as a timeout.
//
// Thread-safety: a tls_client may be shared by connections on any threads once created
// (SSL_CTX is thread-safe after setup); a tls_stream is used by one thread at a time.
#include <babelqueue/redis/redis_transport.hpp>
#include <babelqueue/result.hpp>

#include <cstddef>
#include <memory>
#include <string>

// OpenSSL's SSL_CTX and SSL, declared here so that only tls.cpp includes OpenSSL.
struct ssl_ctx_st;
struct ssl_st;

namespace babelqueue::inline v1::redis::detail {

class tls_stream;

/// The socket under a tls_stream and the errno of its last failed call (the BIO's data).
struct tls_socket_io {
  int fd = -1;
  int last_errno = 0;
};

/// The TLS settings of one transport: trust anchors, optional client certificate, checks.
class tls_client {
 public:
  /// transport_errc::invalid_argument when a CA, certificate or key file cannot be loaded (retrying
  /// would not help); the message names the file and OpenSSL's reason.
  static result<std::unique_ptr<tls_client>> create(const options& opts);
  ~tls_client();
  tls_client(const tls_client&) = delete;
  tls_client& operator=(const tls_client&) = delete;

  /// Runs the handshake on a connected socket whose timeouts bound it. Verifies the
  /// server's certificate chain and its name (`tls_server_name`, else `host`; an IP address
  /// is matched against the certificate's IP SANs) unless `tls_verify` is off.
  /// transport_errc::unavailable with OpenSSL's reason (e.g. "certificate verify failed: ...").
  result<std::unique_ptr<tls_stream>> handshake(int fd) const;

 private:
  explicit tls_client(const options& opts) : opts_(opts) {}
  const options& opts_;
  ::ssl_ctx_st* ctx_ = nullptr;
};

/// One TLS session over a socket it does not own (hiredis closes the socket).
class tls_stream {
 public:
  ~tls_stream();
  tls_stream(const tls_stream&) = delete;
  tls_stream& operator=(const tls_stream&) = delete;

  /// Like send(2)/recv(2): the bytes moved (> 0), or -1 on failure — then error() says why
  /// and timed_out() whether the socket timeout expired. read() returns 0 when the server
  /// closed the session cleanly.
  long write(const char* data, std::size_t size);
  long read(char* data, std::size_t size);
  const std::string& error() const noexcept { return error_; }
  bool timed_out() const noexcept;

 private:
  friend class tls_client;
  tls_stream() = default;
  long fail(int ret, const char* what);

  ::ssl_st* ssl_ = nullptr;
  std::unique_ptr<tls_socket_io> io_ = std::make_unique<tls_socket_io>();
  std::string error_;
};

}  // namespace babelqueue::inline v1::redis::detail
