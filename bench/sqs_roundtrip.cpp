// sqs_roundtrip — what one HTTP round trip to an SQS endpoint costs, beneath the sqs://
// transport (bench/sqs_rounds.sh, docs/benchmarks-sqs.md).
//
//   sqs_roundtrip --url sqs://REGION?endpoint=... --queue Q [--calls N] [--mode raw|api|sign]
//   sqs_roundtrip --url ... --queue Q --mode drain [--messages N] [--delete-batch 0|1]
//   sqs_roundtrip --url ... --queue Q --phase create|delete
//
// Every mode makes N GetQueueUrl calls of an existing queue, one at a time — the SQS call
// with the least server work — after one call before the clock (connect):
// - raw: plain libcurl, one easy handle (keep-alive), the transport's curl settings
//   (TCP_NODELAY, no `Expect:`), NOT signed (ElasticMQ does not check signatures): the
//   HTTP floor of this client library against this server.
// - api: the transport's own API layer (src/sqs/api.hpp: SigV4 signing, JSON request,
//   libcurl keep-alive, response parse, error mapping) with the options of the same URL
//   (sqs::options_from_url): what one call of the transport costs, without its projection.
// - sign: only the SigV4 signing of that request (no network): its CPU share.
// Prints "roundtrip MODE: N calls in T s = R calls/s; latency p50 X us, p99 Y us".
// - drain: the consume side at the API layer, without the transport: N messages (the CLI's
//   ~370-byte envelope with its bq-* attributes) are sent with SendMessageBatch before the
//   clock, then ReceiveMessage of up to 10 (the transport's default batch, long poll 1 s)
//   and, per received batch, one DeleteMessage per message (--delete-batch 0: what ack()
//   does) or one DeleteMessageBatch (--delete-batch 1: a possible batched-ack mode), until
//   N are deleted. Prints "drain: N msgs in T s = R msg/s; latency p50 .. (per message)",
//   then one line per SQS operation: "op NAME: N calls, p50 X us, p99 Y us, mean Z us" (the
//   fill's SendMessageBatch of 10 included), i.e. what one call of each costs on this server.
// --phase create / delete: CreateQueue / DeleteQueue of Q through the same API layer (what
// bench/sqs_rounds.sh uses to give every measurement a fresh, existing queue).
#include "bench_payloads.hpp"
#include "sqs/api.hpp"
#include "sqs/credentials.hpp"
#include "sqs/options.hpp"
#include "sqs/sigv4.hpp"

#include <babelqueue/bindings/sqs.hpp>
#include <babelqueue/runtime/url.hpp>
#include <babelqueue/sqs/sqs_transport.hpp>

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using bench_clock = std::chrono::steady_clock;
namespace sd = babelqueue::sqs::detail;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "sqs_roundtrip: %s\n", what.c_str());
  std::exit(2);
}

std::string percentiles(std::vector<std::uint64_t> v) {
  if (v.empty()) return "latency n/a";
  auto at = [&](double q) {
    auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return static_cast<double>(v[k]) / 1000.0;
  };
  char buf[128];
  const double p50 = at(0.50), p99 = at(0.99);
  std::snprintf(buf, sizeof buf, "latency p50 %.1f us, p99 %.1f us", p50, p99);
  return buf;
}

// Times `calls` calls of `one` (each returns false on failure).
template <class F>
void measure(const char* mode, std::size_t calls, F&& one, const char* what) {
  if (!one()) die(std::string(mode) + ": the first call failed");
  std::vector<std::uint64_t> ns;
  ns.reserve(calls);
  const auto t0 = bench_clock::now();
  for (std::size_t i = 0; i < calls; ++i) {
    const auto s = bench_clock::now();
    if (!one()) die(std::string(mode) + ": call " + std::to_string(i) + " failed");
    ns.push_back(static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(bench_clock::now() - s).count()));
  }
  const double secs = std::chrono::duration<double>(bench_clock::now() - t0).count();
  std::printf("roundtrip %s: %zu calls in %.3f s = %.0f calls/s; %s (%s)\n", mode, calls, secs,
              static_cast<double>(calls) / secs, percentiles(std::move(ns)).c_str(), what);
}

size_t keep_body(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

}  // namespace

int main(int argc, char** argv) {
  std::string url_text, queue, mode = "raw", phase = "run";
  std::size_t calls = 2000, messages = 5000;
  bool delete_batch = false;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) die("missing value of " + k);
    const std::string v = argv[++i];
    // clang-format off
    if (k == "--url") url_text = v;
    else if (k == "--queue") queue = v;
    else if (k == "--calls") calls = std::max<std::size_t>(1, std::stoul(v));
    else if (k == "--mode") mode = v;
    else if (k == "--phase") phase = v;
    else if (k == "--messages") messages = std::max<std::size_t>(1, std::stoul(v));
    else if (k == "--delete-batch") delete_batch = v != "0" && v != "off";
    else die("unknown option " + k);
    // clang-format on
  }
  if (url_text.empty() || queue.empty()) die("--url and --queue are required");
  auto url = babelqueue::broker_url::parse(url_text);
  if (!url) die("bad --url");
  auto o = babelqueue::sqs::options_from_url(*url);
  if (!o) die("bad --url: " + o.error().message);
  auto creds = sd::resolve_credentials(o->profile);
  if (!creds) die("no credentials: " + creds.error().message);

  sd::api_options a;
  a.endpoint = sd::endpoint_of(*o);
  a.region = o->region;
  a.creds = *creds;
  a.http.connect_timeout = o->connect_timeout;
  a.http.tls_ca_file = o->tls_ca_file;
  a.http.tls_verify = o->tls_verify;
  a.retries = static_cast<int>(o->retries);
  sd::api api(a);
  const auto timeout = o->operation_timeout;

  if (phase == "create") {
    auto r = api.create_queue(queue, {}, timeout);
    if (!r) die("CreateQueue " + queue + ": " + r.error().message);
    return 0;
  }
  if (phase == "delete") {
    auto u = api.get_queue_url(queue, timeout);
    if (!u) die("GetQueueUrl " + queue + ": " + u.error().message);
    auto r = api.delete_queue(*u, timeout);
    if (!r) die("DeleteQueue " + queue + ": " + r.error().message);
    return 0;
  }
  if (phase != "run") die("unknown --phase " + phase);

  const std::string request = "{\"QueueName\":\"" + queue + "\"}";
  if (mode == "api") {
    measure(
        "api", calls, [&] { return api.get_queue_url(queue, timeout).has_value(); },
        "GetQueueUrl through src/sqs/api: signed, parsed");
  } else if (mode == "sign") {
    std::string host = a.endpoint.substr(a.endpoint.find("://") + 3);
    host = host.substr(0, host.find('/'));
    measure(
        "sign", calls,
        [&] {
          sd::signing_input in;
          in.headers = {{"Host", host},
                        {"Content-Type", "application/x-amz-json-1.0"},
                        {"X-Amz-Target", "AmazonSQS.GetQueueUrl"}};
          in.body = request;
          const auto added =
              sd::sign(in, {a.region, "sqs", std::chrono::system_clock::now()}, a.creds);
          return !added.empty();
        },
        "SigV4 signing of a GetQueueUrl request only, no I/O");
  } else if (mode == "raw") {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURL* e = curl_easy_init();
    if (e == nullptr) die("curl_easy_init failed");
    curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, "Content-Type: application/x-amz-json-1.0");
    headers = curl_slist_append(headers, "X-Amz-Target: AmazonSQS.GetQueueUrl");
    headers = curl_slist_append(headers, "Expect:");
    headers = curl_slist_append(headers, "Accept:");
    const std::string target = a.endpoint + "/";
    std::string body;
    curl_easy_setopt(e, CURLOPT_URL, target.c_str());
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, request.c_str());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.size()));
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &keep_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    long connects = 0;
    measure(
        "raw", calls,
        [&] {
          body.clear();
          if (curl_easy_perform(e) != CURLE_OK) return false;
          long status = 0, c = 0;
          curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
          curl_easy_getinfo(e, CURLINFO_NUM_CONNECTS, &c);
          connects += c;
          return status == 200 && body.find("QueueUrl") != std::string::npos;
        },
        "GetQueueUrl, plain libcurl keep-alive, unsigned");
    std::printf("raw: %ld TCP connection(s) for %zu calls\n", connects, calls + 1);
    curl_slist_free_all(headers);
    curl_easy_cleanup(e);
  } else if (mode == "drain") {
    auto qurl = api.get_queue_url(queue, timeout);
    if (!qurl) die("GetQueueUrl " + queue + ": " + qurl.error().message);
    const std::string body = bench::sized_envelope(370);
    const auto attributes = babelqueue::bindings::sqs::project(body);
    std::vector<sd::send_entry> entries(10);
    for (auto& e : entries) {
      e.body = body;
      e.attributes = &attributes;
    }
    // Per-operation call latencies (ns).
    std::vector<std::uint64_t> op_send, op_receive, op_delete;
    auto since = [](bench_clock::time_point s) {
      return static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(bench_clock::now() - s).count());
    };
    for (std::size_t sent = 0; sent < messages;) {
      entries.resize(std::min<std::size_t>(10, messages - sent));
      const auto s0 = bench_clock::now();
      auto r = api.send_message_batch(*qurl, entries, timeout);
      if (entries.size() == 10) op_send.push_back(since(s0));
      if (!r) die("SendMessageBatch: " + r.error().message);
      for (const auto& oc : *r) {
        if (!oc.ok) die("SendMessageBatch entry failed: " + oc.code);
      }
      sent += entries.size();
    }
    std::vector<std::uint64_t> ns;
    ns.reserve(messages);
    std::size_t done = 0, calls_made = 0;
    const auto t0 = bench_clock::now();
    auto last = t0;
    while (done < messages) {
      const auto r0 = bench_clock::now();
      auto got = api.receive_message(*qurl, 10, 1, std::nullopt, timeout);
      ++calls_made;
      if (got && got->size() == 10) op_receive.push_back(since(r0));
      if (!got) die("ReceiveMessage: " + got.error().message);
      if (got->empty()) {
        if (bench_clock::now() - last > std::chrono::seconds(5)) die("the queue ran dry");
        continue;
      }
      if (delete_batch) {
        std::vector<std::string_view> handles;
        for (const auto& m : *got) handles.push_back(m.receipt_handle);
        const auto d0 = bench_clock::now();
        auto d = api.delete_message_batch(*qurl, handles, timeout);
        ++calls_made;
        if (handles.size() == 10) op_delete.push_back(since(d0));
        if (!d) die("DeleteMessageBatch: " + d.error().message);
        for (const auto& oc : *d) {
          if (!oc.ok) die("DeleteMessageBatch entry failed: " + oc.code);
        }
      } else {
        for (const auto& m : *got) {
          const auto d0 = bench_clock::now();
          auto d = api.delete_message(*qurl, m.receipt_handle, timeout);
          op_delete.push_back(since(d0));
          ++calls_made;
          if (!d) die("DeleteMessage: " + d.error().message);
        }
      }
      const auto now = bench_clock::now();
      const auto per = std::chrono::duration_cast<std::chrono::nanoseconds>(now - last).count() /
                       static_cast<std::int64_t>(got->size());
      for (std::size_t i = 0; i < got->size(); ++i) ns.push_back(static_cast<std::uint64_t>(per));
      done += got->size();
      last = now;
    }
    const double secs = std::chrono::duration<double>(bench_clock::now() - t0).count();
    std::printf(
        "drain: %zu msgs in %.3f s = %.0f msg/s; %s (per message, %s); %zu calls = %.2f "
        "per message\n",
        done, secs, static_cast<double>(done) / secs, percentiles(std::move(ns)).c_str(),
        delete_batch ? "ReceiveMessage of 10 + DeleteMessageBatch"
                     : "ReceiveMessage of 10 + DeleteMessage each",
        calls_made, static_cast<double>(calls_made) / static_cast<double>(done));
    auto op = [](const char* name, std::vector<std::uint64_t> v) {
      if (v.empty()) return;
      double sum = 0;
      for (auto x : v) sum += static_cast<double>(x);
      const double mean = sum / static_cast<double>(v.size()) / 1000.0;
      const std::size_t n = v.size();
      std::printf("op %s: %zu calls, %s, mean %.1f us\n", name, n,
                  percentiles(std::move(v)).c_str(), mean);
    };
    op("SendMessageBatch-10", std::move(op_send));
    op("ReceiveMessage-10", std::move(op_receive));
    op(delete_batch ? "DeleteMessageBatch-10" : "DeleteMessage", std::move(op_delete));
  } else {
    die("unknown --mode " + mode + " (raw, api, sign or drain)");
  }
  return 0;
}
