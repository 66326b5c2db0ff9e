// wrap_claiming() after a crash: the worker holding the claim is SIGKILLed mid-handler (a
// forked process on the same sqlite:// queue file and sqlite claim store). Its delivery comes
// back after the queue's visibility timeout while its claim still lives; the duplicate is
// parked (defer_delivery: no attempt counted) until the claim's ttl passes, then claims the
// id and runs. The effect runs exactly once; nothing is dropped or dead-lettered because of
// the stale claim (with max_attempts 3 and a park every 100 ms, a park that counted an
// attempt would dead-letter it within half a second, long before the 3 s ttl).
#include <babelqueue/idempotency/sqlite_store.hpp>
#include <babelqueue/idempotency/wrap.hpp>
#include <babelqueue/runtime/app.hpp>
#include <babelqueue/runtime/url.hpp>
#include <babelqueue/sqlite/sqlite_transport.hpp>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace {

using namespace babelqueue;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

const std::string body =
    R"({"job":"urn:orders:charge","trace_id":"t-crash","data":{"order":7},)"
    R"("meta":{"id":"m-crash","queue":"default","schema_version":1},"attempts":0})";

TEST(ClaimingWrapCrash, AHolderKilledMidHandlerLeavesAClaimThatDelaysButNeverDropsTheEffect) {
  sqlite::register_transport();
  const fs::path dir = fs::temp_directory_path() / ("bq-claim-crash-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string url = "sqlite://" + (dir / "q.db").string() + "?visibility_timeout=1s";
  const std::string claims = (dir / "claims.db").string();
  const fs::path marker = dir / "claimed";
  const idempotency::claim_options claim{.ttl = 3s, .park_delay = 100ms};
  {
    auto t = open_transport(url).value();
    ASSERT_TRUE(t->publish("default", body));
  }

  const pid_t holder = ::fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    // The holder: claims the id, marks that it did, and hangs in its handler until killed.
    auto store =
        std::shared_ptr<idempotency::sqlite_store>(idempotency::sqlite_store::open(claims).value());
    (void)store->migrate();
    app a(url);
    a.handle("urn:orders:charge", idempotency::wrap_claiming(
                                      store,
                                      [&](message&) {
                                        std::ofstream(marker) << "claimed";
                                        for (;;) ::pause();
                                      },
                                      claim));
    (void)a.drain();
    ::_exit(3);  // not reached
  }
  for (int i = 0; i < 200 && !fs::exists(marker); ++i) std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(fs::exists(marker)) << "the holder never claimed";
  ASSERT_EQ(::kill(holder, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(holder, &status, 0), holder);
  ASSERT_TRUE(WIFSIGNALED(status));
  const auto killed_at = std::chrono::steady_clock::now();

  auto store =
      std::shared_ptr<idempotency::sqlite_store>(idempotency::sqlite_store::open(claims).value());
  app_options o;
  o.max_attempts = 3;
  o.dead_letter = true;
  o.retry = retry_policy{100ms, 1.0, 100ms, 0.0};  // were a park an attempt: the DLQ in 0.3 s
  o.poll_timeout = 50ms;
  app a(url, o);
  int effects = 0;
  std::chrono::steady_clock::time_point ran_at{};
  a.handle("urn:orders:charge", idempotency::wrap_claiming(
                                    store,
                                    [&](message&) {
                                      ++effects;
                                      ran_at = std::chrono::steady_clock::now();
                                    },
                                    claim));
  const auto give_up = killed_at + 15s;
  while (effects == 0 && std::chrono::steady_clock::now() < give_up) {
    (void)a.drain();
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(effects, 1) << "the effect never ran after the holder's claim expired";
  EXPECT_GE(ran_at - killed_at, 1500ms) << "ran before the dead holder's claim could expire";
  for (int i = 0; i < 10; ++i) {  // nothing comes round again
    (void)a.drain();
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(effects, 1);
  auto t = open_transport(url).value();
  EXPECT_TRUE(t->peek("default.dlq", 0, 10).value().empty()) << "dead-lettered by the claim";
  EXPECT_TRUE(t->peek("default", 0, 10).value().empty());
  EXPECT_TRUE(store->seen("m-crash").value());
  (void)t->close(std::chrono::steady_clock::now() + 1s);
  fs::remove_all(dir);
}

}  // namespace
