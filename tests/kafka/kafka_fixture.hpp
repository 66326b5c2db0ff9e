#pragma once
// GoogleTest support for the kafka:// tests: the shared Kafka broker started by
// scripts/services.sh (BABELQUEUE_KAFKA_URL / _BOOTSTRAP / _CTL), unique topic and group
// names per test, and a raw librdkafka client to look at (and forge) records exactly as a
// peer would — not the code under test.
//
// Without the service the live tests skip, except when BABELQUEUE_REQUIRE_SERVICES=1 or
// CI=true (scripts/test.sh sets it), where they fail.
#include "support/services.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/kafka/kafka_transport.hpp>
#include <babelqueue/kafka/reinjector.hpp>

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace bqtest {

inline std::string kafka_bootstrap() { return env_or_empty("BABELQUEUE_KAFKA_BOOTSTRAP"); }

#define BQ_REQUIRE_KAFKA() BQ_REQUIRE_SERVICE(bqtest::kafka_bootstrap(), "Kafka", "kafka")

/// `kafka://<bootstrap>?group=<group>` plus extra query text (`&retry_topics=1s`).
inline std::string kafka_url(const std::string& group, const std::string& extra = "") {
  return "kafka://" + kafka_bootstrap() + "?group=" + group +
         "&rdkafka.session.timeout.ms=6000&rdkafka.heartbeat.interval.ms=500" + extra;
}

inline babelqueue::kafka::options kafka_options(const std::string& group) {
  auto u = babelqueue::broker_url::parse(kafka_url(group));
  return babelqueue::kafka::options_from_url(u.value()).value();
}

/// One record as a plain librdkafka consumer saw it.
struct raw_record {
  std::string value;
  std::optional<std::string> key;
  std::vector<std::pair<std::string, std::string>> headers;
  std::int64_t timestamp = -1;
  rd_kafka_timestamp_type_t timestamp_type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  std::optional<std::string> header(std::string_view name) const {
    for (const auto& [k, v] : headers) {
      if (k == name) return v;
    }
    return std::nullopt;
  }
};

/// A plain librdkafka client (no babelqueue code): produce forged records, read a topic
/// from the beginning, create topics, read a group's committed offsets.
class raw_kafka {
 public:
  raw_kafka() {
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", kafka_bootstrap().c_str(), err, sizeof err);
    rd_kafka_conf_set(conf, "message.max.bytes", "4000000", err, sizeof err);
    producer_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  }
  ~raw_kafka() {
    if (producer_ != nullptr) {
      rd_kafka_flush(producer_, 5000);
      rd_kafka_destroy(producer_);
    }
  }
  raw_kafka(const raw_kafka&) = delete;
  raw_kafka& operator=(const raw_kafka&) = delete;

  // librdkafka's RD_KAFKA_V_* macros are GNU statement expressions: clang's -Wpedantic says
  // so (-Werror: the asan build), GCC exempts macros from system headers (as producer.cpp).
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wgnu-statement-expression"
#endif
  /// Produces one record and waits until it is written. Returns the error code.
  rd_kafka_resp_err_t produce(const std::string& topic, const std::string& value,
                              const std::vector<std::pair<std::string, std::string>>& headers = {},
                              std::int64_t timestamp = 0) {
    rd_kafka_headers_t* h = rd_kafka_headers_new(headers.size());
    for (const auto& [k, v] : headers) {
      rd_kafka_header_add(h, k.data(), static_cast<ssize_t>(k.size()), v.data(),
                          static_cast<ssize_t>(v.size()));
    }
    auto err =
        rd_kafka_producev(producer_, RD_KAFKA_V_TOPIC(topic.c_str()),
                          RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_TIMESTAMP(timestamp),
                          RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_headers_destroy(h);
      return err;
    }
    return rd_kafka_flush(producer_, 20000);
  }

  /// Produces `values` (no headers) to partition `partition` of `topic`, in order, and waits
  /// until all are written. Returns the first error code.
  rd_kafka_resp_err_t produce_to(const std::string& topic, std::int32_t partition,
                                 const std::vector<std::string>& values) {
    for (const auto& v : values) {
      auto err = rd_kafka_producev(producer_, RD_KAFKA_V_TOPIC(topic.c_str()),
                                   RD_KAFKA_V_PARTITION(partition),
                                   RD_KAFKA_V_VALUE(const_cast<char*>(v.data()), v.size()),
                                   RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return err;
    }
    return rd_kafka_flush(producer_, 20000);
  }
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

  /// Creates `topic` with `partitions` partitions (replication 1); waits for it.
  bool create_topic(const std::string& topic, int partitions) {
    char err[512];
    rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, err, sizeof err);
    rd_kafka_queue_t* q = rd_kafka_queue_new(producer_);
    rd_kafka_CreateTopics(producer_, &nt, 1, nullptr, q);
    rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 20000);
    bool ok = false;
    if (ev != nullptr) {
      const rd_kafka_CreateTopics_result_t* res = rd_kafka_event_CreateTopics_result(ev);
      size_t n = 0;
      const rd_kafka_topic_result_t** tr = rd_kafka_CreateTopics_result_topics(res, &n);
      ok = n == 1 && (rd_kafka_topic_result_error(tr[0]) == RD_KAFKA_RESP_ERR_NO_ERROR ||
                      rd_kafka_topic_result_error(tr[0]) == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS);
      rd_kafka_event_destroy(ev);
    }
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy(nt);
    return ok;
  }

  /// Every record of `topic` (all partitions, from the beginning), reading until `expect`
  /// records arrived or `wait` passed without a new one.
  std::vector<raw_record> read_all(const std::string& topic, std::size_t expect = 0,
                                   std::chrono::milliseconds wait = std::chrono::seconds(3)) {
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", kafka_bootstrap().c_str(), err, sizeof err);
    rd_kafka_conf_set(conf, "group.id", unique_name("raw-reader").c_str(), err, sizeof err);
    rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof err);
    rd_kafka_t* c = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
    std::vector<raw_record> out;
    const rd_kafka_metadata_t* md = nullptr;
    rd_kafka_topic_t* rkt = rd_kafka_topic_new(c, topic.c_str(), nullptr);
    int partitions = 1;
    if (rd_kafka_metadata(c, 0, rkt, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (md->topic_cnt == 1 && md->topics[0].partition_cnt > 0)
        partitions = md->topics[0].partition_cnt;
      rd_kafka_metadata_destroy(md);
    }
    rd_kafka_topic_destroy(rkt);
    rd_kafka_topic_partition_list_t* l = rd_kafka_topic_partition_list_new(partitions);
    for (int p = 0; p < partitions; ++p) {
      rd_kafka_topic_partition_list_add(l, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    }
    rd_kafka_assign(c, l);
    rd_kafka_topic_partition_list_destroy(l);
    auto last = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - last < wait && (expect == 0 || out.size() < expect)) {
      rd_kafka_message_t* m = rd_kafka_consumer_poll(c, 100);
      if (m == nullptr) continue;
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        raw_record r;
        r.value.assign(static_cast<const char*>(m->payload), m->len);
        if (m->key != nullptr) r.key = std::string(static_cast<const char*>(m->key), m->key_len);
        r.timestamp = rd_kafka_message_timestamp(m, &r.timestamp_type);
        r.partition = m->partition;
        r.offset = m->offset;
        rd_kafka_headers_t* h = nullptr;
        if (rd_kafka_message_headers(m, &h) == RD_KAFKA_RESP_ERR_NO_ERROR) {
          const char* name = nullptr;
          const void* val = nullptr;
          size_t size = 0;
          for (size_t i = 0;
               rd_kafka_header_get_all(h, i, &name, &val, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
               ++i) {
            r.headers.emplace_back(
                name, std::string(static_cast<const char*>(val), val == nullptr ? 0 : size));
          }
        }
        out.push_back(std::move(r));
        last = std::chrono::steady_clock::now();
      }
      rd_kafka_message_destroy(m);
    }
    rd_kafka_consumer_close(c);
    rd_kafka_destroy(c);
    return out;
  }

  /// The committed offset of `group` on partition `partition` of `topic` (-1001 = none).
  std::int64_t committed(const std::string& group, const std::string& topic, int partition = 0) {
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", kafka_bootstrap().c_str(), err, sizeof err);
    rd_kafka_conf_set(conf, "group.id", group.c_str(), err, sizeof err);
    rd_kafka_t* c = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
    rd_kafka_topic_partition_list_t* l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, topic.c_str(), partition);
    std::int64_t off = -2;
    if (rd_kafka_committed(c, l, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) off = l->elems[0].offset;
    rd_kafka_topic_partition_list_destroy(l);
    rd_kafka_destroy(c);
    return off;
  }

 private:
  rd_kafka_t* producer_ = nullptr;
};

/// Runs a re-injector for `topic` on its own thread while alive.
class running_reinjector {
 public:
  running_reinjector(const std::string& url, const std::string& topic) {
    auto o =
        babelqueue::kafka::options_from_url(babelqueue::broker_url::parse(url).value()).value();
    auto r = babelqueue::kafka::reinjector::open(std::move(o), {topic});
    EXPECT_TRUE(r) << r.error().message;
    reinjector_ = std::move(*r);
    thread_ = std::thread([this] { result_ = reinjector_->run(); });
  }
  ~running_reinjector() {
    stop();
    EXPECT_TRUE(result_) << result_.error().message;
    (void)reinjector_->close();
  }
  /// Stops it (its thread ends after the record in hand is produced and committed) and returns
  /// its counters, which its thread writes while it runs: read them only here. A record reaches
  /// the work topic before the re-injector has committed and counted it.
  babelqueue::kafka::reinjector_stats stop() {
    if (thread_.joinable()) {
      reinjector_->stop();
      thread_.join();
    }
    return reinjector_->stats();
  }

 private:
  std::unique_ptr<babelqueue::kafka::reinjector> reinjector_;
  babelqueue::result<void> result_;
  std::thread thread_;
};

/// A test with a unique topic and group, a raw client, and an open transport factory.
class KafkaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BQ_REQUIRE_KAFKA();
    topic_ = unique_name("bq-k");
    group_ = unique_name("bq-g");
    raw_ = std::make_unique<raw_kafka>();
  }

  std::unique_ptr<babelqueue::kafka::kafka_transport> open(const std::string& extra = "") {
    auto u = babelqueue::broker_url::parse(kafka_url(group_, extra));
    auto o = babelqueue::kafka::options_from_url(u.value());
    EXPECT_TRUE(o) << o.error().message;
    auto t = babelqueue::kafka::kafka_transport::open(std::move(*o));
    EXPECT_TRUE(t) << t.error().message;
    return t ? std::move(*t) : nullptr;
  }

  /// receive() until a record arrives (the first one includes the group join).
  static std::optional<babelqueue::received_message> next(
      babelqueue::transport& t, const std::string& topic,
      std::chrono::milliseconds within = std::chrono::seconds(20)) {
    auto r = t.receive(topic, within);
    EXPECT_TRUE(r) << r.error().message;
    return r ? std::move(*r) : std::nullopt;
  }

  std::string topic_;
  std::string group_;
  std::unique_ptr<raw_kafka> raw_;
};

}  // namespace bqtest
