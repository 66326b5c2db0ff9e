#pragma once
// Throwaway TLS material for tests against a redis-server serving TLS (tests/redis/tls_test.cpp,
// tests/idempotency/redis_store_test.cpp): made with the openssl CLI once per test process.
#include "support/files.hpp"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace bqtest {

// Makes ca.crt, server.{crt,key} (SAN localhost + 127.0.0.1), client.{crt,key} and
// other-ca.crt (an unrelated CA) in `dir`; false when openssl is missing or fails.
inline bool make_certificates(const std::string& dir, std::string& why) {
  const std::string d = babelqueue::test::shell_quote(dir);
  const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  std::string script =
      "set -e; mkdir -p " + d + "; cd " + d + "; exec >openssl.log 2>&1\n" + "openssl req -x509 " +
      key + " -keyout ca.key -out ca.crt -days 2 -subj /CN=bq-test-ca\n" + "openssl req -x509 " +
      key + " -keyout other-ca.key -out other-ca.crt -days 2 -subj /CN=bq-other-ca\n" +
      "openssl req " + key + " -keyout server.key -out server.csr -subj /CN=localhost\n" +
      "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > server.ext\n" +
      "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
      "-out server.crt -days 2 -extfile server.ext\n" +
      "openssl req " + key + " -keyout client.key -out client.csr -subj /CN=bq-client\n" +
      "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
      "-out client.crt -days 2\n" +
      "chmod 644 *.key\n";
  if (std::system(("sh -c " + babelqueue::test::shell_quote(script)).c_str()) != 0) {
    why = "openssl could not make test certificates: " +
          babelqueue::test::read_file(dir + "/openssl.log");
    return false;
  }
  return true;
}

/// One directory of throwaway certificates per test process, removed when the process ends
/// (the servers that read them are stopped by their fixtures before that).
inline std::string cert_dir() {
  struct temp_dir {
    std::string path;
    ~temp_dir() {
      std::error_code ignored;
      if (!path.empty()) std::filesystem::remove_all(path, ignored);
    }
  };
  static const temp_dir dir = [] {
    char tmpl[] = "/tmp/bq-redis-tls-XXXXXX";
    return temp_dir{::mkdtemp(tmpl) != nullptr ? tmpl : ""};
  }();
  return dir.path;
}

}  // namespace bqtest
