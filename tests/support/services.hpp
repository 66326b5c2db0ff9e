#pragma once
// What every live-broker test fixture shares: reading the services.sh environment, whether
// a missing server is a failure (CI) or a skip, names no other test uses, a small envelope,
// and the guard for the Python peer. Header-only, for tests/<transport>/*_fixture.hpp and
// tests/interop/*.
#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>

namespace bqtest {

inline std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

/// Under CI (CI=true) or BABELQUEUE_REQUIRE_SERVICES=1 a missing server fails the test.
inline bool services_required() {
  return env_or_empty("BABELQUEUE_REQUIRE_SERVICES") == "1" || env_or_empty("CI") == "true";
}

/// A queue / topic / group name no other test (or test process) uses.
inline std::string unique_name(const std::string& prefix = "bq-test") {
  static std::atomic<int> n{0};
  return prefix + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 1000000) +
         "-" + std::to_string(n.fetch_add(1));
}

/// A fresh envelope `{"n": n}` of `urn`, canonical.
inline std::string envelope_text(long n, const std::string& urn = "urn:babel:test:item",
                                 const std::string& queue = "test") {
  babelqueue::make_options mo;
  mo.queue = queue;
  auto env = babelqueue::make(urn, babelqueue::json{{"n", n}}, mo).value();
  return babelqueue::encode(env).value();
}

}  // namespace bqtest

/// In a fixture's SetUp(): fails (CI) or skips the test when `url_or_host` (the server's
/// address from services.env) is empty; `what` names the server and its services.sh name.
#define BQ_REQUIRE_SERVICE(url_or_host, what, service)                  \
  do {                                                                  \
    if ((url_or_host).empty()) {                                        \
      if (bqtest::services_required()) {                                \
        FAIL() << "no " what ": run scripts/services.sh start " service \
                  " and source build/services/services.env";            \
      }                                                                 \
      GTEST_SKIP() << "no " what ": scripts/services.sh start " service \
                      ", then source build/services/services.env";      \
    }                                                                   \
  } while (0)

/// In an interop fixture's SetUp(): `python` = the peer's interpreter, or fail (CI) / skip.
#define BQ_REQUIRE_PYTHON_PEER(python)                                               \
  do {                                                                               \
    (python) = babelqueue::test::peer_python();                                      \
    if ((python).empty()) {                                                          \
      if (bqtest::services_required()) {                                             \
        FAIL() << "CI=true / BABELQUEUE_REQUIRE_SERVICES=1 but no Python peer (run " \
                  "scripts/setup-python-peer.sh)";                                   \
      }                                                                              \
      GTEST_SKIP() << "no Python peer: set BABELQUEUE_PEER_PYTHON or run "           \
                      "scripts/setup-python-peer.sh";                                \
    }                                                                                \
  } while (0)
