// rabbitmq_ceiling — what plain rabbitmq-c loops reach on the same job as
// `babelqueue bench --broker amqp://...`: the ceiling of this client library, against which
// the amqp:// transport is measured (bench/rabbitmq_rounds.sh).
//
//   rabbitmq_ceiling --url amqp://... --queue Q [--messages N] [--size B] [--publishers P]
//                    [--batch K] [--confirms 1|0] [--prefetch N] [--phase
//                    both|publish|consume|delete]
//
// Same settings as the transport: one connection per publisher thread (frame_max and
// heartbeat from the URL, defaults as the transport's), the queue declared durable with no
// arguments, default exchange, `mandatory`, the same body (the CLI's ~B-byte envelope) and
// the same property projection (persistent, computed ONCE here, not per message).
// Publish with confirms: confirm.select, then K publishes and a wait until all K are
// confirmed (K = 1: publish + wait for its confirm). Without confirms: publishes only, then
// one synchronous queue.declare so the broker has processed them all when the clock stops.
// Consume: one connection, basic.qos prefetch N, basic.consume (manual ack), and per message
// amqp_consume_message + basic.ack. Prints the lines `babelqueue bench` prints
// ("publish: N msgs in T s = R msg/s", "consume: ...").
#include "bench_payloads.hpp"
#include "rabbitmq/message.hpp"

#include <babelqueue/bindings/rabbitmq.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/rabbitmq/rabbitmq_transport.hpp>
#include <babelqueue/runtime/url.hpp>

#include <amqp.h>
#include <amqp_framing.h>
#include <amqp_tcp_socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <thread>
#include <variant>
#include <vector>

namespace {

using bench_clock = std::chrono::steady_clock;
namespace rb = babelqueue::bindings::rabbitmq;

struct args_t {
  std::string url, queue, phase = "both";
  std::size_t messages = 100000, size = 370, batch = 1;
  unsigned publishers = 1;
  bool confirms = true;
  int prefetch = 64;
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "rabbitmq_ceiling: %s\n", what.c_str());
  std::exit(2);
}

amqp_bytes_t bytes_of(std::string_view s) {
  return amqp_bytes_t{s.size(), const_cast<char*>(s.data())};
}

// The transport's property projection of `body`, built ONCE (the transport projects per
// message): the same wire structs the transport sends (src/rabbitmq/message.hpp).
struct fixed_properties {
  explicit fixed_properties(const std::string& body) : src(rb::project(body)), wire(src) {}
  rb::properties src;
  babelqueue::rabbitmq::detail::wire_properties wire;
};

void check_rpc(amqp_connection_state_t c, const char* what) {
  amqp_rpc_reply_t r = amqp_get_rpc_reply(c);
  if (r.reply_type != AMQP_RESPONSE_NORMAL) die(std::string(what) + " failed");
}

amqp_connection_state_t connect(const babelqueue::rabbitmq::options& o) {
  amqp_connection_state_t c = amqp_new_connection();
  amqp_socket_t* s = amqp_tcp_socket_new(c);
  timeval tv{5, 0};
  if (amqp_socket_open_noblock(s, o.host.c_str(), o.port, &tv) != AMQP_STATUS_OK) {
    die("cannot connect to " + o.host + ":" + std::to_string(o.port));
  }
  amqp_rpc_reply_t r = amqp_login(c, o.vhost.c_str(), 0, static_cast<int>(o.frame_max),
                                  static_cast<int>(o.heartbeat.count()), AMQP_SASL_METHOD_PLAIN,
                                  o.username.c_str(), o.password.c_str());
  if (r.reply_type != AMQP_RESPONSE_NORMAL) die("login refused");
  amqp_channel_open(c, 1);
  check_rpc(c, "channel.open");
  return c;
}

void declare(amqp_connection_state_t c, const std::string& q) {
  amqp_queue_declare(c, 1, bytes_of(q), 0, /*durable=*/1, 0, 0, amqp_empty_table);
  check_rpc(c, "queue.declare");
}

// Confirms of one channel: pending[i] is publish seq base+i; settled from the front.
struct confirm_window {
  std::uint64_t base = 1;
  std::deque<bool> pending;  // true = still unconfirmed
  void sent() { pending.push_back(true); }
  void acked(std::uint64_t tag, bool multiple) {
    if (tag < base) return;
    std::size_t i = static_cast<std::size_t>(tag - base);
    if (multiple) {
      for (std::size_t k = 0; k <= i && k < pending.size(); ++k) pending[k] = false;
    } else if (i < pending.size()) {
      pending[i] = false;
    }
    while (!pending.empty() && !pending.front()) {
      pending.pop_front();
      ++base;
    }
  }
  std::size_t outstanding() const { return pending.size(); }
};

void wait_confirms(amqp_connection_state_t c, confirm_window& w) {
  while (w.outstanding() > 0) {
    amqp_frame_t f{};
    timeval tv{10, 0};
    int rc = amqp_simple_wait_frame_noblock(c, &f, &tv);
    if (rc != AMQP_STATUS_OK) die(std::string("waiting for confirms: ") + amqp_error_string2(rc));
    if (f.frame_type != AMQP_FRAME_METHOD) continue;
    switch (f.payload.method.id) {
      case AMQP_BASIC_ACK_METHOD: {
        auto* m = static_cast<amqp_basic_ack_t*>(f.payload.method.decoded);
        w.acked(m->delivery_tag, m->multiple != 0);
        break;
      }
      case AMQP_BASIC_NACK_METHOD:
        die("basic.nack");
      case AMQP_BASIC_RETURN_METHOD:
        die("basic.return");
      case AMQP_CHANNEL_CLOSE_METHOD:
        die("channel closed by the broker");
      case AMQP_CONNECTION_CLOSE_METHOD:
        die("connection closed by the broker");
      default:
        break;
    }
  }
  amqp_maybe_release_buffers(c);
}

void run_publish(const args_t& a, const babelqueue::rabbitmq::options& o, const std::string& body,
                 const fixed_properties& fp) {
  std::vector<amqp_connection_state_t> conns;
  for (unsigned i = 0; i < a.publishers; ++i) {
    conns.push_back(connect(o));
    if (a.confirms) {
      amqp_confirm_select(conns.back(), 1);
      check_rpc(conns.back(), "confirm.select");
    }
    declare(conns.back(), a.queue);
  }
  const std::size_t n = a.messages;
  auto t0 = bench_clock::now();
  std::vector<std::thread> threads;
  for (unsigned p = 0; p < a.publishers; ++p) {
    threads.emplace_back([&, p] {
      amqp_connection_state_t c = conns[p];
      std::size_t mine = n / a.publishers + (p < n % a.publishers ? 1 : 0);
      confirm_window w;
      for (std::size_t done = 0; done < mine;) {
        std::size_t k = std::min(a.batch, mine - done);
        for (std::size_t i = 0; i < k; ++i) {
          int rc = amqp_basic_publish(c, 1, amqp_empty_bytes, bytes_of(a.queue), /*mandatory=*/1, 0,
                                      &fp.wire.props, bytes_of(body));
          if (rc != AMQP_STATUS_OK) die(std::string("publish: ") + amqp_error_string2(rc));
          if (a.confirms) w.sent();
        }
        if (a.confirms) wait_confirms(c, w);
        done += k;
      }
      if (!a.confirms) {
        // The channel is ordered: once this RPC returns, every publish was processed.
        amqp_queue_declare(c, 1, bytes_of(a.queue), /*passive=*/1, 0, 0, 0, amqp_empty_table);
        check_rpc(c, "queue.declare (passive)");
        amqp_maybe_release_buffers(c);
      }
    });
  }
  for (auto& t : threads) t.join();
  double s = std::chrono::duration<double>(bench_clock::now() - t0).count();
  std::printf(
      "publish: %zu msgs in %.3f s = %.0f msg/s (rabbitmq-c loop, confirms %s, batch %zu, "
      "%u publisher(s))\n",
      n, s, static_cast<double>(n) / s, a.confirms ? "on" : "off", a.batch, a.publishers);
  for (auto c : conns) {
    amqp_channel_close(c, 1, AMQP_REPLY_SUCCESS);
    amqp_connection_close(c, AMQP_REPLY_SUCCESS);
    amqp_destroy_connection(c);
  }
}

void run_consume(const args_t& a, const babelqueue::rabbitmq::options& o) {
  amqp_connection_state_t c = connect(o);
  const std::size_t n = a.messages;
  std::size_t got = 0;
  auto t0 = bench_clock::now();
  declare(c, a.queue);
  amqp_basic_qos(c, 1, 0, static_cast<std::uint16_t>(a.prefetch), 0);
  check_rpc(c, "basic.qos");
  amqp_basic_consume(c, 1, bytes_of(a.queue), amqp_empty_bytes, 0, /*no_ack=*/0, 0,
                     amqp_empty_table);
  check_rpc(c, "basic.consume");
  while (got < n) {
    amqp_envelope_t env{};
    timeval tv{5, 0};
    amqp_maybe_release_buffers(c);
    amqp_rpc_reply_t r = amqp_consume_message(c, &env, &tv, 0);
    if (r.reply_type != AMQP_RESPONSE_NORMAL) {
      if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
          r.library_error == AMQP_STATUS_TIMEOUT) {
        break;  // idle for 5 s: nothing more to come
      }
      die("consume failed");
    }
    if (amqp_basic_ack(c, env.channel, env.delivery_tag, 0) != AMQP_STATUS_OK) die("basic.ack");
    amqp_destroy_envelope(&env);
    ++got;
  }
  double s = std::chrono::duration<double>(bench_clock::now() - t0).count();
  std::printf("consume: %zu msgs in %.3f s = %.0f msg/s (rabbitmq-c loop, prefetch %d)\n", got, s,
              static_cast<double>(got) / s, a.prefetch);
  amqp_connection_close(c, AMQP_REPLY_SUCCESS);
  amqp_destroy_connection(c);
  if (got < n) std::exit(1);
}

void run_delete(const args_t& a, const babelqueue::rabbitmq::options& o) {
  amqp_connection_state_t c = connect(o);
  for (const auto& q : {a.queue, a.queue + ".dlq"}) {
    amqp_queue_delete(c, 1, bytes_of(q), 0, 0);
    check_rpc(c, "queue.delete");
  }
  amqp_connection_close(c, AMQP_REPLY_SUCCESS);
  amqp_destroy_connection(c);
}

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
    else if (k == "--publishers")
      a.publishers = static_cast<unsigned>(std::max(1ul, std::stoul(v)));
    else if (k == "--confirms")
      a.confirms = v != "0" && v != "off";
    else if (k == "--prefetch")
      a.prefetch = std::clamp(std::stoi(v), 1, 65535);
    else
      die("unknown option " + k);
  }
  if (a.url.empty() || a.queue.empty()) die("--url and --queue are required");
  auto url = babelqueue::broker_url::parse(a.url);
  if (!url) die("bad --url");
  auto o = babelqueue::rabbitmq::options_from_url(*url);
  if (!o) die("bad --url: " + o.error().message);
  if (o->tls) die("amqps:// is not measured here");
  if (a.phase == "delete") {
    run_delete(a, *o);
    return 0;
  }
  const std::string body = bench::sized_envelope(a.size);
  const fixed_properties fp(body);
  if (a.phase == "both" || a.phase == "publish") run_publish(a, *o, body, fp);
  if (a.phase == "both" || a.phase == "consume") run_consume(a, *o);
  return 0;
}
