// The crash-and-restart matrix (issue #38): on every broker, N messages consumed by four
// worker processes (crash_worker.cpp) while each worker's first incarnation SIGKILLs itself
// mid-handler — the message taken, its effect not made, no ack — and, halfway, the broker is
// killed (SIGKILL) and started again on the same data. A worker that ends (killed, or gone
// with the broker) is started again, as a supervisor would. Then every worker gets SIGTERM.
// Each handler works ~8 s x 4 / N (at least 2 ms), so that the events land mid-consume.
//
// Checked per broker:
//  - nothing lost: every message's handler ran at least once;
//  - duplicates no more than what was in flight: `in_flight` (its prefetch, or Kafka's
//    settles not yet committed) for each killed worker and for each of the four at the
//    broker restart, plus every message handled from the broker's kill until its consumers
//    were back (restart() returned + `recovery`): their settles could not reach it — and,
//    where the broker answers before it writes (`unpersisted`), those handled just before;
//  - SIGTERM ends every worker with a clean close and exit 0.
// Each case prints one row, appended to build/<preset>/crash_matrix.md (docs/reliability.md
// has the table of a full run).
//
// Size: BABELQUEUE_CRASH_MATRIX_MESSAGES (default 300: the CI size); the full matrix is
//   BABELQUEUE_CRASH_MATRIX_MESSAGES=10000 ctest --test-dir build/dev -R crash_matrix
// The cases kill shared brokers, so CTest runs them alone (RUN_SERIAL).
#include "crash_matrix/worker_fleet.hpp"
#include "support/all_transports.hpp"
#include "support/services.hpp"

#include <babelqueue/babelqueue.hpp>
#include <babelqueue/runtime/transport.hpp>
#include <babelqueue/runtime/url.hpp>
#ifdef BQ_HAVE_REDIS
#include "redis/redis_server.hpp"
#endif

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace std::chrono_literals;

namespace {

/// One broker (and mode) of the matrix.
struct broker {
  std::string name;
  /// Its URL for one case (`id`: a fresh queue / group name); empty when not configured.
  std::function<std::string(const std::string& id)> url{};
  /// Kills the broker and starts it again on the same data; returns whether it is back.
  /// Empty: no server to restart (sqlite: the file is the queue).
  std::function<bool()> restart{};
  /// What restart() does, for the table.
  std::string restart_how{};
  /// The most messages one worker has handled but not yet settled on the broker — its
  /// prefetch, or Kafka's settles not yet committed: what a kill may deliver again.
  long in_flight = 1;
  /// How long after restart() returns the consumers take to be back in business (reconnect,
  /// Kafka's rejoin and rebalance): messages handled until then may not be settled either.
  std::chrono::milliseconds recovery{0};
  /// How far the broker's disk lags behind its answers: a settle it acknowledged within this
  /// before the kill may not have been written, so its message may come back.
  std::chrono::milliseconds unpersisted{0};
};

std::ostream& operator<<(std::ostream& os, const broker& b) { return os << b.name; }

long messages_per_case() {
  const std::string v = bqtest::env_or_empty("BABELQUEUE_CRASH_MATRIX_MESSAGES");
  const long n = v.empty() ? 300 : std::strtol(v.c_str(), nullptr, 10);
  return n > 0 ? n : 300;
}

std::string with_option(const std::string& url, const std::string& option) {
  if (url.empty()) return url;
  return url + (url.find('?') == std::string::npos ? "?" : "&") + option;
}

std::function<std::string(const std::string&)> env_url(const char* variable, std::string options) {
  return [variable, options = std::move(options)](const std::string&) {
    return with_option(bqtest::env_or_empty(variable), options);
  };
}

// `<ctl> <action>...` of a services.sh broker (BABELQUEUE_<NAME>_CTL), each action in turn.
std::function<bool()> ctl(const char* variable, std::vector<std::string> actions) {
  return [variable, actions = std::move(actions)] {
    const std::string c = bqtest::env_or_empty(variable);
    if (c.empty()) return false;
    for (const auto& a : actions) {
      std::string command = c;
      command.append(" ").append(a).append(" >/dev/null 2>&1");
      if (std::system(command.c_str()) != 0) return false;
    }
    return true;
  };
}

#ifdef BQ_HAVE_REDIS
// A private redis-server with AOF (appendfsync always), started on first use from the test's
// main thread and kept to the process's end: the shared one of services.sh is not ours to kill.
bqtest::redis_server* private_redis() {
  static std::unique_ptr<bqtest::redis_server> server;
  static std::string why;
  if (!server && why.empty()) {
    bqtest::redis_server::config c;
    c.persistent = true;
    server = bqtest::redis_server::start(c, why);
    if (!server && why.empty()) why = "redis-server did not start";
  }
  return server.get();
}

std::function<std::string(const std::string&)> redis_url(std::string options) {
  return [options = std::move(options)](const std::string&) {
    auto* s = private_redis();
    return s == nullptr ? std::string() : s->url() + "?" + options;
  };
}

bool restart_redis() {
  auto* s = private_redis();
  if (s == nullptr) return false;
  s->kill_now();
  return s->restart();
}
#endif

std::vector<broker> brokers() {
  std::vector<broker> all;
#ifdef BQ_HAVE_SQLITE
  all.push_back({.name = "sqlite",
                 .url =
                     [](const std::string& id) {
                       return "sqlite://" + std::filesystem::temp_directory_path().string() + "/" +
                              id + ".db?visibility_timeout=4s";
                     },
                 .restart_how = "none (no server: the file is the queue)"});
#endif
#ifdef BQ_HAVE_REDIS
  // A killed consumer's message waits in `:processing` (owned) or `:reserved` (Laravel) until
  // the in-consumer reclaimer / the reservation's expiry brings it back.
  all.push_back({.name = "redis",
                 .url = redis_url("reclaim_after=4s"),
                 .restart = restart_redis,
                 .restart_how = "SIGKILL + start (AOF, appendfsync always)"});
  all.push_back({.name = "redis_laravel",
                 .url = redis_url("laravel=1&retry_after=4"),
                 .restart = restart_redis,
                 .restart_how = "SIGKILL + start (AOF, appendfsync always)"});
#endif
#ifdef BQ_HAVE_RABBITMQ
  all.push_back({.name = "amqp",
                 .url = env_url("BABELQUEUE_RABBITMQ_URL", "prefetch=8"),
                 .restart = ctl("BABELQUEUE_RABBITMQ_CTL", {"stop_app", "start_app"}),
                 .restart_how = "rabbitmqctl stop_app + start_app",
                 .in_flight = 8});
#endif
#ifdef BQ_HAVE_KAFKA
  all.push_back({.name = "kafka",
                 .url =
                     [](const std::string& id) {
                       std::string b = bqtest::env_or_empty("BABELQUEUE_KAFKA_BOOTSTRAP");
                       if (b.empty()) return b;
                       return "kafka://" + b + "?group=" + id +
                              "&commit_batch=50&rdkafka.session.timeout.ms=6000"
                              "&rdkafka.heartbeat.interval.ms=500";
                     },
                 .restart = ctl("BABELQUEUE_KAFKA_CTL", {"kill-restart"}),
                 .restart_how = "SIGKILL + start",
                 .in_flight = 50,
                 .recovery = 10s});
#endif
#ifdef BQ_HAVE_ARTEMIS
  all.push_back({.name = "artemis",
                 .url = env_url("BABELQUEUE_ARTEMIS_URL", "prefetch=8"),
                 .restart = ctl("BABELQUEUE_ARTEMIS_CTL", {"kill-restart"}),
                 .restart_how = "SIGKILL + start",
                 .in_flight = 8});
#endif
#ifdef BQ_HAVE_ASB
  // The Service Bus stand-in (docs/testing.md): Artemis behind its CBS responder.
  all.push_back({.name = "sb (stand-in)",
                 .url =
                     [](const std::string&) {
                       std::string cs = bqtest::env_or_empty("BABELQUEUE_ASB_CONNECTION_STRING");
                       if (cs.empty()) return cs;
                       return babelqueue::asb::url_from_connection_string(cs).value_or("");
                     },
                 .restart = ctl("BABELQUEUE_ARTEMIS_CTL", {"kill-restart"}),
                 .restart_how = "SIGKILL + start of the stand-in's broker"});
#endif
#ifdef BQ_HAVE_SQS
  all.push_back({.name = "sqs",
                 .url =
                     [](const std::string&) {
                       ::setenv("AWS_ACCESS_KEY_ID", "test", 0);
                       ::setenv("AWS_SECRET_ACCESS_KEY", "test", 0);
                       return with_option(bqtest::env_or_empty("BABELQUEUE_SQS_URL"),
                                          "create_queues=true&visibility=8");
                     },
                 .restart = ctl("BABELQUEUE_SQS_CTL", {"kill-restart"}),
                 .restart_how = "SIGKILL + start (ElasticMQ, H2 storage)",
                 .in_flight = 10,
                 // ElasticMQ answers a DeleteMessage before its H2 write: of 241 duplicates
                 // at 10 000 messages, 119 had been handled and deleted in the 300 ms before
                 // the kill (the rest during the outage).
                 .unpersisted = 500ms});
#endif
#ifdef BQ_HAVE_PULSAR
  all.push_back({.name = "pulsar",
                 .url = env_url("BABELQUEUE_PULSAR_URL", "receiver_queue=8&batching=false"),
                 .restart = ctl("BABELQUEUE_PULSAR_CTL", {"kill-restart"}),
                 .restart_how = "SIGKILL + start (standalone)",
                 .in_flight = 8,
                 // Acks grouped by the client (100 ms), an out-of-order ack written by the
                 // broker's cursor flush (every 1 s on the test broker).
                 .unpersisted = 1100ms});
#endif
  return all;
}

constexpr int workers = 4;

class CrashMatrix : public ::testing::TestWithParam<broker> {
 protected:
  void SetUp() override {
    bqtest::register_all_transports();
    id_ = bqtest::unique_name("bqcrash");
    url_ = GetParam().url(id_);
    if (url_.empty()) {
      if (bqtest::services_required()) FAIL() << "no server for " << GetParam().name;
      GTEST_SKIP() << "no server for " << GetParam().name;
    }
    dir_ = std::filesystem::temp_directory_path() / id_;
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    // The effects and worker logs stay after a failure, or always with
    // BABELQUEUE_CRASH_MATRIX_KEEP=1 (to see when each duplicate ran).
    if (!HasFailure() && bqtest::env_or_empty("BABELQUEUE_CRASH_MATRIX_KEEP").empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
    }
  }

  // Publishes messages 0..n-1 in batches; the publisher is closed before the workers start.
  void publish_all(long n) {
    auto t = babelqueue::open_transport(url_);
    ASSERT_TRUE(t) << babelqueue::redact_url(url_) << ": " << t.error().message;
    std::vector<babelqueue::outgoing_message> batch;
    for (long i = 0; i < n; ++i) {
      batch.push_back({.body = bqtest::envelope_text(i), .hdrs = {}});
      if (batch.size() == 100 || i == n - 1) {
        auto r = (*t)->publish_batch(id_, batch);
        ASSERT_TRUE(r) << "batch ending at " << i << ": " << r.error().message;
        batch.clear();
      }
    }
    (void)(*t)->close(std::chrono::steady_clock::now() + 10s);
  }

  std::string id_, url_;
  std::filesystem::path dir_;
};

struct row {
  long messages = 0, handled = 0, lost = 0, duplicates = 0, bound = 0, worker_restarts = 0;
  long kills = 0;  ///< workers that died of SIGKILL (mid-handler)
  /// Effects from the broker's kill (less its `unpersisted` lag) to its consumers' return.
  long handled_while_down = 0;
  long left_at_restart = 0;  ///< messages not yet handled when the broker went down
  double publish_s = 0, consume_s = 0, broker_down_s = 0;
  bool broker_restarted = false;
  int clean_exits = 0;
};

constexpr const char* table_header =
    "| broker | messages | handled | lost | duplicates | bound | workers SIGKILLed | worker "
    "restarts | broker restart | unhandled at restart | handled while down | broker back after "
    "(s) | consume (s) | clean SIGTERM exits |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|\n";

void append_row(const broker& b, const row& r) {
  std::ostringstream line;
  line.setf(std::ios::fixed);
  line.precision(1);
  line << "| " << b.name << " | " << r.messages << " | " << r.handled << " | " << r.lost << " | "
       << r.duplicates << " | " << r.bound << " | " << r.kills << " | " << r.worker_restarts
       << " | " << (b.restart ? (r.broker_restarted ? b.restart_how : "FAILED") : b.restart_how)
       << " | " << r.left_at_restart << " | " << r.handled_while_down << " | " << r.broker_down_s
       << " | " << r.consume_s << " | " << r.clean_exits << "/" << workers << " |";
  std::cout << "crash matrix: " << line.str() << "\n";
  const std::string table = std::string(BABELQUEUE_BINARY_DIR) + "/crash_matrix.md";
  const bool first = !std::filesystem::exists(table);
  std::ofstream out(table, std::ios::app);
  if (first) out << table_header;
  out << line.str() << "\n";
}

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

TEST_P(CrashMatrix, AKilledWorkerAndARestartedBrokerLoseNothing) {
  const broker& b = GetParam();
  const long n = messages_per_case();
  row r;
  r.messages = n;
  const auto t0 = std::chrono::steady_clock::now();
  publish_all(n);
  if (HasFatalFailure()) return;
  const auto t1 = std::chrono::steady_clock::now();
  r.publish_s = std::chrono::duration<double>(t1 - t0).count();

  const auto handler_time = std::chrono::milliseconds(std::max<long>(2, 8000L * workers / n));
  bqcrash::worker_fleet fleet(BQ_CRASH_WORKER, url_, id_, dir_.string(), handler_time);
  // Each worker's first incarnation dies inside a handler, slot k after (k + 1) / 32 of the
  // messages: four kills spread over the run where the four share the queue, and at least
  // one where a single consumer holds it all (Kafka, one partition).
  for (int w = 0; w < workers; ++w) fleet.start(w, std::max<long>(1, (w + 1) * n / 32));

  const auto budget = std::chrono::seconds(std::max<long>(240, n / 20));
  const auto give_up = t1 + budget;
  bool restarted = !b.restart;
  std::int64_t down_from = 0, down_until = 0;
  bqcrash::worker_fleet::effect_log seen;
  while (std::chrono::steady_clock::now() < give_up) {
    for (const auto& e : fleet.restart_exited()) {
      if (e.signalled && e.code == SIGKILL) ++r.kills;
    }
    seen = fleet.effects();
    const auto unique = static_cast<long>(seen.times_handled.size());
    if (!restarted && unique >= n / 2) {
      r.left_at_restart = n - unique;
      const auto down = std::chrono::steady_clock::now();
      down_from = wall_ms();
      r.broker_restarted = b.restart();
      down_until = wall_ms();
      std::cout << "crash matrix: " << b.name << ": broker killed at " << down_from
                << " ms, back at " << down_until << " ms (wall clock; effects in " << dir_.string()
                << " while the case runs)\n";
      r.broker_down_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - down).count();
      restarted = true;
      EXPECT_TRUE(r.broker_restarted) << b.name << ": the broker did not come back";
    }
    if (restarted && unique == n) break;
    std::this_thread::sleep_for(250ms);
  }
  r.consume_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  // A duplicate delivered late (a reservation expiring, a rebalance) shows within this.
  std::this_thread::sleep_for(4s);
  for (const auto& e : fleet.restart_exited()) {
    if (e.signalled && e.code == SIGKILL) ++r.kills;
  }
  seen = fleet.effects();
  r.worker_restarts = fleet.restarts();

  const auto ended = fleet.terminate(30s);
  for (const auto& e : ended) {
    if (!e.signalled && e.code == 0) {
      ++r.clean_exits;
    } else {
      ADD_FAILURE() << b.name << ": worker " << e.slot << " did not end cleanly on SIGTERM ("
                    << (e.signalled ? "signal " : "exit ") << e.code << ")\n"
                    << fleet.log_tail(e.slot);
    }
  }

  const auto unique = static_cast<long>(seen.times_handled.size());
  for (const auto& [m, times] : seen.times_handled) r.handled += times;
  r.lost = n - unique;
  r.duplicates = r.handled - unique;
  // What was in flight: each killed worker's unsettled messages; at the broker restart, every
  // worker's, and every message handled while the broker was down or its consumers were not
  // yet back (its settle could not reach the broker).
  if (b.restart) {
    const std::int64_t from = down_from - b.unpersisted.count();
    const std::int64_t until = down_until + b.recovery.count();
    for (const auto at : seen.at_ms) {
      if (at >= from && at <= until) ++r.handled_while_down;
    }
  }
  r.bound = b.in_flight * (r.kills + (b.restart ? workers : 0)) + r.handled_while_down;
  append_row(b, r);

  EXPECT_GE(r.kills, 1) << "no worker died mid-handler";
  if (b.restart) {
    EXPECT_GT(r.left_at_restart, 0) << "the broker restart was not mid-consume";
  }
  EXPECT_EQ(r.lost, 0) << b.name << ": messages never handled (first missing: " << [&] {
    for (long i = 0; i < n; ++i) {
      if (!seen.times_handled.contains(i)) return i;
    }
    return -1L;
  }() << ")\n" << fleet.log_tail(1);
  EXPECT_LE(r.duplicates, r.bound) << b.name << ": more duplicates than were in flight";
}

INSTANTIATE_TEST_SUITE_P(Brokers, CrashMatrix, ::testing::ValuesIn(brokers()),
                         [](const ::testing::TestParamInfo<broker>& param) {
                           std::string s;
                           for (char c : param.param.name) {
                             if (std::isalnum(static_cast<unsigned char>(c)) != 0) s += c;
                           }
                           return s;
                         });

}  // namespace
