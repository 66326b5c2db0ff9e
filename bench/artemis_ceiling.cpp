// artemis_ceiling — what a plain Qpid Proton C++ loop reaches on the same job as
// `babelqueue bench --broker artemis://...`: the ceiling of this client library, against which
// the artemis:// transport is measured (bench/artemis_rounds.sh).
//
//   artemis_ceiling --url artemis://... --queue Q [--messages N] [--size B] [--batch K]
//                   [--window W] [--project 0|1] [--read 0|1] [--hop 0|1] [--durable 1|0]
//                   [--async-ack 0|1] [--idle S]
//                   [--phase both|publish|consume]
//
// Same settings as the transport, read from the same URL with artemis::options_from_url:
// host, port, user/password (SASL PLAIN, allowed over plain TCP; none = ANONYMOUS),
// idle_timeout and prefetch. The same links: a sender whose target and a receiver whose
// source carry the `queue` capability (the broker makes an ANYCAST queue), at-least-once.
// The same message: the CLI's ~B-byte envelope (bench::sized_envelope) as one amqp-value
// string, durable (unless --durable 0 or durable=false), with the transport's projection
// (artemis::detail::to_message: subject, x-opt-jms-type, correlation-id, creation-time,
// content-type, the bq_* application properties) — built ONCE here (the transport builds it
// per publish; --project 1 does too).
//
// Publish: one connection, opened before the clock starts; the clock starts before the
// sender is attached (the transport attaches it at the first publish). Every message is sent
// unsettled and counted when the broker settles it `accepted` (rejected/released stop the
// run). K = 1 ("awaited"): one message in flight, the next sent once it is accepted — the job
// of the transport's publish(). K > 1: K messages sent (as far as the broker's link credit
// allows), then a wait until all K are accepted — the job of one publish_batch(K). --window W
// instead keeps W in flight continuously (a sliding window, no batch boundary; not a job the
// transport has, shown for reference).
// Consume: a second connection, opened before the publish phase (the CLI opens its consumer
// transports first too); the clock starts before the receiver is attached. Manual credit as
// the transport: `prefetch` at attach, one credit back per settled message; every message is
// accepted (settled) in on_message. Ends after N messages, or after --idle S seconds (default
// 5) without one. --read 1: each message's body is copied out and its headers read
// (artemis::detail::body_of / headers_of: what the transport must do for every message).
//
// --durable 0 sends the messages non-durable (Artemis then does not journal them): what the
// broker's journal costs. The URL's `durable=false` does the same, so a run with that query
// key measures the transport and the ceiling on the same (non-durable) job.
//
// Without --hop everything runs in the Proton event handlers on the main thread: no
// cross-thread hop, the point of a ceiling. --hop 1 runs the container on a second thread and
// drives it from the main thread the way the transport's amqp10::client did until 2026-12-05
// (it now runs Proton's connection_driver on the caller's thread, no hop) — every publish
// (or batch) and every settlement handed over through the connection's work_queue and waited
// for on a condition variable, every message handed back through a locked queue — with none
// of the transport's other work: it isolates what the thread hop itself costs. Only a count
// crosses for a publish (the Proton thread sends the one prebuilt message); with --project 1
// the messages are built on the main thread and handed over, as that transport did. With
// --async-ack 1 the consumer hands its settlements over without waiting for them (queued,
// one wake-up per non-empty queue, applied in a run with one credit top-up), as its later
// versions did. Kept to show what a thread hop costs (docs/benchmarks-artemis.md).
//
// Prints the lines `babelqueue bench` prints ("publish: N msgs in T s = R msg/s",
// "consume: ...", "consume-steady: first message after X s; then M msgs in T s = R msg/s").
#include "artemis/message.hpp"  // src/: the transport's own projection onto proton::message
#include "bench_payloads.hpp"

#include <babelqueue/artemis/artemis_transport.hpp>
#include <babelqueue/runtime/url.hpp>

#include <proton/connection.hpp>
#include <proton/connection_options.hpp>
#include <proton/container.hpp>
#include <proton/delivery.hpp>
#include <proton/delivery_mode.hpp>
#include <proton/duration.hpp>
#include <proton/error_condition.hpp>
#include <proton/message.hpp>
#include <proton/messaging_handler.hpp>
#include <proton/receiver.hpp>
#include <proton/receiver_options.hpp>
#include <proton/sender.hpp>
#include <proton/sender_options.hpp>
#include <proton/source_options.hpp>
#include <proton/symbol.hpp>
#include <proton/target_options.hpp>
#include <proton/tracker.hpp>
#include <proton/transport.hpp>
#include <proton/work_queue.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using bench_clock = std::chrono::steady_clock;
namespace ba = babelqueue::artemis;

struct args_t {
  std::string url, queue, phase = "both";
  std::size_t messages = 100000, size = 370, batch = 1, window = 0;
  bool project_each = false;
  bool read = false;
  bool hop = false;
  bool durable = true;
  bool async_ack = false;
  double idle_s = 5;
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "artemis_ceiling: %s\n", what.c_str());
  std::fflush(stdout);
  std::_Exit(2);
}

double seconds(bench_clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Per-call latencies (one per publish / publish_batch job, or per receive+ack).
struct latencies {
  std::vector<std::uint64_t> ns;
  void add(bench_clock::duration d) {
    ns.push_back(static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(d).count()));
  }
  std::string summary() {
    if (ns.empty()) return "latency n/a";
    auto at = [&](double q) {
      auto k = static_cast<std::size_t>(q * static_cast<double>(ns.size() - 1));
      std::nth_element(ns.begin(), ns.begin() + static_cast<std::ptrdiff_t>(k), ns.end());
      return static_cast<double>(ns[k]) / 1000.0;
    };
    char buf[96];
    const double p50 = at(0.5), p99 = at(0.99);
    std::snprintf(buf, sizeof buf, "latency p50 %.1f us, p99 %.1f us", p50, p99);
    return buf;
  }
};

// What the transport's amqp10::client sets on its connection (client_connection.cpp,
// connection_options()).
proton::connection_options connection_options_of(const ba::options& o) {
  proton::connection_options co;
  co.idle_timeout(proton::duration(o.idle_timeout.count()));
  co.sasl_enabled(true);
  if (!o.username.empty()) {
    co.user(o.username);
    co.password(o.password);
    co.sasl_allowed_mechs("PLAIN");
    co.sasl_allow_insecure_mechs(true);
  } else {
    co.sasl_allowed_mechs("ANONYMOUS");
  }
  return co;
}

std::vector<proton::symbol> queue_capability() { return {proton::symbol("queue")}; }

proton::sender_options sender_options_of(const std::string& queue) {
  proton::sender_options so;
  so.delivery_mode(proton::delivery_mode::AT_LEAST_ONCE);
  so.target(proton::target_options().address(queue).capabilities(queue_capability()));
  return so;
}

proton::receiver_options receiver_options_of(const std::string& queue) {
  proton::receiver_options ro;
  ro.auto_accept(false);
  ro.credit_window(0);  // manual credit: prefetch at attach, one back per settled message
  ro.delivery_mode(proton::delivery_mode::AT_LEAST_ONCE);
  ro.source(proton::source_options().address(queue).capabilities(queue_capability()));
  return ro;
}

std::string publish_mode(const args_t& a) {
  std::string m = a.window > 0  ? "window " + std::to_string(a.window)
                  : a.batch > 1 ? "batch " + std::to_string(a.batch)
                                : std::string("awaited");
  if (a.project_each) m += ", projected per message";
  if (!a.durable) m += ", not durable";
  return m + (a.hop ? ", thread hop" : "");
}

void print_publish(const args_t& a, std::size_t n, double s, latencies& lat) {
  const char* per = a.window > 0 ? "64 accepted" : a.batch > 1 ? "batch" : "publish";
  std::printf("publish: %zu msgs in %.3f s = %.0f msg/s; %s (per %s) (proton loop, %s)\n", n, s,
              static_cast<double>(n) / s, lat.summary().c_str(), per, publish_mode(a).c_str());
  std::fflush(stdout);
}

void print_consume(const args_t& a, std::int64_t prefetch, std::size_t got, double s,
                   double first_s, latencies* lat) {
  std::string extra = (a.read ? ", reading body + headers" : "") +
                      std::string(a.hop ? ", thread hop" : "") +
                      (a.async_ack ? ", settlements not waited for" : "");
  std::printf("consume: %zu msgs in %.3f s = %.0f msg/s%s%s (proton loop, prefetch %lld%s)\n", got,
              s, static_cast<double>(got) / s, lat ? "; " : "",
              lat ? (lat->summary() + " (per receive+ack)").c_str() : "",
              static_cast<long long>(prefetch), extra.c_str());
  if (got > 1 && s > first_s) {
    std::printf(
        "consume-steady: first message after %.3f s; then %zu msgs in %.3f s = %.0f msg/s\n",
        first_s, got - 1, s - first_s, static_cast<double>(got - 1) / (s - first_s));
  }
  std::fflush(stdout);
}

// The transport's message of `body` (--durable 0 or the URL's durable=false: not durable).
proton::message message_of(const args_t& a, const std::string& body) {
  return ba::detail::to_message(body, {}, std::nullopt, a.durable);
}

// What --read adds per message: the transport's receive() copies these out.
std::size_t read_message(const proton::message& m) {
  const std::string body = ba::detail::body_of(m);
  const auto hdrs = ba::detail::headers_of(m);
  return body.size() + hdrs.size();
}

// ---- the ceiling: everything in the event handlers, on the main thread --------------------

class direct_loop final : public proton::messaging_handler {
 public:
  direct_loop(const args_t& a, const ba::options& o, const std::string& body)
      : a_(a), o_(o), body_(body), fixed_(message_of(a, body)) {}

  int status() const { return status_; }

  void on_container_start(proton::container& c) override {
    container_ = &c;
    const std::string url = "amqp://" + o_.host + ":" + std::to_string(o_.port);
    if (publishing()) {
      pub_ = c.connect(url, connection_options_of(o_));
      ++needed_;
    }
    if (consuming()) {
      con_ = c.connect(url, connection_options_of(o_));
      ++needed_;
    }
  }

  // Proton writes out only what a connection's own events (or its work queue) change: work
  // on the other connection is handed to that connection's work queue — same thread.
  void on_connection_open(proton::connection&) override {
    if (++opened_ != needed_) return;
    if (publishing()) {
      pub_.work_queue().add([this] { start_publish(); });
    } else {
      con_.work_queue().add([this] { start_consume(); });
    }
    arm_tick();
  }

  // ---- publish ----
  void start_publish() {
    state_ = state::publishing;
    t0_ = bench_clock::now();
    last_progress_ = t0_;
    lat_.ns.reserve(a_.messages / std::max<std::size_t>(1, a_.batch) + 1);
    next_batch();
    sender_ = pub_.open_sender(a_.queue, sender_options_of(a_.queue));
  }

  void next_batch() {
    batch_start_ = bench_clock::now();
    batch_end_ = std::min(a_.messages, accepted_ + std::max<std::size_t>(1, a_.batch));
  }

  std::size_t send_limit() const {
    return a_.window > 0 ? std::min(a_.messages, accepted_ + a_.window) : batch_end_;
  }

  void pump() {
    while (state_ == state::publishing && sent_ < send_limit() && sender_.credit() > 0) {
      if (a_.project_each) {
        sender_.send(message_of(a_, body_));
      } else {
        sender_.send(fixed_);
      }
      ++sent_;
    }
  }

  void on_sendable(proton::sender&) override { pump(); }

  void on_tracker_accept(proton::tracker&) override {
    ++accepted_;
    last_progress_ = bench_clock::now();
    if (a_.window > 0) {
      if (accepted_ % 64 == 0 || accepted_ == a_.messages) lat_.add(last_progress_ - batch_start_);
      if (accepted_ % 64 == 0) batch_start_ = last_progress_;
    } else if (accepted_ == batch_end_) {
      lat_.add(last_progress_ - batch_start_);
      if (accepted_ < a_.messages) next_batch();
    }
    if (accepted_ == a_.messages) {
      print_publish(a_, a_.messages, seconds(last_progress_ - t0_), lat_);
      sender_.close();
      if (consuming()) {
        con_.work_queue().add([this] { start_consume(); });
      } else {
        finish();
      }
      return;
    }
    pump();
  }

  void on_tracker_reject(proton::tracker&) override { die("the broker rejected a message"); }
  void on_tracker_release(proton::tracker&) override { die("the broker released a message"); }

  // ---- consume ----
  void start_consume() {
    state_ = state::consuming;
    t1_ = bench_clock::now();
    last_progress_ = t1_;
    receiver_ = con_.open_receiver(a_.queue, receiver_options_of(a_.queue));
    receiver_.add_credit(static_cast<int>(o_.prefetch));
  }

  void on_message(proton::delivery& d, proton::message& m) override {
    const auto now = bench_clock::now();
    if (got_ == 0) first_ = now;
    if (a_.read) sink_ += read_message(m);
    d.accept();
    receiver_.add_credit(1);
    last_progress_ = now;
    if (++got_ == a_.messages) end_consume(now);
  }

  void end_consume(bench_clock::time_point at) {
    print_consume(a_, o_.prefetch, got_, seconds(at - t1_), seconds(first_ - t1_), nullptr);
    if (got_ < a_.messages) status_ = 1;
    finish();
  }

  // ---- idle watch and errors ----
  void arm_tick() {
    container_->schedule(proton::duration(100), [this] { tick(); });
  }

  void tick() {
    if (state_ == state::done) return;
    const auto now = bench_clock::now();
    if (seconds(now - last_progress_) > a_.idle_s) {
      if (state_ == state::publishing) {
        die("publish stalled: " + std::to_string(accepted_) + " of " + std::to_string(a_.messages) +
            " accepted");
      }
      end_consume(last_progress_);
      return;
    }
    arm_tick();
  }

  void finish() {
    state_ = state::done;
    if (pub_) pub_.work_queue().add([this] { pub_.close(); });
    if (con_) con_.work_queue().add([this] { con_.close(); });
  }

  void on_transport_error(proton::transport& t) override { die("connection: " + t.error().what()); }
  void on_connection_error(proton::connection& c) override {
    die("connection: " + c.error().what());
  }
  void on_sender_error(proton::sender& s) override { die("sender: " + s.error().what()); }
  void on_receiver_error(proton::receiver& r) override { die("receiver: " + r.error().what()); }

 private:
  bool publishing() const { return a_.phase == "both" || a_.phase == "publish"; }
  bool consuming() const { return a_.phase == "both" || a_.phase == "consume"; }

  enum class state { starting, publishing, consuming, done } state_ = state::starting;
  const args_t& a_;
  const ba::options& o_;
  const std::string& body_;
  const proton::message fixed_;
  proton::container* container_ = nullptr;
  proton::connection pub_, con_;
  proton::sender sender_;
  proton::receiver receiver_;
  int needed_ = 0, opened_ = 0, status_ = 0;
  std::size_t sent_ = 0, accepted_ = 0, batch_end_ = 0, got_ = 0, sink_ = 0;
  bench_clock::time_point t0_, t1_, first_, batch_start_, last_progress_;
  latencies lat_;
};

// ---- the same job across a thread hop, the transport's structure without its work -----------

class hop_loop final : public proton::messaging_handler {
 public:
  hop_loop(const args_t& a, const ba::options& o, const std::string& body)
      : a_(a), o_(o), fixed_(message_of(a, body)), container_(*this) {}

  // ---- Proton thread ----
  void on_container_start(proton::container& c) override {
    const std::string url = "amqp://" + o_.host + ":" + std::to_string(o_.port);
    if (publishing()) pub_ = c.connect(url, connection_options_of(o_));
    if (consuming()) con_ = c.connect(url, connection_options_of(o_));
  }

  void on_connection_open(proton::connection& c) override {
    std::lock_guard lk(m_);
    if (pub_ && c == pub_) pub_wq_ = &c.work_queue();
    if (con_ && c == con_) con_wq_ = &c.work_queue();
    cv_.notify_all();
  }

  void pump() {
    while (unsent_fixed_ > 0 && sender_ && sender_.credit() > 0) {
      sender_.send(fixed_);
      --unsent_fixed_;
    }
    while (!outbox_.empty() && sender_ && sender_.credit() > 0) {
      sender_.send(outbox_.front());
      outbox_.pop_front();
    }
  }
  void on_sendable(proton::sender&) override { pump(); }

  void on_tracker_accept(proton::tracker&) override {
    std::lock_guard lk(m_);
    if (++accepted_ == target_) cv_.notify_all();
  }
  void on_tracker_reject(proton::tracker&) override { die("the broker rejected a message"); }
  void on_tracker_release(proton::tracker&) override { die("the broker released a message"); }

  void on_message(proton::delivery& d, proton::message& m) override {
    held_.push_back(d);
    std::lock_guard lk(m_);
    inbox_.push_back(std::move(m));
    cv_.notify_all();
  }

  void on_transport_error(proton::transport& t) override { die("connection: " + t.error().what()); }
  void on_connection_error(proton::connection& c) override {
    die("connection: " + c.error().what());
  }
  void on_sender_error(proton::sender& s) override { die("sender: " + s.error().what()); }
  void on_receiver_error(proton::receiver& r) override { die("receiver: " + r.error().what()); }

  // ---- main thread ----
  int run(const std::string& body) {
    std::thread proton_thread([this] { container_.run(); });
    {
      std::unique_lock lk(m_);
      if (!cv_.wait_for(lk, std::chrono::seconds(10),
                        [&] { return (!publishing() || pub_wq_) && (!consuming() || con_wq_); })) {
        die("no connection within 10 s");
      }
    }
    int status = 0;
    if (publishing()) publish(body);
    if (consuming()) status = consume();
    if (pub_wq_ != nullptr) pub_wq_->add([this] { pub_.close(); });
    if (con_wq_ != nullptr) con_wq_->add([this] { con_.close(); });
    proton_thread.join();
    return status;
  }

  void publish(const std::string& body) {
    const std::size_t n = a_.messages, k = std::max<std::size_t>(1, a_.batch);
    latencies lat;
    lat.ns.reserve(n / k + 1);
    const auto t0 = bench_clock::now();
    pub_wq_->add([this] { sender_ = pub_.open_sender(a_.queue, sender_options_of(a_.queue)); });
    for (std::size_t done = 0; done < n;) {
      const std::size_t now_k = std::min(k, n - done);
      const auto s = bench_clock::now();
      {
        std::lock_guard lk(m_);
        target_ = done + now_k;
      }
      if (a_.project_each) {
        // Built on the caller's thread and handed over, as the transport's send_op.
        std::vector<proton::message> batch;
        batch.reserve(now_k);
        for (std::size_t i = 0; i < now_k; ++i) batch.push_back(message_of(a_, body));
        pub_wq_->add([this, b = std::move(batch)]() mutable {
          for (auto& m : b) outbox_.push_back(std::move(m));
          pump();
        });
      } else {
        // Only the count crosses: the hop itself, no message built or copied per publish.
        pub_wq_->add([this, now_k] {
          unsent_fixed_ += now_k;
          pump();
        });
      }
      std::unique_lock lk(m_);
      if (!cv_.wait_for(lk, std::chrono::seconds(10), [&] { return accepted_ >= target_; })) {
        die("publish stalled");
      }
      lat.add(bench_clock::now() - s);
      done += now_k;
    }
    print_publish(a_, n, seconds(bench_clock::now() - t0), lat);
  }

  int consume() {
    const std::size_t n = a_.messages;
    latencies lat;
    lat.ns.reserve(n);
    std::size_t got = 0, sink = 0;
    const auto t1 = bench_clock::now();
    bench_clock::time_point first{}, last = t1;
    con_wq_->add([this] {
      receiver_ = con_.open_receiver(a_.queue, receiver_options_of(a_.queue));
      receiver_.add_credit(static_cast<int>(o_.prefetch));
    });
    const auto idle =
        std::chrono::duration_cast<bench_clock::duration>(std::chrono::duration<double>(a_.idle_s));
    while (got < n) {
      const auto s = bench_clock::now();
      proton::message m;
      {
        std::unique_lock lk(m_);
        if (!cv_.wait_until(lk, last + idle, [&] { return !inbox_.empty(); })) break;
        m = std::move(inbox_.front());
        inbox_.pop_front();
      }
      if (a_.read) sink += read_message(m);
      if (a_.async_ack) {
        // Handed over without waiting: queued, one wake-up per non-empty queue, applied in a
        // run (accept each, one credit top-up for the run).
        std::lock_guard lk(m_);
        if (to_settle_++ == 0) {
          con_wq_->add([this] {
            std::size_t k;
            {
              std::lock_guard lk2(m_);
              k = std::exchange(to_settle_, 0);
            }
            for (std::size_t i = 0; i < k; ++i) {
              held_.front().accept();
              held_.pop_front();
            }
            receiver_.add_credit(static_cast<int>(k));
          });
        }
      } else {
        // The settlement, applied on the Proton thread and waited for (the transport's ack).
        bool settled = false;
        con_wq_->add([this, &settled] {
          proton::delivery d = held_.front();
          held_.pop_front();
          d.accept();
          receiver_.add_credit(1);
          std::lock_guard lk(m_);
          settled = true;
          cv_.notify_all();
        });
        std::unique_lock lk(m_);
        cv_.wait(lk, [&] { return settled; });
      }
      last = bench_clock::now();
      lat.add(last - s);
      if (got++ == 0) first = last;
    }
    print_consume(a_, o_.prefetch, got, seconds(last - t1), seconds(first - t1), &lat);
    return got == n ? 0 : 1;
  }

 private:
  bool publishing() const { return a_.phase == "both" || a_.phase == "publish"; }
  bool consuming() const { return a_.phase == "both" || a_.phase == "consume"; }

  const args_t& a_;
  const ba::options& o_;
  const proton::message fixed_;  // sent as is unless --project 1
  proton::container container_;
  // Proton thread only.
  proton::connection pub_, con_;
  proton::sender sender_;
  proton::receiver receiver_;
  std::deque<proton::message> outbox_;
  std::size_t unsent_fixed_ = 0;
  std::deque<proton::delivery> held_;
  // Shared, under m_.
  std::mutex m_;
  std::condition_variable cv_;
  proton::work_queue* pub_wq_ = nullptr;
  proton::work_queue* con_wq_ = nullptr;
  std::size_t accepted_ = 0, target_ = 0;
  std::size_t to_settle_ = 0;  // --async-ack: settlements handed over, not yet applied
  std::deque<proton::message> inbox_;
};

}  // namespace

int main(int argc, char** argv) {
  args_t a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (i + 1 >= argc) die("missing value of " + k);
    std::string v = argv[++i];
    if (k == "--url")
      a.url = v;
    else if (k == "--queue")
      a.queue = v;
    else if (k == "--phase")
      a.phase = v;
    else if (k == "--messages")
      a.messages = std::stoul(v);
    else if (k == "--size")
      a.size = std::stoul(v);
    else if (k == "--batch")
      a.batch = std::max<std::size_t>(1, std::stoul(v));
    else if (k == "--window")
      a.window = std::stoul(v);
    else if (k == "--project")
      a.project_each = v == "1";
    else if (k == "--read")
      a.read = v == "1";
    else if (k == "--hop")
      a.hop = v == "1";
    else if (k == "--durable")
      a.durable = v != "0";
    else if (k == "--async-ack")
      a.async_ack = v == "1";
    else if (k == "--idle")
      a.idle_s = std::stod(v);
    else
      die("unknown option " + k);
  }
  if (a.url.empty() || a.queue.empty()) die("--url and --queue are required");
  if (a.phase != "both" && a.phase != "publish" && a.phase != "consume") die("bad --phase");
  if (a.messages == 0) die("--messages must be positive");
  if (a.hop && a.window > 0) die("--window is not measured with --hop");
  if (a.async_ack && !a.hop) die("--async-ack needs --hop 1");
  auto url = babelqueue::broker_url::parse(a.url);
  if (!url) die("bad --url");
  auto o = ba::options_from_url(*url);
  if (!o) die("bad --url: " + o.error().message);
  if (o->tls) die("artemis+ssl:// is not measured here");
  if (!o->durable) a.durable = false;  // the transport's durable=false: the same messages
  const std::string body = bench::sized_envelope(a.size);
  std::printf("artemis_ceiling: queue=%s messages=%zu size=%zu prefetch=%lld phase=%s\n",
              a.queue.c_str(), a.messages, body.size(), static_cast<long long>(o->prefetch),
              a.phase.c_str());
  if (a.hop) {
    hop_loop loop(a, *o, body);
    return loop.run(body);
  }
  direct_loop loop(a, *o, body);
  proton::container c(loop);
  c.run();
  return loop.status();
}
