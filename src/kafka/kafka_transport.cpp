// The kafka:// transport (kafka_transport.hpp): one producer, one consumer per received
// topic, the retry-tier routing and the registration of the scheme.
#include "core/propagate.hpp"
#include "kafka/consumer.hpp"
#include "kafka/options.hpp"
#include "kafka/producer.hpp"
#include "runtime/binding_support.hpp"

#include <babelqueue/bindings/kafka.hpp>
#include <babelqueue/kafka/kafka_transport.hpp>

#include <cctype>
#include <map>

namespace babelqueue::inline v1::kafka {

namespace bk = bindings::kafka;
using clock = std::chrono::steady_clock;

struct kafka_transport::impl {
  // Issues the handles of every consumer below (declared first: it outlives them).
  settlement_owner owner{"kafka"};
  std::unique_ptr<detail::producer> producer;
  std::map<std::string, std::unique_ptr<detail::consumer>, std::less<>> consumers;  // by topic
  detail::consumer_counters counters;
  // The consumer of the last topic received from (a worker usually receives from one): its
  // receive() and ack() skip the topic check and the lookup by name.
  detail::consumer* last_consumer = nullptr;
  std::string last_topic;
  bool closed = false;
};

kafka_transport::kafka_transport(options opts)
    : opts_(std::move(opts)), impl_(std::make_unique<impl>()) {}

kafka_transport::~kafka_transport() {
  if (impl_ && !impl_->closed) {
    (void)close(clock::now() + detail::consumer::default_close_budget);
  }
}

result<std::unique_ptr<kafka_transport>> kafka_transport::open(options opts) {
  BABELQUEUE_TRY(detail::validate(opts));
  std::unique_ptr<kafka_transport> t(new kafka_transport(std::move(opts)));
  BABELQUEUE_TRY_LET(p, detail::producer::open(t->opts_));
  t->impl_->producer = std::move(*p);
  BABELQUEUE_TRY(t->impl_->producer->probe(t->opts_.operation_timeout));
  // A consumer property is checked now too, so a typo in it fails at open, not at the
  // first receive.
  if (!t->opts_.rdkafka.empty()) {
    detail::client_context ctx;
    BABELQUEUE_TRY_LET(conf, detail::consumer_conf(t->opts_, &ctx));
  }
  return t;
}

namespace {

result<void> check_topic(std::string_view topic) {
  // Kafka's own rule: 1..249 characters of [a-zA-Z0-9._-].
  if (topic.empty() || topic.size() > 249 || !std::all_of(topic.begin(), topic.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '_' || c == '-';
      })) {
    return fail(transport_errc::invalid_argument,
                "kafka topic must be 1..249 characters of [a-zA-Z0-9._-], got '" +
                    std::string(topic.substr(0, 64)) + "'");
  }
  return {};
}

}  // namespace

result<void> kafka_transport::publish(std::string_view topic, std::string_view body,
                                      const headers& hdrs) {
  if (impl_->closed) return fail(transport_errc::closed, "kafka transport is closed");
  if (auto r = check_topic(topic); !r) return r;
  return impl_->producer->publish(topic, body, hdrs, std::nullopt,
                                  clock::now() + opts_.operation_timeout);
}

result<void> kafka_transport::publish_keyed(std::string_view topic, std::string_view key,
                                            std::string_view body, const headers& hdrs) {
  if (impl_->closed) return fail(transport_errc::closed, "kafka transport is closed");
  if (auto r = check_topic(topic); !r) return r;
  return impl_->producer->publish(topic, body, hdrs, key, clock::now() + opts_.operation_timeout);
}

result<void> kafka_transport::publish_batch(std::string_view topic,
                                            std::span<const outgoing_message> messages) {
  if (impl_->closed) return fail(transport_errc::closed, "kafka transport is closed");
  if (auto r = check_topic(topic); !r) return r;
  return impl_->producer->publish(topic, messages, std::nullopt,
                                  clock::now() + opts_.operation_timeout);
}

result<void> kafka_transport::publish_later(std::string_view topic, std::string_view body,
                                            const headers& hdrs, std::chrono::milliseconds delay) {
  if (impl_->closed) return fail(transport_errc::closed, "kafka transport is closed");
  if (opts_.retry_topics.empty()) {
    return fail(transport_errc::not_supported,
                "kafka has no delay of its own: a delayed publish needs retry tiers "
                "(retry_topics=5s,1m,...) and a re-injector");
  }
  if (auto r = check_topic(topic); !r) return r;
  // The smallest tier that holds the whole delay (spec §6.4, the Python/.NET rule); bq-delay
  // is the delay asked for, which the re-injector waits from the record's timestamp.
  const std::size_t tier = bk::delay_tier(delay, opts_.retry_topics);
  if (tier == 0) {  // the seam refuses a delay over max_delay first; kept for a direct call
    return fail(transport_errc::invalid_argument,
                "kafka publish delay " + std::to_string(delay.count()) +
                    " ms is longer than the longest retry tier; nothing was sent");
  }
  const std::string parked = bk::retry_topic(topic, tier);
  if (auto r = check_topic(parked); !r) return r;
  headers oob = hdrs;
  oob[std::string(bk::header_delay)] = std::to_string(delay.count());
  oob[std::string(bk::header_original_topic)] = std::string(topic);
  // With bq-delay among its headers the record is stamped now, not meta.created_at
  // (producer.hpp): the delay counts from the publish, whenever the envelope was made.
  return impl_->producer->publish(parked, body, oob, std::nullopt,
                                  clock::now() + opts_.operation_timeout);
}

result<std::optional<received_message>> kafka_transport::receive(
    std::string_view topic, std::chrono::milliseconds timeout) {
  if (impl_->closed) return fail(transport_errc::closed, "kafka transport is closed");
  if (impl_->last_consumer != nullptr && topic == impl_->last_topic) {
    return impl_->last_consumer->receive(timeout);
  }
  BABELQUEUE_TRY(check_topic(topic));
  auto it = impl_->consumers.find(topic);
  if (it == impl_->consumers.end()) {
    detail::create_missing_topics(impl_->producer->handle(), {std::string(topic)},
                                  opts_.operation_timeout);
    auto c =
        detail::consumer::open(opts_, opts_.group, {std::string(topic)}, &impl_->counters,
                               impl_->owner, /*keep_raw_headers=*/false, detail::receive_prefetch);
    if (!c) return fail(c.error());
    it = impl_->consumers.emplace(std::string(topic), std::move(*c)).first;
  }
  impl_->last_consumer = it->second.get();
  impl_->last_topic = it->first;
  return it->second->receive(timeout);
}

result<void> kafka_transport::ack(const received_message& message) {
  if (impl_->closed) return fail(transport_errc::closed, "kafka transport is closed");
  // Its consumer exists: consumers go only with close(), checked above.
  BABELQUEUE_TRY_LET(h, impl_->owner.claim<detail::record_handle>(message));
  h->settle();  // once: a second ack is invalid_argument, not the tracker's "revoked"
  return (*h)->source->settle(**h);
}

result<void> kafka_transport::release(const received_message& message,
                                      std::chrono::milliseconds delay) {
  if (impl_->closed) return fail(transport_errc::closed, "kafka transport is closed");
  BABELQUEUE_TRY_LET(owned, impl_->owner.claim<detail::record_handle>(message));
  const detail::record_handle* h = &**owned;
  detail::record rec;
  rec.value = message.body;
  std::string destination = *h->topic;
  headers oob = message.hdrs;  // the out-of-band headers as received
  if (delay.count() > 0) {
    const std::size_t tier = bk::delay_tier(delay, opts_.retry_topics);
    if (tier == 0) {
      return fail(transport_errc::not_supported,
                  opts_.retry_topics.empty()
                      ? "kafka cannot delay a release without retry tiers (retry_topics=...)"
                      : "kafka release delay " + std::to_string(delay.count()) +
                            " ms is longer than the longest retry tier");
    }
    destination = bk::retry_topic(*h->topic, tier);
    // A delayed one also says when and where to return.
    oob[std::string(bk::header_delay)] = std::to_string(delay.count());
    oob[std::string(bk::header_original_topic)] = *h->topic;
    rec.timestamp_ms = 0;  // now: the re-injector waits from the record's timestamp
  } else {
    rec.timestamp_ms = h->timestamp_ms > 0 ? h->timestamp_ms : 0;
  }
  rec.topic = destination;
  // The same bytes and headers: the contract ones derived from the body again, except
  // bq-attempts, kept as received (a release is not a retry, and the header may be
  // authoritative over the body).
  rec.headers = bk::project(message.body, oob).headers;
  if (h->attempts_header) {
    for (auto& [k, v] : rec.headers) {
      if (k == bk::header_attempts) v = *h->attempts_header;
    }
  }
  if (auto r = impl_->producer->produce({&rec, 1}, clock::now() + opts_.operation_timeout); !r) {
    return r;
  }
  owned->settle();
  return h->source->settle(*h);
}

result<std::vector<peeked_message>> kafka_transport::peek(std::string_view, std::size_t,
                                                          std::size_t) {
  return cannot_peek(impl_->closed);
}

result<void> kafka_transport::close(clock::time_point deadline) {
  if (impl_->closed) return {};
  impl_->closed = true;
  impl_->last_consumer = nullptr;
  std::optional<error_info> first;
  for (auto& [topic, c] : impl_->consumers) {
    if (auto r = c->close(deadline); !r && !first) first = r.error();
    // Left the group: destroyed below. Ran out of time: destroyed without holding close()
    // past its deadline (its requests in flight time out on a thread of its own).
    if (!c->left_group()) detail::consumer::destroy_in_background(std::move(c));
  }
  impl_->consumers.clear();
  if (impl_->producer) {
    if (auto r = impl_->producer->flush(deadline); !r && !first) first = r.error();
    impl_->producer.reset();
  }
  if (first) return fail(std::move(*first));
  return {};
}

std::int64_t kafka_transport::reconcile_attempts(std::int64_t body_attempts,
                                                 const received_message& message) const {
  return bk::reconcile_attempts(body_attempts, message.delivery_count);
}

retry_route kafka_transport::route_retry(const received_message& original,
                                         std::int64_t delivered_attempts) const {
  const std::size_t tier = bk::retry_tier(delivered_attempts, opts_.retry_topics.size());
  if (tier == 0) return {original.queue, {}};
  retry_route r;
  r.queue = bk::retry_topic(original.queue, tier);
  r.hdrs.emplace(std::string(bk::header_delay),
                 std::to_string(opts_.retry_topics[tier - 1].count()));
  r.hdrs.emplace(std::string(bk::header_original_topic), original.queue);
  return r;
}

transport_stats kafka_transport::stats() const noexcept {
  transport_stats s;
  s.published = impl_->producer ? impl_->producer->published() : 0;
  s.received = impl_->counters.received;
  s.commits = impl_->counters.commits;
  s.rebalances = impl_->counters.rebalances;
  s.abandoned = impl_->counters.abandoned;
  return s;
}

void register_transport() {
  const auto factory =
      babelqueue::detail::url_factory<kafka_transport, /*HostList=*/true>(options_from_url);
  babelqueue::register_transport("kafka", factory);
}

}  // namespace babelqueue::inline v1::kafka

namespace babelqueue::inline v1::kafka {

std::vector<std::string> kafka_transport::security_warnings() const {
  auto lower = [](std::string v) {
    for (auto& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return v;
  };
  const std::string protocol = lower(opts_.security_protocol);
  const bool tls = protocol == "ssl" || protocol == "sasl_ssl";
  const auto verify = opts_.rdkafka.find("enable.ssl.certificate.verification");
  const bool tls_verify = verify == opts_.rdkafka.end() || lower(verify->second) != "false";
  // SASL/PLAIN sends the password itself; SCRAM proves it without sending it.
  const bool clear_password =
      protocol == "sasl_plaintext" && lower(opts_.sasl_mechanism) == "plain";
  std::string remote;
  for (const auto& b : opts_.brokers) {
    const std::string host = b.substr(0, b.rfind(':'));
    if (!babelqueue::detail::loopback_host(host)) remote = host;
  }
  return babelqueue::detail::security_warnings_of(
      {.scheme = scheme(),
       .tls = tls,
       .tls_verify = tls_verify,
       .credential = clear_password ? "SASL/PLAIN password" : "",
       .host = remote,
       .secure = "security_protocol=sasl_ssl"});
}

}  // namespace babelqueue::inline v1::kafka
