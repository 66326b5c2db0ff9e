// Live interop of redis://…?laravel=1 on a real redis-server with
//  - Laravel itself: Illuminate\Queue\RedisQueue and RedisJob from Debian's php-illuminate-queue
//    8.83 over php-redis (tests/interop/laravel_peer.php), so Laravel's own Lua scripts run as
//    a Laravel worker runs them, with the Redis connection prefix phpredis puts on every key;
//  - the Python SDK's Laravel-compatible layout (tests/interop/laravel_python_peer.py).
// Both directions, crashes on both sides (an expired reservation recovered by the other), and
// the bytes Laravel's scripts rewrite. Without php + Laravel or the Python peer the tests
// skip, except under CI (CI=true), where they fail.
#include "interop/python_peer.hpp"
#include "redis/redis_server.hpp"
#include "support/files.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/redis/redis_transport.hpp>
#include <babelqueue/runtime/app.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace std::chrono_literals;
using babelqueue::json;

#ifndef BABELQUEUE_PHP
#define BABELQUEUE_PHP ""
#endif

namespace {

namespace bqr = babelqueue::redis;
using bqtest::interop::cases;
using bqtest::interop::run_peer;
using bqtest::interop::seen_message;
using bqtest::interop::seen_of;

// Laravel's default connection prefix for an app named "laravel", and its `queues:`.
constexpr const char* k_connection_prefix = "laravel_database_";
constexpr const char* k_prefix = "laravel_database_queues:";

bool have_laravel() {
  return !std::string(BABELQUEUE_PHP).empty() &&
         std::filesystem::exists("/usr/share/php/Illuminate/Queue/RedisQueue.php") &&
         std::filesystem::exists("/usr/share/php/Illuminate/Redis/RedisManager.php");
}

// The cases both directions exchange, minus the one with headers (Laravel jobs have none).
std::vector<bqtest::interop::test_case> laravel_cases() {
  auto all = cases();
  std::erase_if(all, [](const auto& c) { return !c.hdrs.empty(); });
  return all;
}

// An envelope whose bytes cjson rewrites: a `/` (escaped `\/`), a float and an integer with
// more digits than cjson's 14, and keys in the canonical order (cjson uses hash order).
std::string rewritable_envelope() {
  babelqueue::json data =
      babelqueue::parse_json(R"({"path":"a/b","x":0.30000000000000004,"n":1234567890123456789})")
          .value();
  babelqueue::make_options eo;
  eo.trace_id = "trace/laravel";
  auto env = babelqueue::make("urn:babel:interop:laravel", data, eo);
  return babelqueue::encode(env.value()).value();
}

class LaravelInterop : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = bqtest::redis_server::start({}, why_); }
  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override {
    if (!server_) {
      if (bqtest::under_ci()) FAIL() << "CI=true and no redis-server: " << why_;
      GTEST_SKIP() << "no redis-server: " << why_;
    }
    bqtest::raw_command(server_->port(), "FLUSHALL");
    bqr::register_transport();
  }

  bqr::options opts(std::optional<std::chrono::seconds> retry_after = std::chrono::seconds(90)) {
    bqr::options o;
    o.port = static_cast<std::uint16_t>(server_->port());
    o.laravel = true;
    o.prefix = k_prefix;
    o.retry_after = retry_after;
    return o;
  }
  std::unique_ptr<bqr::redis_transport> open(bqr::options o) {
    auto t = bqr::redis_transport::open(std::move(o));
    EXPECT_TRUE(t) << t.error().message;
    return t ? std::move(*t) : nullptr;
  }
  std::string app_url() const {
    return server_->url() + "/0?laravel=1&prefix=" + std::string(k_prefix);
  }
  long long keys_count() {
    auto r = bqtest::raw_command(server_->port(), "DBSIZE");
    return r.size() > 1 ? std::stoll(r.substr(1)) : -1;
  }

  static inline std::unique_ptr<bqtest::redis_server> server_;
  static inline std::string why_;
};

class LaravelPhpInterop : public LaravelInterop {
 protected:
  void SetUp() override {
    LaravelInterop::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!have_laravel()) {
      if (bqtest::under_ci()) {
        FAIL() << "CI=true but no php + Laravel (apt-get install php-cli php-redis "
                  "php-illuminate-queue php-illuminate-redis)";
      }
      GTEST_SKIP() << "no php + Laravel queue (Debian php-illuminate-queue, php-redis)";
    }
  }
  // laravel_peer.php PORT PREFIX RETRY_AFTER COMMAND QUEUE ARGS…
  std::vector<json> laravel(int retry_after, const std::vector<std::string>& args) {
    std::vector<std::string> all = {std::to_string(server_->port()), k_connection_prefix,
                                    std::to_string(retry_after)};
    all.insert(all.end(), args.begin(), args.end());
    return run_peer(BABELQUEUE_PHP, "laravel_peer.php", all);
  }
  // The jobs for the peer's `push`, one per line, in a file removed with the test.
  std::string lines_file(const std::vector<std::string>& lines) {
    lines_path_ = std::filesystem::temp_directory_path() /
                  ("bq-laravel-" + std::to_string(::getpid()) + ".txt");
    std::ofstream f(lines_path_, std::ios::binary);
    for (const auto& l : lines) f << l << '\n';
    return lines_path_.string();
  }
  void TearDown() override {
    std::error_code ignored;
    if (!lines_path_.empty()) std::filesystem::remove(lines_path_, ignored);
    LaravelInterop::TearDown();
  }
  std::filesystem::path lines_path_;
};

}  // namespace

TEST_F(LaravelPhpInterop, CppPublishesLaravelConsumesTheExactBytes) {
  auto t = open(opts());
  std::vector<std::string> sent;
  for (const auto& c : laravel_cases()) {
    babelqueue::make_options eo;
    eo.trace_id = c.trace_id;
    sent.push_back(babelqueue::encode(babelqueue::make(c.urn, c.data, eo).value()).value());
    ASSERT_TRUE(t->publish("orders", sent.back()));
  }
  auto got = laravel(90, {"pop", "orders", std::to_string(sent.size()), "delete"});
  ASSERT_EQ(got.size(), sent.size());
  for (std::size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(got[i]["raw"], sent[i]);  // Laravel's getRawBody(): our bytes
    EXPECT_EQ(got[i]["attempts"], 1);   // Laravel counts this delivery
    auto reserved = babelqueue::decode(got[i]["reserved"].get<std::string>());
    ASSERT_TRUE(reserved);
    EXPECT_EQ(reserved->attempts(), 1);
  }
  EXPECT_EQ(keys_count(), 0);  // delete = ZREM; the notify tokens were popped one per job
}

TEST_F(LaravelPhpInterop, LaravelPushesCppConsumesWithTheRuntime) {
  std::vector<std::string> sent;
  for (const auto& c : laravel_cases()) {
    babelqueue::make_options eo;
    eo.trace_id = c.trace_id;
    sent.push_back(babelqueue::encode(babelqueue::make(c.urn, c.data, eo).value()).value());
  }
  laravel(90, {"push", "orders", lines_file(sent)});
  babelqueue::app_options ao;
  ao.queue = "orders";
  ao.poll_timeout = 300ms;
  babelqueue::app app(app_url(), ao);
  std::vector<seen_message> seen;
  app.handle_unmatched([&](babelqueue::message& m) { seen.push_back(seen_of(m)); });
  auto n = app.drain("orders");
  ASSERT_TRUE(n) << n.error().message;
  ASSERT_EQ(seen.size(), sent.size());
  for (std::size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(seen[i].raw, sent[i]);
    EXPECT_EQ(seen[i].attempts, 0);
  }
  EXPECT_EQ(keys_count(), 0);
}

// A C++ release with a delay lands in :delayed, Laravel's own migration brings it back with
// the same bytes; Laravel's release re-queues its reserved member, which is what its scripts
// rewrite: cjson's encoding (hash key order, `/` as `\/`, 14 significant digits) with
// attempts + 1. The C++ consumer then gets exactly those bytes.
TEST_F(LaravelPhpInterop, ReleasesCrossBothWaysAndShowWhatCjsonRewrites) {
  auto t = open(opts());
  const std::string original = rewritable_envelope();
  ASSERT_TRUE(t->publish("orders", original));
  auto first = t->receive("orders", 0ms);
  ASSERT_TRUE(first && first->has_value());
  EXPECT_EQ((*first)->body, original);
  ASSERT_TRUE(t->release(**first, 1s));

  auto laravel_got = laravel(90, {"pop", "orders", "1", "release:0"});  // waits until due
  ASSERT_EQ(laravel_got.size(), 1u);
  EXPECT_EQ(laravel_got[0]["raw"], original);
  EXPECT_EQ(laravel_got[0]["attempts"], 1);
  const std::string rewritten = laravel_got[0]["reserved"].get<std::string>();

  auto again = t->receive("orders", 5s);  // Laravel released into :delayed at now: migrated
  ASSERT_TRUE(again) << again.error().message;
  ASSERT_TRUE(again->has_value());
  const std::string& body = (*again)->body;
  EXPECT_EQ(body, rewritten);
  EXPECT_NE(body, original);
  EXPECT_NE(body.find(R"("trace_id":"trace\/laravel")"), std::string::npos) << body;
  EXPECT_NE(body.find("1.2345678901235e+18"), std::string::npos) << body;
  EXPECT_NE(body.find(R"("x":0.3)"), std::string::npos) << body;
  auto env = babelqueue::decode(body);
  ASSERT_TRUE(env) << env.error().message;
  EXPECT_EQ(env->attempts(), 1);
  EXPECT_EQ(env->trace_id(), "trace/laravel");  // the trace survives every hop
  ASSERT_TRUE(t->ack(**again));
  ASSERT_TRUE(t->flush());
  EXPECT_EQ(keys_count(), 0);
}

TEST_F(LaravelPhpInterop, ALaravelWorkerThatDiedIsRecoveredByCpp) {
  auto t = open(opts());
  const std::string job = rewritable_envelope();
  ASSERT_TRUE(t->publish("orders", job));
  auto held = laravel(1, {"pop", "orders", "1", "keep"});  // reserved for 1 s, never deleted
  ASSERT_EQ(held.size(), 1u);
  auto got = t->receive("orders", 5s);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->body, held[0]["reserved"].get<std::string>());  // a lapsed attempt counts
  EXPECT_EQ(babelqueue::decode((*got)->body)->attempts(), 1);
  ASSERT_TRUE(t->ack(**got));
  ASSERT_TRUE(t->flush());
  EXPECT_EQ(keys_count(), 0);
}

TEST_F(LaravelPhpInterop, ACppWorkerThatDiedIsRecoveredByLaravel) {
  const std::string job = rewritable_envelope();
  {
    auto t = open(opts(std::chrono::seconds(1)));
    ASSERT_TRUE(t->publish("orders", job));
    auto got = t->receive("orders", 0ms);
    ASSERT_TRUE(got && got->has_value());
    // dies holding it: no ack
  }
  auto laravel_got = laravel(90, {"pop", "orders", "1", "delete"});  // polls until it lapsed
  ASSERT_EQ(laravel_got.size(), 1u);
  EXPECT_EQ(laravel_got[0]["attempts"], 2);  // our reservation counted, and Laravel's own
  auto raw = babelqueue::decode(laravel_got[0]["raw"].get<std::string>());
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->attempts(), 1);
  EXPECT_EQ(keys_count(), 0);
}

// The C++ runtime fails a Laravel-pushed job max_attempts times (counted once per delivery)
// and dead-letters it to `<prefix><queue>.dlq`, where a Laravel worker of `orders.dlq` finds it.
TEST_F(LaravelPhpInterop, CppDeadLettersALaravelJobWhereLaravelReadsIt) {
  babelqueue::make_options mo;
  mo.queue = "orders";
  const std::string job =
      babelqueue::encode(babelqueue::make("urn:babel:interop:fails", json{{"n", 1}}, mo).value())
          .value();
  laravel(90, {"push", "orders", lines_file({job})});
  babelqueue::app_options ao;
  ao.queue = "orders";
  ao.poll_timeout = 300ms;
  ao.dead_letter = true;
  ao.max_attempts = 3;
  babelqueue::app app(app_url(), ao);
  std::vector<std::int64_t> seen;
  app.handle("urn:babel:interop:fails", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    throw std::runtime_error("cpp handler fails");
  });
  auto n = app.drain("orders");
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2}));
  auto dlq = laravel(90, {"pop", "orders.dlq", "1", "delete"});
  ASSERT_EQ(dlq.size(), 1u);
  auto dead = babelqueue::parse_json(dlq[0]["raw"].get<std::string>());
  ASSERT_TRUE(dead);
  EXPECT_EQ((*dead)["attempts"], 3);
  EXPECT_EQ((*dead)["dead_letter"]["reason"], "failed");
  EXPECT_EQ((*dead)["dead_letter"]["original_queue"], "orders");
  EXPECT_EQ(keys_count(), 0);
}

// -- the Python SDK's Laravel-compatible layout -----------------------------------------------

class LaravelPythonInterop : public LaravelInterop {
 protected:
  void SetUp() override {
    LaravelInterop::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    python_ = babelqueue::test::peer_python();
    if (python_.empty()) {
      if (bqtest::under_ci())
        FAIL() << "CI=true but no Python peer (run scripts/setup-python-peer.sh)";
      GTEST_SKIP() << "no Python peer: run scripts/setup-python-peer.sh";
    }
  }
  std::vector<json> python(const std::string& cmd, const std::vector<std::string>& args) {
    std::vector<std::string> all = {cmd, server_->url() + "/0", k_prefix};
    all.insert(all.end(), args.begin(), args.end());
    return run_peer(python_, "laravel_python_peer.py", all);
  }
  std::string python_;
};

std::string laravel_cases_json() {
  json spec = json::array();
  for (const auto& c : laravel_cases()) {
    spec.push_back(
        {{"urn", c.urn}, {"data", c.data}, {"trace_id", c.trace_id}, {"headers", json::object()}});
  }
  return babelqueue::to_canonical_json(spec).value();
}

TEST_F(LaravelPythonInterop, PythonPublishesCppConsumes) {
  auto ids = python("publish", {"orders", laravel_cases_json()});
  auto expected = laravel_cases();
  ASSERT_EQ(ids.size(), expected.size());
  babelqueue::app_options ao;
  ao.queue = "orders";
  ao.poll_timeout = 300ms;
  babelqueue::app app(app_url(), ao);
  std::vector<seen_message> seen;
  app.handle_unmatched([&](babelqueue::message& m) { seen.push_back(seen_of(m)); });
  auto n = app.drain("orders");
  ASSERT_TRUE(n) << n.error().message;
  ASSERT_EQ(seen.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(seen[i].data, expected[i].data);
    EXPECT_EQ(seen[i].trace_id, expected[i].trace_id);
    EXPECT_EQ(seen[i].attempts, 0);
  }
  EXPECT_EQ(keys_count(), 0);
}

TEST_F(LaravelPythonInterop, CppPublishesPythonConsumes) {
  auto expected = laravel_cases();
  {
    babelqueue::app_options ao;
    ao.queue = "orders";
    babelqueue::app app(app_url(), ao);
    for (const auto& c : expected) {
      babelqueue::publish_options p;
      p.trace_id = c.trace_id;
      ASSERT_TRUE(app.publish(c.urn, c.data, p));
    }
  }
  auto seen = python("consume", {"orders", std::to_string(expected.size())});
  ASSERT_EQ(seen.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(seen[i]["data"], expected[i].data);
    EXPECT_EQ(seen[i]["trace_id"], expected[i].trace_id);
    EXPECT_EQ(seen[i]["attempts"], 0);
    EXPECT_EQ(seen[i]["meta"]["lang"], "cpp");
  }
  EXPECT_EQ(keys_count(), 0);
}

// A C++ retry copy (pushed with its notify token) is consumed by the Python runtime with the
// attempts the C++ runtime gave it, and the count goes on from there.
TEST_F(LaravelPythonInterop, RetryCountsCarryOverFromCppToPython) {
  babelqueue::app_options ao;
  ao.queue = "orders";
  ao.poll_timeout = 300ms;
  ao.max_attempts = 3;
  // The count is what crosses over here, not the time: the retry copy is due at once (a
  // backed-off one could still wait in `:delayed` when the Python worker looks).
  ao.retry = babelqueue::retry_policy::immediate();
  babelqueue::app app(app_url(), ao);
  ASSERT_TRUE(app.publish("urn:babel:interop:fails", json{{"n", 1}}));
  int runs = 0;
  app.handle("urn:babel:interop:fails", [&](babelqueue::message&) {
    ++runs;
    app.stop();  // one C++ delivery, then the Python runtime takes over
    throw std::runtime_error("first try fails in C++");
  });
  auto n = app.drain("orders", 1);
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(runs, 1);
  auto py = python("failing", {"orders"});
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["seen"], babelqueue::parse_json("[1,2]").value());
  EXPECT_EQ(bqtest::raw_command(server_->port(), std::string("LLEN ") + k_prefix + "orders.dlq"),
            ":1");
}
