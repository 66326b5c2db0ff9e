#pragma once
// The fixture of the live Redis interop tests against the Python SDK (redis_python_test.cpp,
// typed_python_test.cpp): one private redis-server per suite, flushed before each test, and
// the peer's interpreter. Without a peer or a redis-server the tests skip, except under CI.
#include "redis/redis_server.hpp"
#include "support/files.hpp"

#include <babelqueue/redis/redis_transport.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace bqtest::interop {

class redis_python_fixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = bqtest::redis_server::start({}, why_); }
  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override {
    python_ = babelqueue::test::peer_python();
    if (python_.empty()) {
      if (bqtest::under_ci())
        FAIL() << "CI=true but no Python peer (run scripts/setup-python-peer.sh)";
      GTEST_SKIP()
          << "no Python peer: set BABELQUEUE_PEER_PYTHON or run scripts/setup-python-peer.sh";
    }
    if (!server_) {
      if (bqtest::under_ci()) FAIL() << "CI=true and no redis-server: " << why_;
      GTEST_SKIP() << "no redis-server: " << why_;
    }
    babelqueue::redis::register_transport();
    bqtest::raw_command(server_->port(), "FLUSHALL");
    url_ = server_->url() + "/0";
  }

  static inline std::unique_ptr<bqtest::redis_server> server_;
  static inline std::string why_;
  std::string python_;
  std::string url_;
};

}  // namespace bqtest::interop
