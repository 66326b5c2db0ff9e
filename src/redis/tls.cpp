#include "redis/tls.hpp"

#include "redis/errors.hpp"
#include "redis/socket_io.hpp"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace babelqueue::inline v1::redis::detail {

namespace {

// The reason of the newest OpenSSL error on this thread's queue (the queue is cleared).
std::string openssl_reason(const char* fallback) {
  unsigned long e = 0, last = 0;
  while ((e = ERR_get_error()) != 0) last = e;
  if (last == 0) return fallback;
  char buf[256];
  ERR_error_string_n(last, buf, sizeof buf);
  return buf;
}

bool is_ip_address(const std::string& host) {
  unsigned char buf[16];
  return ::inet_pton(AF_INET, host.c_str(), buf) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// -- the socket BIO ----------------------------------------------------------------------
// Its data is a tls_socket_io (fd + errno of the last failed call). The calls are
// socket_io.hpp's (MSG_NOSIGNAL, EINTR retried); every other failure is final (no retry
// flags: the socket is blocking with timeouts).

int bio_write(BIO* bio, const char* data, int size) {
  auto* io = static_cast<tls_socket_io*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  return static_cast<int>(
      send_nosignal(io->fd, data, static_cast<std::size_t>(size), io->last_errno));
}

int bio_read(BIO* bio, char* data, int size) {
  auto* io = static_cast<tls_socket_io*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  return static_cast<int>(
      recv_retrying(io->fd, data, static_cast<std::size_t>(size), io->last_errno));
}

long bio_ctrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

int bio_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

const BIO_METHOD* socket_bio_method() {
  // Created once; BIO_METHODs are immutable after setup and safe to share.
  static const BIO_METHOD* method = [] {
    BIO_METHOD* m =
        BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "babelqueue redis socket");
    if (m == nullptr) return static_cast<BIO_METHOD*>(nullptr);
    BIO_meth_set_write(m, bio_write);
    BIO_meth_set_read(m, bio_read);
    BIO_meth_set_ctrl(m, bio_ctrl);
    BIO_meth_set_create(m, bio_create);
    return m;
  }();
  return method;
}

}  // namespace

// -- tls_client --------------------------------------------------------------------------

result<std::unique_ptr<tls_client>> tls_client::create(const options& opts) {
  std::unique_ptr<tls_client> c(new tls_client(opts));
  ERR_clear_error();
  c->ctx_ = SSL_CTX_new(TLS_client_method());
  if (c->ctx_ == nullptr) {
    return fail(redis_error(fault::tls, "TLS setup failed", openssl_reason("SSL_CTX_new")));
  }
  SSL_CTX_set_min_proto_version(c->ctx_, TLS1_2_VERSION);
  SSL_CTX_set_mode(c->ctx_, SSL_MODE_AUTO_RETRY);
  if (opts.tls_verify) {
    SSL_CTX_set_verify(c->ctx_, SSL_VERIFY_PEER, nullptr);
    if (!opts.tls_ca_file.empty()) {
      if (SSL_CTX_load_verify_locations(c->ctx_, opts.tls_ca_file.c_str(), nullptr) != 1) {
        return fail(transport_errc::invalid_argument,
                    "redis tls_ca_file '" + opts.tls_ca_file +
                        "' cannot be loaded: " + openssl_reason("?"));
      }
    } else if (SSL_CTX_set_default_verify_paths(c->ctx_) != 1) {
      return fail(transport_errc::invalid_argument,
                  "the system's TLS trust store cannot be loaded: " + openssl_reason("?"));
    }
  } else {
    SSL_CTX_set_verify(c->ctx_, SSL_VERIFY_NONE, nullptr);
  }
  if (!opts.tls_cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(c->ctx_, opts.tls_cert_file.c_str()) != 1) {
      return fail(transport_errc::invalid_argument,
                  "redis tls_cert_file '" + opts.tls_cert_file +
                      "' cannot be loaded: " + openssl_reason("?"));
    }
    if (SSL_CTX_use_PrivateKey_file(c->ctx_, opts.tls_key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(c->ctx_) != 1) {
      return fail(transport_errc::invalid_argument, "redis tls_key_file '" + opts.tls_key_file +
                                                        "' cannot be loaded or does not match the "
                                                        "certificate: " +
                                                        openssl_reason("?"));
    }
  }
  return c;
}

tls_client::~tls_client() {
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
}

result<std::unique_ptr<tls_stream>> tls_client::handshake(int fd) const {
  const BIO_METHOD* method = socket_bio_method();
  if (method == nullptr) return fail(redis_error(fault::tls, "TLS setup failed", "BIO_meth_new"));
  std::unique_ptr<tls_stream> s(new tls_stream());
  s->io_->fd = fd;
  ERR_clear_error();
  s->ssl_ = SSL_new(ctx_);
  BIO* bio = s->ssl_ != nullptr ? BIO_new(method) : nullptr;
  if (bio == nullptr) {
    return fail(redis_error(fault::tls, "TLS setup failed", openssl_reason("SSL_new")));
  }
  BIO_set_data(bio, s->io_.get());
  SSL_set_bio(s->ssl_, bio, bio);  // the SSL owns the BIO from here

  const std::string& name = opts_.tls_server_name.empty() ? opts_.host : opts_.tls_server_name;
  const bool ip = is_ip_address(name);
  if (!ip) SSL_set_tlsext_host_name(s->ssl_, name.c_str());
  if (opts_.tls_verify) {
    X509_VERIFY_PARAM* param = SSL_get0_param(s->ssl_);
    int ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str())
                : X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
    if (ok != 1) {
      return fail(transport_errc::invalid_argument,
                  "redis TLS server name '" + name + "' is not usable");
    }
  }
  int r = SSL_connect(s->ssl_);
  if (r == 1) return s;
  long verify = SSL_get_verify_result(s->ssl_);
  if (opts_.tls_verify && verify != X509_V_OK) {
    return fail(redis_error(
        fault::tls, "TLS handshake with " + opts_.host,
        std::string("certificate verify failed (") + X509_verify_cert_error_string(verify) + ")"));
  }
  s->fail(r, "TLS handshake");
  return fail(redis_error(fault::tls, "TLS handshake with " + opts_.host + " failed", s->error()));
}

// -- tls_stream --------------------------------------------------------------------------

tls_stream::~tls_stream() {
  // No close_notify: it would write to a socket that may be dead; the socket is closed by
  // hiredis right after.
  if (ssl_ != nullptr) SSL_free(ssl_);
}

bool tls_stream::timed_out() const noexcept { return is_timeout(io_->last_errno); }

long tls_stream::fail(int ret, const char* what) {
  int e = SSL_get_error(ssl_, ret);
  if (io_->last_errno != 0) {
    error_ = std::string(what) + ": " + std::strerror(io_->last_errno);
  } else if (e == SSL_ERROR_ZERO_RETURN) {
    error_ = std::string(what) + ": the server closed the TLS session";
  } else {
    error_ = std::string(what) + ": " + openssl_reason("the connection was closed");
  }
  return -1;
}

long tls_stream::write(const char* data, std::size_t size) {
  io_->last_errno = 0;
  ERR_clear_error();
  int n = SSL_write(ssl_, data, static_cast<int>(std::min<std::size_t>(size, INT_MAX)));
  if (n > 0) return n;
  return fail(n, "TLS write");
}

long tls_stream::read(char* data, std::size_t size) {
  io_->last_errno = 0;
  ERR_clear_error();
  int n = SSL_read(ssl_, data, static_cast<int>(std::min<std::size_t>(size, INT_MAX)));
  if (n > 0) return n;
  if (SSL_get_error(ssl_, n) == SSL_ERROR_ZERO_RETURN) return 0;
  return fail(n, "TLS read");
}

}  // namespace babelqueue::inline v1::redis::detail
