// Producing with awaited delivery reports (producer.hpp).
#include "kafka/producer.hpp"

#include <algorithm>
#include <thread>

namespace babelqueue::inline v1::kafka::detail {

namespace bk = bindings::kafka;
using clock = std::chrono::steady_clock;

namespace {

int remaining_ms(clock::time_point deadline, int cap = 100) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, cap));
}

}  // namespace

record record_for(std::string_view topic, std::string_view value, const headers& oob) {
  auto p = bk::project(value, oob);
  record r;
  r.topic = topic;
  r.value = value;
  const bool retry_tier = p.header(bk::header_delay) != nullptr;
  r.timestamp_ms = retry_tier ? 0 : p.timestamp_ms.value_or(0);
  r.headers = std::move(p.headers);
  return r;
}

result<std::unique_ptr<producer>> producer::open(const options& o) {
  std::unique_ptr<producer> p(new producer());
  p->ctx_.log = o.log ? &o.log : nullptr;
  p->ctx_.name = "producer";
  p->ctx_.self = p.get();
  p->timeout_ = o.operation_timeout;
  auto conf = producer_conf(o, &p->ctx_);
  if (!conf) return fail(conf.error());
  rd_kafka_conf_set_dr_msg_cb(conf->get(), &producer::on_delivery);
  auto rk = create_client(RD_KAFKA_PRODUCER, std::move(*conf));
  if (!rk) return fail(rk.error());
  p->rk_ = std::move(*rk);
  return p;
}

producer::~producer() {
  if (rk_) {
    // Bounded: unsent records are dropped at destroy (close() flushes first).
    rd_kafka_purge(rk_.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_poll(rk_.get(), 0);
  }
}

void producer::on_delivery(rd_kafka_t* rk, const rd_kafka_message_t* m, void* /*opaque*/) {
  auto* ctx = static_cast<context*>(rd_kafka_opaque(rk));
  const auto id = reinterpret_cast<std::uintptr_t>(m->_private);
  const auto it = ctx->self->reports_.find(id);
  if (it != ctx->self->reports_.end()) it->second = m->err;
}

result<void> producer::enqueue(const record& r, std::uint64_t id, clock::time_point deadline) {
  for (;;) {
    rd_kafka_headers_t* hdrs = rd_kafka_headers_new(r.headers.size());
    for (const auto& [k, v] : r.headers) {
      rd_kafka_header_add(hdrs, k.data(), static_cast<ssize_t>(k.size()), v.data(),
                          static_cast<ssize_t>(v.size()));
    }
    const std::string topic(r.topic);
    void* key = r.key ? const_cast<char*>(r.key->data()) : nullptr;
    const std::size_t key_size = r.key ? r.key->size() : 0;
    const rd_kafka_resp_err_t err = rd_kafka_producev(
        rk_.get(), RD_KAFKA_V_TOPIC(topic.c_str()),
        RD_KAFKA_V_VALUE(const_cast<char*>(r.value.data()), r.value.size()),
        RD_KAFKA_V_KEY(key, key_size),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_TIMESTAMP(r.timestamp_ms),
        RD_KAFKA_V_HEADERS(hdrs),
        RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(static_cast<std::uintptr_t>(id))),
        RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return {};  // librdkafka owns hdrs now
    rd_kafka_headers_destroy(hdrs);
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL || clock::now() >= deadline) {
      return fail(kafka_error(err, "produce to topic '" + topic + "'"));
    }
    rd_kafka_poll(rk_.get(), remaining_ms(deadline, 50));  // let deliveries free the queue
  }
}

result<void> producer::produce(std::span<const record> records, clock::time_point deadline) {
  std::vector<std::uint64_t> ids;
  ids.reserve(records.size());
  std::optional<error_info> first_error;
  for (const auto& r : records) {
    const std::uint64_t id = next_id_++;
    if (auto e = enqueue(r, id, deadline); !e) {
      first_error = e.error();
      break;
    }
    reports_.emplace(id, RD_KAFKA_RESP_ERR__IN_PROGRESS);
    ids.push_back(id);
  }
  // Wait for the reports of everything enqueued, even after an enqueue failure (so that no
  // report outlives its call unobserved).
  std::size_t done = 0;
  while (done < ids.size()) {
    const auto it = reports_.find(ids[done]);
    if (it->second != RD_KAFKA_RESP_ERR__IN_PROGRESS) {
      if (it->second == RD_KAFKA_RESP_ERR_NO_ERROR) {
        ++published_;
      } else if (!first_error) {
        first_error = kafka_error(it->second, "publish to topic '" + std::string(records[done].topic) + "'");
      }
      reports_.erase(it);
      ++done;
      continue;
    }
    if (clock::now() >= deadline) break;
    // flush, not poll: it sends what waits for linger.ms at once (the caller waits for these
    // records anyway) and serves the delivery reports.
    rd_kafka_flush(rk_.get(), remaining_ms(deadline));
  }
  if (done < ids.size()) {
    for (std::size_t i = done; i < ids.size(); ++i) reports_.erase(ids[i]);
    if (!first_error) {
      first_error = error_info(transport_errc::timeout,
                               "kafka publish: no delivery report within operation_timeout (" +
                                   std::to_string(timeout_.count()) + " ms); the record may " +
                                   "still be written");
    }
  }
  if (first_error) return fail(std::move(*first_error));
  return {};
}

result<void> producer::flush(clock::time_point deadline) {
  const rd_kafka_resp_err_t err =
      rd_kafka_flush(rk_.get(), remaining_ms(deadline, 1 << 30));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return fail(kafka_error(err, "flush the producer"));
  return {};
}

result<void> producer::probe(std::chrono::milliseconds timeout) {
  const struct rd_kafka_metadata* md = nullptr;
  const rd_kafka_resp_err_t err =
      rd_kafka_metadata(rk_.get(), 0, nullptr, &md, static_cast<int>(timeout.count()));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    auto e = kafka_error(err, "no Kafka broker answered within " +
                                  std::to_string(timeout.count()) + " ms");
    if (e.code == transport_errc::timeout) e.code = make_error_code(transport_errc::unavailable);
    return fail(std::move(e));
  }
  rd_kafka_metadata_destroy(md);
  return {};
}

}  // namespace babelqueue::inline v1::kafka::detail
