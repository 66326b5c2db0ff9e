// pulsar_ceiling — what a plain loop on the Apache Pulsar C++ client reaches on the same job as
// `babelqueue bench --broker pulsar://...`: the ceiling of this client library, against which
// the pulsar:// transport is measured (bench/pulsar_rounds.sh).
//
//   pulsar_ceiling --url pulsar://... --queue Q [--messages N] [--size B] [--batch K]
//                  [--publishers P] [--read 0|1] [--project 0|1] [--keep 0|1]
//                  [--prebuild 0|1] [--window W] [--timeout S]
//                  [--phase both|publish|consume|create]
//
// Same settings as the transport, read from the same URL with pulsar::options_from_url and
// applied as src/pulsar/pulsar_transport.cpp applies them: the same topic
// (bindings::pulsar::topic_name with the URL's tenant and namespace), client (I/O threads,
// one listener thread, operation and connection timeouts), producer (send timeout, block if
// the queue is full, batching on with batch_max_messages / batch_delay, compression) and
// consumer (subscription name and type, receiver queue, negative-ack delay, initial position,
// batch-index acks). Messages carry the same payload (the CLI's ~B-byte envelope), the same
// six bq- properties and the same event time (meta.created_at): the projection is computed
// ONCE here, the properties set on every message (the client copies them into its metadata);
// --project 1 projects the envelope for every message instead, as the transport must.
//
// Publish: P threads, each with its own client and producer (as P transport instances). The
// clock starts before the producer is created (the transport creates its producer at the
// first publish, which the CLI times): "publish:" includes it, "publish-steady:" is the rate
// from the end of the producer's creation on. K = 1: Producer::send (the synchronous send:
// it flushes the batch container at once and waits for the receipt); K > 1: K sendAsync,
// then Producer::flush (returns when every receipt arrived); any failed receipt stops the run.
// --keep 1 (the default) keeps the K messages of a call until its flush returned, as the
// transport does: the last reference to each message then drops on this thread, not on the
// client's I/O thread (with --keep 0 the I/O thread frees them when their receipts arrive:
// cross-thread frees, measured 4-16 % slower with batches of 100 on glibc here).
// --prebuild 1 builds all K messages of a call first and only then sends them (what
// pulsar_transport::publish_each does today), instead of building each right before its send.
// --window W > 0 keeps only the last W sent messages (a ring; with W above the producer's
// 1000 pending messages, the oldest one's receipt is in when it drops, so it is still freed
// on this thread) instead of all K: memory O(W), not O(K).
// Consume: the clock starts before the subscribe (as the CLI's consume phase, whose first
// receive() subscribes): Consumer::receive(msg, timeout) + Consumer::acknowledge(msg) per
// message. --read 1: each message's payload is also copied out and its properties read
// (getProperties() + bq-attempts + bq-schema-version: what the transport must do for every
// message; the bare loop does not). Prints the lines `babelqueue bench` prints ("publish: N
// msgs in T s = R msg/s; latency p50 ...", "consume: ...", "consume-steady: ...").
// --phase create subscribes `subscription` once and closes: the topic and its subscription
// exist before a measurement (so none times the topic's creation, and nothing published
// before the first consumer is discarded).
#include "bench_payloads.hpp"

#include <babelqueue/bindings/pulsar.hpp>
#include <babelqueue/pulsar/pulsar_transport.hpp>
#include <babelqueue/runtime/url.hpp>

#include <pulsar/Client.h>
#include <pulsar/Logger.h>
#include <pulsar/Version.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using bench_clock = std::chrono::steady_clock;
namespace bp = babelqueue::bindings::pulsar;
namespace pc = ::pulsar;
namespace bqp = babelqueue::pulsar;

struct args_t {
  std::string url, queue, phase = "both";
  std::size_t messages = 100000, size = 370, batch = 1;
  unsigned publishers = 1;
  bool read = false;
  bool project_each = false;
  bool keep = true;
  bool prebuild = false;
  std::size_t window = 0;
  double idle_s = 5;
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "pulsar_ceiling: %s\n", what.c_str());
  std::exit(2);
}

double secs(bench_clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Warnings and errors of the client to stderr, nothing else (as the transport without a sink;
// the client's own console logger writes INFO lines to stdout).
class stderr_logger final : public pc::Logger {
 public:
  explicit stderr_logger(std::string file) : file_(std::move(file)) {}
  bool isEnabled(Level level) override { return level >= LEVEL_WARN; }
  void log(Level level, int line, const std::string& message) override {
    if (level < LEVEL_WARN) return;
    std::fprintf(stderr, "pulsar %s:%d %s\n", file_.c_str(), line, message.c_str());
  }

 private:
  std::string file_;
};
class stderr_logger_factory final : public pc::LoggerFactory {
 public:
  pc::Logger* getLogger(const std::string& file) override { return new stderr_logger(file); }
};

int whole_seconds_up(std::chrono::milliseconds d) {
  return static_cast<int>(std::clamp<std::int64_t>((d.count() + 999) / 1000, 1, 86400));
}
int clamp_ms(std::chrono::milliseconds d) {
  return static_cast<int>(std::clamp<std::int64_t>(d.count(), 0, 0x7fffffff));
}

std::string service_url(const bqp::options& o) {
  return std::string(o.tls ? "pulsar+ssl://" : "pulsar://") + o.host + ":" + std::to_string(o.port);
}

// The transport's client, producer and consumer settings (pulsar_transport::open).
pc::ClientConfiguration client_conf(const bqp::options& o) {
  pc::ClientConfiguration conf;
  conf.setLogger(new stderr_logger_factory());
  conf.setIOThreads(static_cast<int>(o.io_threads));
  conf.setMessageListenerThreads(1);
  conf.setOperationTimeoutSeconds(whole_seconds_up(o.operation_timeout));
  conf.setConnectionTimeout(clamp_ms(o.connect_timeout));
  return conf;
}

pc::ProducerConfiguration producer_conf(const bqp::options& o) {
  pc::ProducerConfiguration p;
  p.setSendTimeout(clamp_ms(o.operation_timeout));
  p.setBlockIfQueueFull(true);
  p.setBatchingEnabled(o.batching);
  p.setBatchingMaxMessages(static_cast<unsigned>(o.batch_max_messages));
  p.setBatchingMaxPublishDelayMs(static_cast<unsigned long>(o.batch_delay.count()));
  if (o.compression == "lz4")
    p.setCompressionType(pc::CompressionLZ4);
  else if (o.compression == "zlib")
    p.setCompressionType(pc::CompressionZLib);
  else if (o.compression == "zstd")
    p.setCompressionType(pc::CompressionZSTD);
  else if (o.compression == "snappy")
    p.setCompressionType(pc::CompressionSNAPPY);
  return p;
}

pc::ConsumerConfiguration consumer_conf(const bqp::options& o) {
  pc::ConsumerConfiguration c;
  switch (o.subscription_type) {
    case bqp::subscription_kind::key_shared:
      c.setConsumerType(pc::ConsumerKeyShared);
      break;
    case bqp::subscription_kind::failover:
      c.setConsumerType(pc::ConsumerFailover);
      break;
    case bqp::subscription_kind::exclusive:
      c.setConsumerType(pc::ConsumerExclusive);
      break;
    case bqp::subscription_kind::shared:
      c.setConsumerType(pc::ConsumerShared);
      break;
  }
  c.setReceiverQueueSize(static_cast<int>(o.receiver_queue));
  if (o.ack_timeout.count() > 0) {
    c.setUnAckedMessagesTimeoutMs(static_cast<std::uint64_t>(o.ack_timeout.count()));
  }
  c.setNegativeAckRedeliveryDelayMs(static_cast<long>(o.negative_ack_delay.count()));
  c.setSubscriptionInitialPosition(o.initial_position == "latest" ? pc::InitialPositionLatest
                                                                  : pc::InitialPositionEarliest);
  c.setBatchIndexAckEnabled(true);
  return c;
}

// The message the transport builds for `body` (build_message), from a projection computed
// once, or projected now with `project_each`.
struct projected {
  std::vector<std::pair<std::string, std::string>> properties;
  std::optional<std::int64_t> event_time;
};

pc::Message make_message(const std::string& body, const projected& p, bool project_each) {
  pc::MessageBuilder b;
  b.setContent(body.data(), body.size());
  std::optional<std::int64_t> created;
  if (project_each) {
    created = bp::project_each(body, {}, [&b](std::string_view n, std::string_view v) {
      b.setProperty(std::string(n), std::string(v));
    });
  } else {
    for (const auto& [k, v] : p.properties) b.setProperty(k, v);
    created = p.event_time;
  }
  if (created && *created > 0) b.setEventTimestamp(static_cast<std::uint64_t>(*created));
  return b.build();
}

std::string percentiles(std::vector<double>& us) {
  if (us.empty()) return "latency n/a";
  std::sort(us.begin(), us.end());
  auto at = [&](double q) {
    return us[static_cast<std::size_t>(q * static_cast<double>(us.size() - 1))];
  };
  char buf[96];
  std::snprintf(buf, sizeof buf, "latency p50 %.1f us, p99 %.1f us", at(0.5), at(0.99));
  return buf;
}

// ---- publish -----------------------------------------------------------------------------

struct batch_wait {
  std::mutex m;
  std::condition_variable cv;
  std::size_t pending = 0;
  pc::Result first_error = pc::ResultOk;
};

void run_publish(const args_t& a, const bqp::options& o, const std::string& topic,
                 const std::string& body) {
  projected proj;
  proj.event_time = bp::project_each(body, {}, [&proj](std::string_view n, std::string_view v) {
    proj.properties.emplace_back(std::string(n), std::string(v));
  });
  if (proj.properties.size() != 6 || !proj.event_time) die("the envelope did not project");
  const std::size_t n = a.messages;
  std::vector<std::unique_ptr<pc::Client>> clients;
  for (unsigned i = 0; i < a.publishers; ++i) {
    clients.push_back(std::make_unique<pc::Client>(service_url(o), client_conf(o)));
  }
  const pc::ProducerConfiguration pconf = producer_conf(o);
  std::vector<std::vector<double>> lat(a.publishers);  // us per K-message call
  for (auto& l : lat) l.reserve(n / a.publishers / a.batch + 1);
  std::vector<bench_clock::time_point> ready(a.publishers), end(a.publishers);
  std::atomic<bool> failed{false};
  const auto t0 = bench_clock::now();
  std::vector<std::thread> threads;
  for (unsigned p = 0; p < a.publishers; ++p) {
    threads.emplace_back([&, p] {
      pc::Producer producer;
      if (const pc::Result r = clients[p]->createProducer(topic, pconf, producer);
          r != pc::ResultOk) {
        die(std::string("create producer: ") + pc::strResult(r));
      }
      ready[p] = bench_clock::now();
      const std::size_t mine = n / a.publishers + (p < n % a.publishers ? 1 : 0);
      std::vector<pc::Message> kept;  // --keep 1
      for (std::size_t done = 0; done < mine && !failed;) {
        const std::size_t k = std::min(a.batch, mine - done);
        const auto s0 = bench_clock::now();
        if (a.batch == 1) {
          const pc::Result r = producer.send(make_message(body, proj, a.project_each));
          if (r != pc::ResultOk) die(std::string("send: ") + pc::strResult(r));
        } else {
          auto w = std::make_shared<batch_wait>();
          w->pending = k;
          kept.clear();
          if (a.prebuild) {
            for (std::size_t i = 0; i < k; ++i)
              kept.push_back(make_message(body, proj, a.project_each));
          }
          for (std::size_t i = 0; i < k; ++i) {
            pc::Message msg = a.prebuild ? kept[i] : make_message(body, proj, a.project_each);
            if (a.window > 0 && !a.prebuild) {
              if (kept.size() < a.window) {
                kept.push_back(msg);
              } else {
                kept[i % a.window] = msg;
              }
            } else if (a.keep && !a.prebuild) {
              kept.push_back(msg);
            }
            producer.sendAsync(msg, [w](pc::Result r, const pc::MessageId&) {
              std::lock_guard lock(w->m);
              if (r != pc::ResultOk && w->first_error == pc::ResultOk) {
                w->first_error = r;
              }
              if (--w->pending == 0) w->cv.notify_all();
            });
          }
          if (const pc::Result r = producer.flush(); r != pc::ResultOk) {
            die(std::string("flush: ") + pc::strResult(r));
          }
          std::unique_lock lock(w->m);
          w->cv.wait(lock, [&] { return w->pending == 0; });  // flush returned: all are in
          if (w->first_error != pc::ResultOk)
            die(std::string("send: ") + pc::strResult(w->first_error));
        }
        lat[p].push_back(
            std::chrono::duration<double, std::micro>(bench_clock::now() - s0).count());
        done += k;
      }
      kept.clear();
      end[p] = bench_clock::now();
      producer.close();  // outside the clock (the CLI closes its transports after both phases)
    });
  }
  for (auto& t : threads) t.join();
  const auto t_end = *std::max_element(end.begin(), end.end());
  const double s = secs(t_end - t0);
  const auto first_ready = *std::max_element(ready.begin(), ready.end());
  std::vector<double> all;
  for (auto& l : lat) all.insert(all.end(), l.begin(), l.end());
  std::printf(
      "publish: %zu msgs in %.3f s = %.0f msg/s; %s (per %zu-message call; pulsar-client-cpp %s "
      "loop, batching %s, %u publisher(s)%s)\n",
      n, s, static_cast<double>(n) / s, percentiles(all).c_str(), a.batch, PULSAR_VERSION_STR,
      o.batching ? "on" : "off", a.publishers, a.project_each ? ", projected per message" : "");
  std::printf("publish-steady: producer ready after %.3f s; then %zu msgs in %.3f s = %.0f msg/s\n",
              secs(first_ready - t0), n, secs(t_end - first_ready),
              static_cast<double>(n) / secs(t_end - first_ready));
  for (auto& c : clients) c->close();
}

// ---- consume -----------------------------------------------------------------------------

void run_consume(const args_t& a, const bqp::options& o, const std::string& topic) {
  const std::size_t n = a.messages;
  pc::Client client(service_url(o), client_conf(o));
  const pc::ConsumerConfiguration cconf = consumer_conf(o);
  std::vector<double> lat;
  lat.reserve(n);
  std::string value, attempts, version;  // --read
  const std::string k_attempts(bp::header_attempts), k_version(bp::header_schema_version);
  const auto t0 = bench_clock::now();
  pc::Consumer consumer;
  if (const pc::Result r = client.subscribe(topic, o.subscription, cconf, consumer);
      r != pc::ResultOk) {
    die(std::string("subscribe: ") + pc::strResult(r));
  }
  std::size_t got = 0;
  std::optional<bench_clock::time_point> first;
  auto last = bench_clock::now();
  auto t_end = last;
  const auto idle = std::chrono::duration<double>(a.idle_s);
  const int slice_ms = 100;  // the CLI's receive slice
  pc::Message m;
  while (got < n) {
    const auto s0 = bench_clock::now();
    const pc::Result r = consumer.receive(m, slice_ms);
    if (r == pc::ResultTimeout) {
      if (bench_clock::now() - last > idle) break;
      continue;
    }
    if (r != pc::ResultOk) die(std::string("receive: ") + pc::strResult(r));
    if (a.read) {
      value.assign(static_cast<const char*>(m.getData()), m.getLength());
      const auto& props = m.getProperties();
      if (auto it = props.find(k_attempts); it != props.end()) attempts = it->second;
      if (auto it = props.find(k_version); it != props.end()) version = it->second;
    }
    if (const pc::Result ar = consumer.acknowledge(m); ar != pc::ResultOk) {
      die(std::string("acknowledge: ") + pc::strResult(ar));
    }
    const auto now = bench_clock::now();
    lat.push_back(std::chrono::duration<double, std::micro>(now - s0).count());
    if (!first) first = now;
    ++got;
    last = now;
    t_end = now;
  }
  if (got == 0) t_end = bench_clock::now();
  const double s = secs(t_end - t0);
  std::printf(
      "consume: %zu msgs in %.3f s = %.0f msg/s; %s (per receive+ack; pulsar-client-cpp %s "
      "loop%s, receiver queue %lld)\n",
      got, s, static_cast<double>(got) / s, percentiles(lat).c_str(), PULSAR_VERSION_STR,
      a.read ? " reading payload + properties" : "", static_cast<long long>(o.receiver_queue));
  if (first && got > 1) {
    const double steady = secs(t_end - *first);
    std::printf(
        "consume-steady: first message after %.3f s; then %zu msgs in %.3f s = %.0f msg/s\n",
        secs(*first - t0), got - 1, steady, static_cast<double>(got - 1) / steady);
  }
  consumer.close();  // sends the grouped acks
  client.close();
  if (got < n) std::exit(1);
}

// The topic and its subscription, before a measurement (see the file comment).
void run_create(const bqp::options& o, const std::string& topic) {
  pc::Client client(service_url(o), client_conf(o));
  pc::ConsumerConfiguration conf = consumer_conf(o);
  conf.setReceiverQueueSize(0);
  pc::Consumer consumer;
  if (const pc::Result r = client.subscribe(topic, o.subscription, conf, consumer);
      r != pc::ResultOk) {
    die(std::string("create subscription: ") + pc::strResult(r));
  }
  consumer.close();
  client.close();
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
    else if (k == "--queue" || k == "--topic") a.queue = v;
    else if (k == "--phase") a.phase = v;
    else if (k == "--messages") a.messages = std::stoul(v);
    else if (k == "--size") a.size = std::stoul(v);
    else if (k == "--batch") a.batch = std::max<std::size_t>(1, std::stoul(v));
    else if (k == "--publishers") a.publishers = static_cast<unsigned>(std::max(1ul, std::stoul(v)));
    else if (k == "--timeout") a.idle_s = std::stod(v);
    else if (k == "--read") a.read = v != "0" && v != "off";
    else if (k == "--project") a.project_each = v != "0" && v != "off";
    else if (k == "--keep") a.keep = v != "0" && v != "off";
    else if (k == "--prebuild") a.prebuild = v != "0" && v != "off";
    else if (k == "--window") a.window = std::stoul(v);
    else die("unknown option " + k);
    // clang-format on
  }
  if (a.url.empty() || a.queue.empty()) die("--url and --queue are required");
  auto url = babelqueue::broker_url::parse(a.url);
  if (!url) die("bad --url");
  auto o = bqp::options_from_url(*url);
  if (!o) die("bad --url: " + o.error().message);
  if (o->tls || !o->token.empty() || !o->token_file.empty())
    die("only plain pulsar:// is measured here");
  const std::string topic = bp::topic_name(a.queue, o->tenant, o->namespace_);
  if (a.phase == "create") {
    run_create(*o, topic);
    return 0;
  }
  const std::string body = bench::sized_envelope(a.size);
  if (a.phase == "both" || a.phase == "publish") run_publish(a, *o, topic, body);
  if (a.phase == "both" || a.phase == "consume") run_consume(a, *o, topic);
  return 0;
}
