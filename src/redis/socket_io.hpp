#pragma once
// The two socket calls of the redis connection, shared by its plain path (connection.cpp)
// and its TLS socket BIO (tls.cpp): send(2) with MSG_NOSIGNAL (hiredis 0.14 and OpenSSL's
// own socket BIO write with write(2), which raises SIGPIPE when the server has gone away)
// and recv(2), both retried on EINTR. The sockets are blocking with SO_SNDTIMEO/SO_RCVTIMEO,
// so EAGAIN/EWOULDBLOCK means the timeout expired.
#include <sys/socket.h>

#include <cerrno>
#include <cstddef>

namespace babelqueue::inline v1::redis::detail {

/// Bytes sent, or -1 with the errno in `err`.
inline long send_nosignal(int fd, const char* data, std::size_t size, int& err) {
  for (;;) {
    ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    err = errno;
    return -1;
  }
}

/// Bytes received (0 = the peer closed the connection), or -1 with the errno in `err`.
inline long recv_retrying(int fd, char* data, std::size_t size, int& err) {
  for (;;) {
    ssize_t n = ::recv(fd, data, size, 0);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    err = errno;
    return -1;
  }
}

/// Whether a failed call's errno means the socket timeout expired.
inline bool is_timeout(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

}  // namespace babelqueue::inline v1::redis::detail
