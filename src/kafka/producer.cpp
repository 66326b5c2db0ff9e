// Producing with awaited delivery reports (producer.hpp).
#include "kafka/producer.hpp"

#include "core/propagate.hpp"
#include "kafka/message.hpp"

#include <babelqueue/runtime/error.hpp>

#include <algorithm>

namespace babelqueue::inline v1::kafka::detail {

namespace bk = bindings::kafka;
using clock = std::chrono::steady_clock;

namespace {

int remaining_ms(clock::time_point deadline, int cap = 100) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, cap));
}

}  // namespace

result<std::unique_ptr<producer>> producer::open(const options& o) {
  std::unique_ptr<producer> p(new producer());
  p->ctx_.log = o.log ? &o.log : nullptr;
  p->ctx_.name = "producer";
  p->ctx_.self = p.get();
  p->timeout_ = o.operation_timeout;
  BABELQUEUE_TRY_LET(conf, producer_conf(o, &p->ctx_));
  rd_kafka_conf_set_dr_msg_cb(conf->get(), &producer::on_delivery);
  BABELQUEUE_TRY_LET(rk, create_client(RD_KAFKA_PRODUCER, std::move(*conf)));
  p->rk_ = std::move(*rk);
  return p;
}

producer::~producer() {
  if (rk_) {
    // Bounded: unsent records are dropped at destroy (close() flushes first).
    rd_kafka_purge(rk_.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_poll(rk_.get(), 0);
  }
  for (auto& [name, rkt] : topics_) rd_kafka_topic_destroy(rkt);
  topics_.clear();
  rk_.reset();  // here, while slots_ (which a late delivery report writes) is alive
}

void producer::on_delivery(rd_kafka_t* rk, const rd_kafka_message_t* m, void* /*opaque*/) {
  auto* self = static_cast<context*>(rd_kafka_opaque(rk))->self;
  const auto id = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(m->_private));
  if (id >= self->base_ && id - self->base_ < self->slots_.size())
    self->slots_[id - self->base_] = m->err;
}

rd_kafka_topic_t* producer::topic_handle(std::string_view topic) {
  auto it = topics_.find(topic);
  if (it == topics_.end()) {
    const std::string name(topic);
    it = topics_.emplace(name, rd_kafka_topic_new(rk_.get(), name.c_str(), nullptr)).first;
  }
  return it->second;
}

result<void> producer::enqueue(rd_kafka_topic_t* rkt, std::string_view topic,
                               std::string_view value, std::optional<std::string_view> key,
                               rd_kafka_headers_t* hdrs, std::int64_t timestamp_ms,
                               std::size_t slot, clock::time_point deadline) {
  void* key_ptr = key ? const_cast<char*>(key->data()) : nullptr;
  const std::size_t key_size = key ? key->size() : 0;
  void* opaque = reinterpret_cast<void*>(static_cast<std::uintptr_t>(base_ + slot));
  for (;;) {
    // librdkafka's RD_KAFKA_V_* macros are GNU statement expressions (clang's -Wpedantic
    // says so; GCC exempts macros from system headers).
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wgnu-statement-expression"
#endif
    const rd_kafka_resp_err_t err = rd_kafka_producev(
        rk_.get(), RD_KAFKA_V_RKT(rkt),
        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
        RD_KAFKA_V_KEY(key_ptr, key_size), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_TIMESTAMP(timestamp_ms), RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_OPAQUE(opaque),
        RD_KAFKA_V_END);
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return {};  // librdkafka owns hdrs now
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL || clock::now() >= deadline) {
      rd_kafka_headers_destroy(hdrs);
      return fail(kafka_error(err, "produce to topic '" + std::string(topic) + "'"));
    }
    rd_kafka_poll(rk_.get(), remaining_ms(deadline, 50));  // let deliveries free the queue
  }
}

template <class Make>
result<void> producer::send(std::string_view topic_for_errors, std::size_t n, Make&& make,
                            clock::time_point deadline) {
  slots_.assign(n, RD_KAFKA_RESP_ERR__IN_PROGRESS);
  std::optional<error_info> first_error;
  std::size_t enqueued = 0;
  for (; enqueued < n; ++enqueued) {
    if (auto e = make(enqueued); !e) {
      first_error = e.error();
      break;
    }
  }
  // Wait for the reports of everything enqueued, even after an enqueue failure. flush, not
  // poll: it sends what waits for linger.ms at once (the caller waits for these records
  // anyway) and serves the delivery reports.
  std::size_t done = 0;
  while (done < enqueued) {
    const rd_kafka_resp_err_t err = slots_[done];
    if (err == RD_KAFKA_RESP_ERR__IN_PROGRESS) {
      if (clock::now() >= deadline) break;
      rd_kafka_flush(rk_.get(), remaining_ms(deadline));
      continue;
    }
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++published_;
    } else if (!first_error) {
      first_error = kafka_error(err, "publish to topic '" + std::string(topic_for_errors) + "'");
    }
    ++done;
  }
  base_ += n;  // reports still to come for this call fall outside the next call's slots
  slots_.clear();
  if (done < enqueued && !first_error) {
    first_error =
        error_info(transport_errc::timeout,
                   "kafka publish: no delivery report within operation_timeout (" +
                       std::to_string(timeout_.count()) + " ms); the record may still be written");
  }
  if (first_error) return fail(std::move(*first_error));
  return {};
}

result<void> producer::publish(std::string_view topic, std::span<const outgoing_message> messages,
                               std::optional<std::string_view> key, clock::time_point deadline) {
  rd_kafka_topic_t* rkt = topic_handle(topic);
  return send(
      topic, messages.size(),
      [&](std::size_t i) {
        std::int64_t ts = 0;
        rd_kafka_headers_t* h = projected_headers(messages[i].body, messages[i].hdrs, ts);
        return enqueue(rkt, topic, messages[i].body, key, h, ts, i, deadline);
      },
      deadline);
}

result<void> producer::publish(std::string_view topic, std::string_view body, const headers& oob,
                               std::optional<std::string_view> key, clock::time_point deadline) {
  rd_kafka_topic_t* rkt = topic_handle(topic);
  return send(
      topic, 1,
      [&](std::size_t i) {
        std::int64_t ts = 0;
        rd_kafka_headers_t* h = projected_headers(body, oob, ts);
        return enqueue(rkt, topic, body, key, h, ts, i, deadline);
      },
      deadline);
}

result<void> producer::produce(std::span<const record> records, clock::time_point deadline) {
  const std::string_view first = records.empty() ? std::string_view() : records.front().topic;
  return send(
      first, records.size(),
      [&](std::size_t i) {
        const record& r = records[i];
        rd_kafka_headers_t* h = rd_kafka_headers_new(r.headers.size());
        for (const auto& [k, v] : r.headers) {
          rd_kafka_header_add(h, k.data(), static_cast<ssize_t>(k.size()), v.data(),
                              static_cast<ssize_t>(v.size()));
        }
        return enqueue(topic_handle(r.topic), r.topic, r.value, std::nullopt, h, r.timestamp_ms, i,
                       deadline);
      },
      deadline);
}

result<void> producer::flush(clock::time_point deadline) {
  const rd_kafka_resp_err_t err = rd_kafka_flush(rk_.get(), remaining_ms(deadline, 1 << 30));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return fail(kafka_error(err, "flush the producer"));
  return {};
}

result<void> producer::probe(std::chrono::milliseconds timeout) {
  const struct rd_kafka_metadata* md = nullptr;
  const rd_kafka_resp_err_t err =
      rd_kafka_metadata(rk_.get(), 0, nullptr, &md, static_cast<int>(timeout.count()));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    auto e = kafka_error(
        err, "no Kafka broker answered within " + std::to_string(timeout.count()) + " ms");
    if (e.code == transport_errc::timeout) e.code = make_error_code(transport_errc::unavailable);
    return fail(std::move(e));
  }
  rd_kafka_metadata_destroy(md);
  return {};
}

}  // namespace babelqueue::inline v1::kafka::detail
