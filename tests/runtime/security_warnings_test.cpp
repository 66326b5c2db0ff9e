// security_warnings() (transport.hpp): the shared rule every binding states its weakened
// settings with (runtime/binding_support.hpp), and the app logging them at `warn` once.
#include "runtime/binding_support.hpp"

#include <babelqueue/runtime/app.hpp>
#include <babelqueue/runtime/logging.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

using namespace babelqueue;
using babelqueue::detail::security_warnings_of;

TEST(SecurityWarnings, CertificateChecksOffAreSaidOnATlsConnection) {
  auto w = security_warnings_of({.scheme = "rediss",
                                 .tls = true,
                                 .tls_verify = false,
                                 .credential = "password",
                                 .host = "cache.example.com",
                                 .secure = "rediss://"});
  ASSERT_EQ(w.size(), 1u);  // the password travels inside TLS
  EXPECT_NE(w[0].find("tls_verify=false"), std::string::npos) << w[0];
  EXPECT_TRUE(security_warnings_of({.scheme = "rediss",
                                    .tls = true,
                                    .tls_verify = true,
                                    .credential = "password",
                                    .host = "cache.example.com",
                                    .secure = "rediss://"})
                  .empty());
}

TEST(SecurityWarnings, ACredentialSentWithoutTlsToAnotherMachineIsSaid) {
  auto w = security_warnings_of({.scheme = "amqp",
                                 .tls = false,
                                 .tls_verify = true,
                                 .credential = "password",
                                 .host = "mq.example.com",
                                 .secure = "amqps://"});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("password is sent without TLS to mq.example.com"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("amqps://"), std::string::npos) << w[0];
  for (const char* local : {"127.0.0.1", "localhost", "::1", "[::1]", ""}) {
    EXPECT_TRUE(security_warnings_of({.scheme = "amqp",
                                      .tls = false,
                                      .tls_verify = true,
                                      .credential = "password",
                                      .host = local,
                                      .secure = "amqps://"})
                    .empty())
        << local;  // loopback: no network to cross
  }
  EXPECT_TRUE(security_warnings_of({.scheme = "amqp",
                                    .tls = false,
                                    .tls_verify = true,
                                    .credential = "",
                                    .host = "mq.example.com",
                                    .secure = "amqps://"})
                  .empty());  // nothing secret is sent
}

// A transport that only says it is weakened (nothing is ever sent or received).
class weakened_transport final : public transport {
 public:
  result<void> publish(std::string_view, std::string_view, const headers&) override { return {}; }
  result<std::optional<received_message>> receive(std::string_view,
                                                  std::chrono::milliseconds) override {
    return std::optional<received_message>{};
  }
  result<void> ack(const received_message&) override { return {}; }
  result<void> release(const received_message&, std::chrono::milliseconds) override { return {}; }
  result<void> close(std::chrono::steady_clock::time_point) override { return {}; }
  std::string_view scheme() const noexcept override { return "weak"; }
  transport_capabilities capabilities() const noexcept override { return {}; }
  std::vector<std::string> security_warnings() const override {
    return {"weak: tls_verify=false: the server's certificate is not checked"};
  }
};

TEST(SecurityWarnings, TheAppLogsEachAtWarnOnceHoweverManyTransportsItOpens) {
  std::mutex m;
  std::vector<std::string> warned;
  app_options o;
  o.queue = "q";
  o.workers = 3;
  o.observers.push_back(observer_from_log_sink(
      [&](log_level level, std::string_view line) {
        std::lock_guard lock(m);
        if (level == log_level::warn) warned.emplace_back(line);
      },
      log_level::warn));
  int opened = 0;
  app a(
      [&]() -> result<std::unique_ptr<transport>> {
        ++opened;
        return std::unique_ptr<transport>(std::make_unique<weakened_transport>());
      },
      o);
  (void)a.drain("q");
  (void)a.drain("q");
  EXPECT_GE(opened, 3);
  ASSERT_EQ(warned.size(), 1u);
  EXPECT_NE(warned[0].find("tls_verify=false"), std::string::npos) << warned[0];
}

}  // namespace
