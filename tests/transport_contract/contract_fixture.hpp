#pragma once
// The transport contract suite's fixture (issue #36): the table of targets — one per scheme
// and mode the build has — how each one's URL is made from the services.sh environment, a
// queue name no other test uses, and the record of each case's outcome for the
// case × transport table (contract_results.hpp, printed by contract_table.sh).
//
// A case is a TEST_P on TransportContract; it opens transports with open() (as many
// instances as it needs, all on the same URL, so they share one broker, one queue and — on
// Kafka — one consumer group) and reads the binding's promises from features(). A case the
// features do not allow ends with BQ_CONTRACT_SKIP("<why>"), which names the reason in the
// test output and in the table.
//
// Targets are instantiated by two executables: contract_local.cpp (memory, sqlite: no
// server, so the sanitizer phases run them) and contract_brokers.cpp (the live brokers).
#include "support/services.hpp"
#include "transport_contract/contract_results.hpp"

#include <babelqueue/runtime/transport.hpp>
#include <babelqueue/runtime/url.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

/// Ends the case as skipped because `why` (a feature the binding lacks, or no server); the
/// reason is in the test output and in the case × transport table.
#define BQ_CONTRACT_SKIP(why)                    \
  do {                                           \
    skip_reason_ = (why);                        \
    GTEST_SKIP() << "skipped: " << skip_reason_; \
  } while (0)

/// Skips the case unless capabilities().<feature> is set (true / non-zero).
#define BQ_CONTRACT_REQUIRE(feature)                                          \
  do {                                                                        \
    if (!features().feature) BQ_CONTRACT_SKIP("no capabilities()." #feature); \
  } while (0)

namespace bqcontract {

using namespace std::chrono_literals;

/// One scheme (and mode) the suite runs on.
struct target {
  /// The instantiation's name in test names and the table (`redis_laravel`, `sqs_fifo`).
  std::string name{};
  /// What `scripts/services.sh start <service>` starts for it; empty for no server.
  std::string service{};
  /// The URL for one test: `id` is the test's unique id (a file name, a Kafka group). Empty
  /// when the server is not configured (the test then skips, or fails under CI).
  std::function<std::string(const std::string& id)> url{};
  /// The queue name for one test (some brokers need a suffix, e.g. SQS FIFO's `.fifo`).
  std::function<std::string(const std::string& id)> queue = [](const std::string& id) {
    return id;
  };
  /// Whether a TCP relay in front of the server is a faithful "broker that stops
  /// answering": false where the client learns other addresses from the server (Kafka's
  /// advertised listeners, Pulsar's lookup, Redis Cluster's slot map, Sentinel's primary).
  bool relay_faithful = true;
  /// Set by a target with no server (memory, sqlite).
  bool local = false;
  /// Cases this target is known to fail, each with the reason (the bug or the stand-in's
  /// limit, named): they skip with it, so the table shows the gap instead of hiding it.
  std::vector<std::pair<std::string, std::string>> known_gaps{};
};

inline std::ostream& operator<<(std::ostream& os, const target& t) { return os << t.name; }

/// `url` plus one `key=value` query option.
inline std::string with_option(const std::string& url, const std::string& option) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + option;
}

/// The URL of a services.sh server from its environment variable, plus options; empty when
/// unset.
inline std::function<std::string(const std::string&)> env_url(std::string variable,
                                                              std::string options = "") {
  return [variable = std::move(variable), options = std::move(options)](const std::string&) {
    std::string u = bqtest::env_or_empty(variable.c_str());
    if (u.empty() || options.empty()) return u;
    return with_option(u, options);
  };
}

/// Registers every transport this executable links (contract_local.cpp /
/// contract_brokers.cpp define it).
void register_transports();

/// The parameterised fixture every case uses.
class TransportContract : public ::testing::TestWithParam<target> {
 protected:
  void SetUp() override {
    register_transports();
    id_ = bqtest::unique_name("bqc");
    url_ = GetParam().url(id_);
    if (url_.empty()) {
      if (bqtest::services_required()) {
        FAIL() << "no server for " << GetParam().name << ": run scripts/services.sh start "
               << GetParam().service << " and source build/services/services.env";
      }
      BQ_CONTRACT_SKIP("no server: scripts/services.sh start " + GetParam().service);
    }
    if (auto gap = known_gap(current_case())) BQ_CONTRACT_SKIP("known gap: " + *gap);
    queue_ = GetParam().queue(id_);
    first_ = open();
    ASSERT_TRUE(first_) << "cannot open " << babelqueue::redact_url(url_);
  }

  void TearDown() override {
    for (auto& t : opened_) {
      if (t) (void)t->close(std::chrono::steady_clock::now() + 5s);
    }
    opened_.clear();
    record_outcome(GetParam().name, skip_reason_);
    if (url_.starts_with("sqlite://")) {
      std::error_code ignored;
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
        std::filesystem::remove(url_.substr(9) + suffix, ignored);
      }
    }
  }

  /// The case's name: the test name without the `/<target>` suffix.
  static std::string current_case() {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    return name.substr(0, name.find('/'));
  }

  /// The reason this target is known to fail `case_name`, if it is.
  static std::optional<std::string> known_gap(const std::string& case_name) {
    for (const auto& [gap_case, reason] : GetParam().known_gaps) {
      if (gap_case == case_name) return reason;
    }
    return std::nullopt;
  }

  /// A new transport instance on this test's URL (or on `url` when given); nullptr (and a
  /// test failure) when it cannot be opened. The fixture closes it at the end.
  babelqueue::transport* open(const std::string& url = {}) {
    const std::string& u = url.empty() ? url_ : url;
    auto t = babelqueue::open_transport(u);
    EXPECT_TRUE(t) << babelqueue::redact_url(u) << ": " << t.error().message;
    if (!t) return nullptr;
    opened_.push_back(std::move(*t));
    return opened_.back().get();
  }

  /// The first instance SetUp opened.
  babelqueue::transport& transport() { return *first_; }
  babelqueue::transport_capabilities features() { return first_->capabilities(); }

  /// The next message of the queue on `t` within `wait`, or nullopt (a receive error fails
  /// the test).
  std::optional<babelqueue::received_message> next(babelqueue::transport& t,
                                                   std::chrono::milliseconds wait = 10s) {
    auto got = t.receive(queue_, wait);
    EXPECT_TRUE(got) << got.error().message;
    if (!got || !got->has_value()) return std::nullopt;
    return std::move(**got);
  }

  /// Publishes `body` with `hdrs` on `t` and receives it back (nullopt, with a test failure,
  /// when either step fails).
  std::optional<babelqueue::received_message> publish_and_take(babelqueue::transport& t,
                                                               const std::string& body,
                                                               const babelqueue::headers& hdrs) {
    auto published = t.publish(queue_, body, hdrs);
    EXPECT_TRUE(published) << published.error().message;
    if (!published) return std::nullopt;
    auto m = next(t);
    EXPECT_TRUE(m) << "the published message did not arrive";
    return m;
  }

  /// True when nothing arrives on `t` within `wait` (the queue holds nothing takeable).
  bool nothing_within(babelqueue::transport& t, std::chrono::milliseconds wait) {
    auto got = t.receive(queue_, wait);
    EXPECT_TRUE(got) << got.error().message;
    return got && !got->has_value();
  }

  std::string id_;
  std::string url_;
  std::string queue_;
  /// Set by BQ_CONTRACT_SKIP: the reason the table shows.
  std::string skip_reason_;

 private:
  std::vector<std::unique_ptr<babelqueue::transport>> opened_;
  babelqueue::transport* first_ = nullptr;
};

/// The test's name as the instantiation shows it.
inline std::string target_name(const ::testing::TestParamInfo<target>& info) {
  return info.param.name;
}

/// A per-test SQLite file under the system's temporary directory.
inline std::string sqlite_url(const std::string& id) {
  return "sqlite://" + (std::filesystem::temp_directory_path() / (id + ".db")).string();
}

}  // namespace bqcontract
