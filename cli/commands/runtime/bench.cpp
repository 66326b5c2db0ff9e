// babelqueue bench [--broker URL] --queue Q --messages N --size B --publishers P
//                  --consumers C [--batch K] [--timeout S] [--delay D]
// Transport throughput and latency, generic over every registered scheme (open_transport).
// Phase 1: P threads publish N envelopes of about B bytes (K per publish_batch when K > 1;
// with --delay through publish_delayed, or publish_batch_delayed with --batch: the cost of a
// delayed publish against a plain one, bench/delay_rounds.sh; the consume phase then starts
// once the delay has passed).
// Phase 2: C threads receive + ack until N messages were consumed (or S seconds pass with
// nothing to receive). Each thread owns one transport (the seam is one-thread-per-instance).
// Prints msgs/s and per-call latency p50/p99 for both phases, and the resident set size
// (VmRSS) sampled at every 10 % of the consume phase; "consume-steady" is the consume rate
// from the first message on (without the consumers' start-up, e.g. a Kafka group join). Use
// an empty queue: the consume phase counts whatever it receives. Brokers whose queues must
// exist take their own URL option, e.g. `sqs://REGION?endpoint=URL&create_queues=true`
// (the first publish then creates the queue; bench/sqs_rounds.sh creates it beforehand).
#include "bench_payloads.hpp"  // bench/: the body the broker ceilings send too
#include "command.hpp"
#include "commands/runtime/broker.hpp"
#include "commands/runtime/time_args.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/runtime/url.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using bench_clock = std::chrono::steady_clock;

// Fixed-size latency sample per thread, allocated and touched before a phase starts, so
// sampling does not grow the resident set while RSS is being watched.
struct samples {
  explicit samples(std::size_t ops, std::size_t cap = 100000)
      : every(std::max<std::size_t>(1, (ops + cap - 1) / cap)), ns(cap, 0) {}
  void add(std::size_t op, bench_clock::duration d) {
    if (op % every != 0 || used >= ns.size()) return;
    ns[used++] =
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
  }
  std::size_t every;
  std::vector<std::uint64_t> ns;
  std::size_t used = 0;
};

std::string percentiles(std::vector<samples>& all) {
  std::vector<std::uint64_t> v;
  for (auto& s : all)
    v.insert(v.end(), s.ns.begin(), s.ns.begin() + static_cast<std::ptrdiff_t>(s.used));
  if (v.empty()) return "latency n/a";
  auto at = [&](double q) {
    auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return static_cast<double>(v[k]) / 1000.0;
  };
  char buf[128];
  double p50 = at(0.50), p99 = at(0.99);
  std::snprintf(buf, sizeof buf, "latency p50 %.1f us, p99 %.1f us", p50, p99);
  return buf;
}

long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

babelqueue::cli::command_registrar bench_command{
    "bench", [](CLI::App& root) {
      auto* cmd = root.add_subcommand("bench",
                                      "Measure publish/consume throughput and latency of a broker");
      struct args_t {
        std::string broker, queue, delay;
        std::size_t messages = 100000, size = 370, batch = 1;
        unsigned publishers = 1, consumers = 1;
        double timeout = 5;
      };
      auto args = std::make_shared<args_t>();
      babelqueue::cli::add_broker_option(cmd, args->broker);
      cmd->add_option("--queue", args->queue, "Queue to use (should be empty)")->required();
      cmd->add_option("--messages", args->messages,
                      "Messages to publish and consume (default 100000)")
          ->check(CLI::PositiveNumber);
      cmd->add_option("--size", args->size, "Approximate envelope size in bytes (default 370)");
      cmd->add_option("--publishers", args->publishers, "Publisher threads (default 1)")
          ->check(CLI::PositiveNumber);
      cmd->add_option("--consumers", args->consumers, "Consumer threads (default 1)")
          ->check(CLI::PositiveNumber);
      cmd->add_option("--batch", args->batch,
                      "Messages per publish_batch call (default 1 = publish)")
          ->check(CLI::PositiveNumber);
      cmd->add_option("--timeout", args->timeout,
                      "Stop consuming after S seconds with nothing received (default 5)")
          ->check(CLI::PositiveNumber);
      cmd->add_option("--delay", args->delay,
                      "Publish each message (or batch) with this delay (e.g. 1s)");
      cmd->callback([args] {
        auto& status = babelqueue::cli::exit_status();
        std::chrono::milliseconds delay{0};
        if (!args->delay.empty()) {
          std::string why;
          auto d = babelqueue::cli::parse_delay(args->delay, why);
          if (!d) {
            std::cerr << "--delay '" << args->delay << "': " << why << "\n";
            status = 2;
            return;
          }
          delay = *d;
        }
        babelqueue::cli::register_builtin_transports();
        const std::string url = babelqueue::cli::resolve_broker(args->broker);
        const std::string body = bench::sized_envelope(args->size);
        const std::size_t n = args->messages;

        // Open every transport first, so connection setup is not measured.
        auto open_all = [&](unsigned count,
                            std::vector<std::unique_ptr<babelqueue::transport>>& out) {
          for (unsigned i = 0; i < count; ++i) {
            auto t = babelqueue::open_transport(url);
            if (!t) {
              std::cerr << "cannot open broker " << babelqueue::redact_url(url) << ": "
                        << t.error().reason() << ": " << t.error().message << "\n";
              return false;
            }
            out.push_back(std::move(*t));
          }
          return true;
        };
        std::vector<std::unique_ptr<babelqueue::transport>> pubs, cons;
        if (!open_all(args->publishers, pubs) || !open_all(args->consumers, cons)) {
          status = 2;
          return;
        }
        std::printf(
            "bench: broker=%s queue=%s messages=%zu size=%zu publishers=%u consumers=%u "
            "batch=%zu\n",
            babelqueue::broker_url::parse(url).value().redacted().c_str(), args->queue.c_str(), n,
            body.size(), args->publishers, args->consumers, args->batch);

        // ---- publish ----
        std::atomic<bool> failed{false};
        std::vector<samples> pub_lat;
        for (unsigned i = 0; i < args->publishers; ++i)
          pub_lat.emplace_back(n / args->publishers / args->batch + 1);
        // Each publisher's batch of body copies is built before the clock starts (with a large
        // --batch, building it is not negligible and is not the transport's work).
        std::vector<std::vector<babelqueue::outgoing_message>> batches;
        for (unsigned p = 0; p < args->publishers; ++p) {
          std::size_t mine = n / args->publishers + (p < n % args->publishers ? 1 : 0);
          const std::size_t size =
              args->batch > 1 ? std::min(args->batch, std::max<std::size_t>(mine, 1)) : 0;
          batches.emplace_back(size, babelqueue::outgoing_message{body, {}});
        }
        auto t0 = bench_clock::now();
        {
          std::vector<std::thread> threads;
          for (unsigned p = 0; p < args->publishers; ++p) {
            threads.emplace_back([&, p] {
              std::size_t mine = n / args->publishers + (p < n % args->publishers ? 1 : 0);
              auto& batch = batches[p];
              std::size_t op = 0;
              for (std::size_t done = 0; done < mine && !failed; ++op) {
                std::size_t k = std::min(args->batch, mine - done);
                auto s = bench_clock::now();
                const bool one = k == 1 && args->batch == 1;
                auto r = one ? pubs[p]->publish_delayed(args->queue, body, {}, delay)
                             : pubs[p]->publish_batch_delayed(args->queue,
                                                              std::span(batch.data(), k), delay);
                pub_lat[p].add(op, bench_clock::now() - s);
                if (!r) {
                  std::cerr << "publish failed: " << r.error().message << "\n";
                  failed = true;
                }
                done += k;
              }
            });
          }
          for (auto& t : threads) t.join();
        }
        double pub_s = std::chrono::duration<double>(bench_clock::now() - t0).count();
        if (failed) {
          status = 2;
          return;
        }
        std::printf("publish: %zu msgs in %.3f s = %.0f msg/s; %s (per %s call)\n", n, pub_s,
                    static_cast<double>(n) / pub_s, percentiles(pub_lat).c_str(),
                    args->batch > 1
                        ? (delay.count() > 0 ? "publish_batch_delayed" : "publish_batch")
                    : delay.count() > 0 ? "publish_delayed"
                                        : "publish");
        // The last message is due `delay` after it was published.
        if (delay.count() > 0) std::this_thread::sleep_for(delay);

        // ---- consume ----
        std::vector<samples> con_lat;
        for (unsigned i = 0; i < args->consumers; ++i)
          con_lat.emplace_back(n / args->consumers + 1);
        std::atomic<std::size_t> consumed{0};
        std::mutex rss_mu;
        std::vector<long> rss;
        rss.reserve(16);
        rss.push_back(rss_kib());
        const std::size_t tenth = std::max<std::size_t>(1, n / 10);
        auto idle = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::duration<double>(args->timeout));
        // Consumers poll in short slices so that, once the last message is taken, the others
        // notice at once; the phase ends when the N-th message is acked (not after an idle wait).
        const auto slice = std::min(idle, std::chrono::milliseconds(100));
        std::atomic<std::int64_t> last_progress_ns{0};
        std::atomic<std::int64_t> done_at_ns{0};
        std::atomic<std::int64_t> first_at_ns{0};
        auto t1 = bench_clock::now();
        auto since_t1 = [&] {
          return std::chrono::duration_cast<std::chrono::nanoseconds>(bench_clock::now() - t1)
              .count();
        };
        {
          std::vector<std::thread> threads;
          for (unsigned c = 0; c < args->consumers; ++c) {
            threads.emplace_back([&, c] {
              std::size_t op = 0;
              while (consumed.load() < n && !failed) {
                auto s = bench_clock::now();
                auto got = cons[c]->receive(args->queue, slice);
                if (!got) {
                  std::cerr << "receive failed: " << got.error().message << "\n";
                  failed = true;
                  break;
                }
                if (!got->has_value()) {
                  // Idle for --timeout (across all consumers): nothing more to come.
                  if (since_t1() - last_progress_ns.load() > std::chrono::nanoseconds(idle).count())
                    break;
                  continue;
                }
                auto a = cons[c]->ack(**got);
                con_lat[c].add(op++, bench_clock::now() - s);
                if (!a) {
                  std::cerr << "ack failed: " << a.error().message << "\n";
                  failed = true;
                  break;
                }
                auto total = consumed.fetch_add(1) + 1;
                last_progress_ns = since_t1();
                if (total == 1) first_at_ns = since_t1();
                if (total == n) done_at_ns = since_t1();
                if (total % tenth == 0) {
                  std::lock_guard lock(rss_mu);
                  rss.push_back(rss_kib());
                }
              }
              (void)cons[c]->close(bench_clock::now() + std::chrono::seconds(5));
            });
          }
          for (auto& t : threads) t.join();
        }
        double con_s = done_at_ns.load() > 0
                           ? static_cast<double>(done_at_ns.load()) / 1e9
                           : std::chrono::duration<double>(bench_clock::now() - t1).count();
        std::size_t got = consumed.load();
        std::printf("consume: %zu msgs in %.3f s = %.0f msg/s; %s (per receive+ack)\n", got, con_s,
                    static_cast<double>(got) / con_s, percentiles(con_lat).c_str());
        if (got > 1 && done_at_ns.load() > first_at_ns.load()) {
          // Without the start-up (a Kafka consumer joins its group at the first receive).
          const double steady = static_cast<double>(done_at_ns.load() - first_at_ns.load()) / 1e9;
          std::printf(
              "consume-steady: first message after %.3f s; then %zu msgs in %.3f s = %.0f msg/s\n",
              static_cast<double>(first_at_ns.load()) / 1e9, got - 1, steady,
              static_cast<double>(got - 1) / steady);
        }
        auto [lo, hi] = std::minmax_element(
            rss.begin() + 1 < rss.end() ? rss.begin() + 1 : rss.begin(), rss.end());
        std::printf(
            "rss: before consume %ld KiB; during consume min %ld KiB, max %ld KiB (spread "
            "%.1f%%)\n",
            rss[0], *lo, *hi,
            *lo > 0 ? 100.0 * static_cast<double>(*hi - *lo) / static_cast<double>(*lo) : 0.0);
        for (auto& p : pubs) (void)p->close(bench_clock::now() + std::chrono::seconds(5));
        status = (failed || got < n) ? 1 : 0;
      });
    }};

}  // namespace
