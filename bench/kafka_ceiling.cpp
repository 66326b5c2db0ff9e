// kafka_ceiling — what plain librdkafka C loops reach on the same job as
// `babelqueue bench --broker kafka://...`: the ceiling of this client library, against which
// the kafka:// transport is measured (bench/kafka_rounds.sh).
//
//   kafka_ceiling --url kafka://... --topic T [--messages N] [--size B] [--publishers P]
//                 [--batch K] [--group G] [--read 0|1] [--project 0|1] [--partitions N]
//                 [--transport 0|1]
//                 [--phase both|publish|consume|create|delete]
//
// Same settings as the transport, read from the same URL with kafka::options_from_url:
// bootstrap servers, client.id, acks (acks=all also enables idempotence), linger.ms,
// batch.num.messages, compression.codec, message.timeout.ms = operation_timeout, the
// rdkafka.* pass-through, and the consumer's group, commit_interval and commit_batch.
// Records carry the same value (the CLI's ~B-byte envelope), the same six bq- headers and
// the same CreateTime (meta.created_at) — the projection computed ONCE here (the transport
// decodes the envelope per record), the header list built per record (librdkafka takes it).
//
// Publish: P threads, each with its own producer (as P transport instances), opened and
// probed for metadata before the clock starts. K = 1: rd_kafka_producev + rd_kafka_flush
// (the delivery report of that record awaited); K > 1: K producev, then one flush. A
// delivery report with an error stops the run.
// Consume: the clock starts before the consumer is created (as the CLI's consume phase,
// whose first receive() creates it): group member with enable.auto.commit=false, offsets
// tracked per partition and committed asynchronously every commit_batch records or
// commit_interval after the first uncommitted one, whichever first; a last synchronous
// commit after the N-th record. Prints the lines `babelqueue bench` prints ("publish: N
// msgs in T s = R msg/s", "consume: ...", "consume-steady: ... from the first record").
// --project 1: the headers and timestamp are projected from the envelope for every record
// (bindings::kafka::project, as the transport does), not once.
// --transport 1: the consume phase goes through kafka_transport (receive + ack) instead.
// --read 1: the consume loop also copies each value out and reads its bq-attempts and
// bq-schema-version headers (what the transport must do for every record; the bare loop does
// not). --phase create creates the topic (N partitions, replication 1) so that a measurement
// does not time the broker's auto-creation; --phase delete removes it (and the group, with
// --group).
#include "bench_payloads.hpp"

#include <babelqueue/bindings/kafka.hpp>
#include <babelqueue/kafka/kafka_transport.hpp>
#include <babelqueue/runtime/url.hpp>

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using bench_clock = std::chrono::steady_clock;
namespace bk = babelqueue::bindings::kafka;

struct args_t {
  std::string url, topic, group, phase = "both";
  std::size_t messages = 100000, size = 370, batch = 1;
  unsigned publishers = 1;
  int partitions = 1;
  bool read = false;
  bool project_each = false;
  bool via_transport = false;
  double idle_s = 5;
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "kafka_ceiling: %s\n", what.c_str());
  std::exit(2);
}

void set(rd_kafka_conf_t* c, const std::string& k, const std::string& v) {
  char err[512];
  if (rd_kafka_conf_set(c, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
    die("property " + k + ": " + err);
  }
}

// The properties every client of the transport gets (client.cpp set_common), then the
// pass-through ones last (as the transport does). Logs go to stderr (librdkafka's default).
rd_kafka_conf_t* common_conf(const babelqueue::kafka::options& o) {
  rd_kafka_conf_t* c = rd_kafka_conf_new();
  std::string brokers;
  for (const auto& b : o.brokers) brokers += (brokers.empty() ? "" : ",") + b;
  set(c, "bootstrap.servers", brokers);
  set(c, "client.id", o.client_id);
  set(c, "security.protocol", o.security_protocol);
  return c;
}

void passthrough(rd_kafka_conf_t* c, const babelqueue::kafka::options& o) {
  for (const auto& [k, v] : o.rdkafka) set(c, k, v);
}

rd_kafka_t* create(rd_kafka_type_t type, rd_kafka_conf_t* c) {
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(type, c, err, sizeof err);
  if (rk == nullptr) die(std::string("rd_kafka_new: ") + err);
  return rk;
}

// ---- publish -----------------------------------------------------------------------------

struct producer_state {
  std::size_t delivered = 0;
  rd_kafka_resp_err_t first_error = RD_KAFKA_RESP_ERR_NO_ERROR;
};

void on_delivery(rd_kafka_t* /*rk*/, const rd_kafka_message_t* m, void* opaque) {
  auto* s = static_cast<producer_state*>(opaque);
  if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++s->delivered;
  } else if (s->first_error == RD_KAFKA_RESP_ERR_NO_ERROR) {
    s->first_error = m->err;
  }
}

rd_kafka_t* open_producer(const babelqueue::kafka::options& o, producer_state* state) {
  rd_kafka_conf_t* c = common_conf(o);
  const bool all = o.acks == "all" || o.acks == "-1";
  set(c, "acks", all ? "all" : o.acks);
  set(c, "enable.idempotence", all ? "true" : "false");
  set(c, "linger.ms", std::to_string(o.linger.count()));
  set(c, "batch.num.messages", std::to_string(o.batch));
  set(c, "compression.codec", o.compression);
  set(c, "message.timeout.ms", std::to_string(o.operation_timeout.count()));
  passthrough(c, o);
  rd_kafka_conf_set_opaque(c, state);
  rd_kafka_conf_set_dr_msg_cb(c, &on_delivery);
  rd_kafka_t* rk = create(RD_KAFKA_PRODUCER, c);
  const struct rd_kafka_metadata* md = nullptr;
  if (rd_kafka_metadata(rk, 0, nullptr, &md, static_cast<int>(o.operation_timeout.count())) !=
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    die("no broker answered the metadata probe");
  }
  rd_kafka_metadata_destroy(md);
  return rk;
}

void produce_one(rd_kafka_t* rk, const std::string& topic, const std::string& body,
                 const bk::record_projection& proj) {
  for (;;) {
    rd_kafka_headers_t* h = rd_kafka_headers_new(proj.headers.size());
    for (const auto& [k, v] : proj.headers) {
      rd_kafka_header_add(h, k.data(), static_cast<ssize_t>(k.size()), v.data(),
                          static_cast<ssize_t>(v.size()));
    }
    const rd_kafka_resp_err_t err = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(topic.c_str()),
        RD_KAFKA_V_VALUE(const_cast<char*>(body.data()), body.size()),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_TIMESTAMP(proj.timestamp_ms.value_or(0)), RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return;
    rd_kafka_headers_destroy(h);
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) die(std::string("produce: ") + rd_kafka_err2str(err));
    rd_kafka_poll(rk, 10);  // the local queue is full: let deliveries free it
  }
}

void run_publish(const args_t& a, const babelqueue::kafka::options& o, const std::string& body) {
  const bk::record_projection proj = bk::project(body);
  if (proj.headers.size() != 6 || !proj.timestamp_ms) die("the envelope did not project");
  std::vector<producer_state> states(a.publishers);
  std::vector<rd_kafka_t*> producers;
  for (unsigned i = 0; i < a.publishers; ++i) producers.push_back(open_producer(o, &states[i]));
  const std::size_t n = a.messages;
  const int flush_ms = static_cast<int>(o.operation_timeout.count());
  auto t0 = bench_clock::now();
  std::vector<std::vector<double>> lat(a.publishers);  // us per K-record call
  for (auto& l : lat) l.reserve(n / a.publishers / a.batch + 1);
  std::vector<std::thread> threads;
  for (unsigned p = 0; p < a.publishers; ++p) {
    threads.emplace_back([&, p] {
      rd_kafka_t* rk = producers[p];
      const std::size_t mine = n / a.publishers + (p < n % a.publishers ? 1 : 0);
      for (std::size_t done = 0; done < mine;) {
        const std::size_t k = std::min(a.batch, mine - done);
        const auto s0 = bench_clock::now();
        for (std::size_t i = 0; i < k; ++i) {
          if (a.project_each) {
            produce_one(rk, a.topic, body, bk::project(body));  // as the transport: per record
          } else {
            produce_one(rk, a.topic, body, proj);
          }
        }
        // Awaits the delivery reports of all K (flush sends what lingers at once).
        if (rd_kafka_flush(rk, flush_ms) != RD_KAFKA_RESP_ERR_NO_ERROR) die("flush timed out");
        if (states[p].first_error != RD_KAFKA_RESP_ERR_NO_ERROR) {
          die(std::string("delivery failed: ") + rd_kafka_err2str(states[p].first_error));
        }
        lat[p].push_back(
            std::chrono::duration<double, std::micro>(bench_clock::now() - s0).count());
        done += k;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double s = std::chrono::duration<double>(bench_clock::now() - t0).count();
  std::size_t delivered = 0;
  for (const auto& st : states) delivered += st.delivered;
  if (delivered != n) die("delivered " + std::to_string(delivered) + " of " + std::to_string(n));
  std::vector<double> all;
  for (auto& l : lat) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  auto at = [&](double q) {
    return all[static_cast<std::size_t>(q * static_cast<double>(all.size() - 1))];
  };
  std::printf(
      "publish: %zu msgs in %.3f s = %.0f msg/s; latency p50 %.1f us, p99 %.1f us (per %zu-record "
      "call; librdkafka %s loop, acks=%s, linger %lld ms, %u publisher(s)%s)\n",
      n, s, static_cast<double>(n) / s, at(0.5), at(0.99), a.batch, rd_kafka_version_str(),
      o.acks.c_str(), static_cast<long long>(o.linger.count()), a.publishers,
      a.project_each ? ", headers projected per record" : "");
  for (auto* rk : producers) rd_kafka_destroy(rk);
}

// ---- consume -----------------------------------------------------------------------------

// The process's peak resident set (VmHWM, KiB), printed after a consume phase: with
// --phase consume it is what the consumer and librdkafka's prefetch queue reached.
long peak_rss_kib() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "VmHWM: %ld", &kib) == 1) break;
  }
  std::fclose(f);
  return kib;
}

void commit(rd_kafka_t* rk, const std::string& topic, std::vector<std::int64_t>& next,
            std::vector<std::int64_t>& committed, bool sync) {
  rd_kafka_topic_partition_list_t* l = rd_kafka_topic_partition_list_new(1);
  for (std::size_t p = 0; p < next.size(); ++p) {
    if (next[p] > committed[p]) {
      rd_kafka_topic_partition_list_add(l, topic.c_str(), static_cast<std::int32_t>(p))->offset =
          next[p];
      committed[p] = next[p];
    }
  }
  if (l->cnt > 0) {
    const rd_kafka_resp_err_t err = rd_kafka_commit(rk, l, sync ? 0 : 1);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) die(std::string("commit: ") + rd_kafka_err2str(err));
  }
  rd_kafka_topic_partition_list_destroy(l);
}

// --read: the least a consumer that hands records to a handler does besides polling: copy
// the value out, and read the two headers that decide how a record is handled (bq-attempts,
// bq-schema-version). librdkafka parses a record's headers on the first header call.
void read_record(const rd_kafka_message_t* m, std::string& value, std::string& attempts,
                 std::string& version) {
  value.assign(static_cast<const char*>(m->payload), m->payload == nullptr ? 0 : m->len);
  rd_kafka_headers_t* h = nullptr;
  if (rd_kafka_message_headers(m, &h) != RD_KAFKA_RESP_ERR_NO_ERROR) return;
  const void* v = nullptr;
  size_t size = 0;
  if (rd_kafka_header_get_last(h, "bq-attempts", &v, &size) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    attempts.assign(static_cast<const char*>(v), size);
  }
  if (rd_kafka_header_get_last(h, "bq-schema-version", &v, &size) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    version.assign(static_cast<const char*>(v), size);
  }
}

// The steady rate (from the first record, leaving out the group join) and the peak RSS:
// the lines every consume loop prints after its own "consume:" line.
void print_steady_and_rss(std::size_t got, bench_clock::time_point t0,
                          const std::optional<bench_clock::time_point>& first_record,
                          bench_clock::time_point t_end) {
  if (first_record && got > 1) {
    const double to_first = std::chrono::duration<double>(*first_record - t0).count();
    const double steady = std::chrono::duration<double>(t_end - *first_record).count();
    std::printf("consume-steady: first record after %.3f s; then %zu msgs in %.3f s = %.0f msg/s\n",
                to_first, got - 1, steady, static_cast<double>(got - 1) / steady);
  }
  std::printf("rss: peak %ld KiB\n", peak_rss_kib());
}

void run_consume(const args_t& a, const babelqueue::kafka::options& o) {
  const std::size_t n = a.messages;
  auto t0 = bench_clock::now();
  rd_kafka_conf_t* c = common_conf(o);
  set(c, "group.id", a.group.empty() ? o.group : a.group);
  set(c, "enable.auto.commit", "false");
  set(c, "enable.auto.offset.store", "false");
  set(c, "auto.offset.reset", "earliest");
  set(c, "allow.auto.create.topics", "true");
  set(c, "enable.partition.eof", "false");
  passthrough(c, o);
  rd_kafka_t* rk = create(RD_KAFKA_CONSUMER, c);
  rd_kafka_poll_set_consumer(rk);
  rd_kafka_topic_partition_list_t* subs = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(subs, a.topic.c_str(), RD_KAFKA_PARTITION_UA);
  if (rd_kafka_subscribe(rk, subs) != RD_KAFKA_RESP_ERR_NO_ERROR) die("subscribe");
  rd_kafka_topic_partition_list_destroy(subs);

  std::vector<std::int64_t> next, committed;  // by partition
  std::string value, attempts, version;       // --read
  std::size_t got = 0, since_commit = 0;
  std::optional<bench_clock::time_point> first_uncommitted, first_record;
  auto last = bench_clock::now();
  const auto idle = std::chrono::duration<double>(a.idle_s);
  while (got < n) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
    const auto now = bench_clock::now();
    if (m == nullptr) {
      if (now - last > idle) break;  // nothing more to come
    } else {
      if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF &&
            m->err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
          die(std::string("consume: ") + rd_kafka_message_errstr(m));
        }
      } else {
        if (!first_record) first_record = now;
        if (a.read) read_record(m, value, attempts, version);
        const auto part = static_cast<std::size_t>(m->partition);
        if (part >= next.size()) {
          next.resize(part + 1, -1);
          committed.resize(part + 1, -1);
        }
        next[part] = std::max(next[part], m->offset + 1);
        ++got;
        ++since_commit;
        last = now;
        if (!first_uncommitted) first_uncommitted = now;
      }
      rd_kafka_message_destroy(m);
    }
    if (first_uncommitted && (since_commit >= static_cast<std::size_t>(o.commit_batch) ||
                              now - *first_uncommitted >= o.commit_interval)) {
      commit(rk, a.topic, next, committed, /*sync=*/false);
      since_commit = 0;
      first_uncommitted.reset();
    }
  }
  const auto t_end = bench_clock::now();
  commit(rk, a.topic, next, committed, /*sync=*/true);
  const double s = std::chrono::duration<double>(t_end - t0).count();
  std::printf(
      "consume: %zu msgs in %.3f s = %.0f msg/s (librdkafka %s loop%s, commit every %lld "
      "or %lld ms)\n",
      got, s, static_cast<double>(got) / s, rd_kafka_version_str(),
      a.read ? " reading value + headers" : "", static_cast<long long>(o.commit_batch),
      static_cast<long long>(o.commit_interval.count()));
  print_steady_and_rss(got, t0, first_record, t_end);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  if (got < n) std::exit(1);
}

// --transport 1: the same consume job through kafka_transport::receive + ack, timed as the
// loop above (the clock starts before the consumer exists, steady = from the first record), so
// the transport's consume path is measured — and profiled — on the same prefilled topic as
// the plain loop, without the CLI's publish phase in the same process.
void run_consume_transport(const args_t& a, babelqueue::kafka::options o) {
  if (!a.group.empty()) o.group = a.group;
  const std::size_t n = a.messages;
  auto t = babelqueue::kafka::kafka_transport::open(o);
  if (!t) die("open the transport: " + t.error().message);
  auto t0 = bench_clock::now();
  std::size_t got = 0;
  std::optional<bench_clock::time_point> first_record;
  auto last = bench_clock::now();
  const auto idle = std::chrono::duration<double>(a.idle_s);
  while (got < n) {
    auto m = (*t)->receive(a.topic, std::chrono::milliseconds(100));
    if (!m) die("receive: " + m.error().message);
    const auto now = bench_clock::now();
    if (!m->has_value()) {
      if (now - last > idle) break;
      continue;
    }
    if (!first_record) first_record = now;
    if (auto r = (*t)->ack(**m); !r) die("ack: " + r.error().message);
    ++got;
    last = now;
  }
  const auto t_end = bench_clock::now();
  const double s = std::chrono::duration<double>(t_end - t0).count();
  std::printf("consume: %zu msgs in %.3f s = %.0f msg/s (kafka_transport receive + ack)\n", got, s,
              static_cast<double>(got) / s);
  print_steady_and_rss(got, t0, first_record, t_end);
  if (auto r = (*t)->close(bench_clock::now() + std::chrono::seconds(10)); !r) {
    die("close: " + r.error().message);
  }
  if (got < n) std::exit(1);
}

// ---- delete ------------------------------------------------------------------------------

void admin_wait(rd_kafka_queue_t* q, int timeout_ms) {
  if (rd_kafka_event_t* ev = rd_kafka_queue_poll(q, timeout_ms)) rd_kafka_event_destroy(ev);
}

// Creates the topic (replication 1), so that a measurement does not include the broker's
// auto-creation of it on the first produce (a second or more on a loaded machine).
void run_create(const args_t& a, const babelqueue::kafka::options& o) {
  rd_kafka_conf_t* c = common_conf(o);
  passthrough(c, o);
  rd_kafka_t* rk = create(RD_KAFKA_PRODUCER, c);
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
  char err[256];
  rd_kafka_NewTopic_t* t = rd_kafka_NewTopic_new(a.topic.c_str(), a.partitions, 1, err, sizeof err);
  if (t == nullptr) die(std::string("new topic: ") + err);
  rd_kafka_CreateTopics(rk, &t, 1, nullptr, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 30000);
  if (ev == nullptr) die("create topic: no answer within 30 s");
  const rd_kafka_CreateTopics_result_t* res = rd_kafka_event_CreateTopics_result(ev);
  size_t cnt = 0;
  const rd_kafka_topic_result_t** tr = rd_kafka_CreateTopics_result_topics(res, &cnt);
  if (cnt == 1 && rd_kafka_topic_result_error(tr[0]) != RD_KAFKA_RESP_ERR_NO_ERROR &&
      rd_kafka_topic_result_error(tr[0]) != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
    die(std::string("create topic: ") + rd_kafka_topic_result_error_string(tr[0]));
  }
  rd_kafka_event_destroy(ev);
  rd_kafka_NewTopic_destroy(t);
  rd_kafka_queue_destroy(q);
  rd_kafka_destroy(rk);
}

void run_delete(const args_t& a, const babelqueue::kafka::options& o) {
  rd_kafka_conf_t* c = common_conf(o);
  passthrough(c, o);
  rd_kafka_t* rk = create(RD_KAFKA_PRODUCER, c);
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
  rd_kafka_DeleteTopic_t* t = rd_kafka_DeleteTopic_new(a.topic.c_str());
  rd_kafka_DeleteTopics(rk, &t, 1, nullptr, q);
  admin_wait(q, 10000);
  rd_kafka_DeleteTopic_destroy(t);
  if (!a.group.empty()) {
    rd_kafka_DeleteGroup_t* g = rd_kafka_DeleteGroup_new(a.group.c_str());
    rd_kafka_DeleteGroups(rk, &g, 1, nullptr, q);
    admin_wait(q, 10000);
    rd_kafka_DeleteGroup_destroy(g);
  }
  rd_kafka_queue_destroy(q);
  rd_kafka_destroy(rk);
}

}  // namespace

int main(int argc, char** argv) {
  args_t a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (i + 1 >= argc) die("missing value of " + k);
    std::string v = argv[++i];
    // clang-format off
    if (k == "--url") a.url = v;
    else if (k == "--topic" || k == "--queue") a.topic = v;
    else if (k == "--group") a.group = v;
    else if (k == "--phase") a.phase = v;
    else if (k == "--messages") a.messages = std::stoul(v);
    else if (k == "--size") a.size = std::stoul(v);
    else if (k == "--batch") a.batch = std::max<std::size_t>(1, std::stoul(v));
    else if (k == "--publishers") a.publishers = static_cast<unsigned>(std::max(1ul, std::stoul(v)));
    else if (k == "--timeout") a.idle_s = std::stod(v);
    else if (k == "--partitions") a.partitions = std::max(1, std::stoi(v));
    else if (k == "--read") a.read = v != "0" && v != "off";
    else if (k == "--project") a.project_each = v != "0" && v != "off";
    else if (k == "--transport") a.via_transport = v != "0" && v != "off";
    else die("unknown option " + k);
    // clang-format on
  }
  if (a.url.empty() || a.topic.empty()) die("--url and --topic are required");
  auto url = babelqueue::broker_url::parse(a.url);
  if (!url) die("bad --url");
  auto o = babelqueue::kafka::options_from_url(*url);
  if (!o) die("bad --url: " + o.error().message);
  if (o->security_protocol != "plaintext") die("only plaintext is measured here");
  if (a.phase == "delete") {
    run_delete(a, *o);
    return 0;
  }
  if (a.phase == "create") {
    run_create(a, *o);
    return 0;
  }
  const std::string body = bench::sized_envelope(a.size);
  if (a.phase == "both" || a.phase == "publish") run_publish(a, *o, body);
  if (a.phase == "both" || a.phase == "consume") {
    if (a.via_transport)
      run_consume_transport(a, *o);
    else
      run_consume(a, *o);
  }
  return 0;
}
