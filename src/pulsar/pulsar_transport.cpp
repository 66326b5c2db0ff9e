// The pulsar:// transport (pulsar_transport.hpp): one Pulsar client per instance, a producer
// per topic published to, a consumer per topic received from, and the registration of the
// schemes. Every call the transport contract makes blocking waits on the client's
// asynchronous API with a bound; the client's threads only complete promises.
#include "core/propagate.hpp"
#include "pulsar/client_log.hpp"
#include "pulsar/errors.hpp"
#include "pulsar/message.hpp"
#include "pulsar/options.hpp"
#include "runtime/binding_support.hpp"

#include <babelqueue/bindings/pulsar.hpp>
#include <babelqueue/pulsar/pulsar_transport.hpp>
#include <babelqueue/runtime/settlement_handle.hpp>
#include <babelqueue/text.hpp>

#include <pulsar/Client.h>
#include <pulsar/DeadLetterPolicyBuilder.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

namespace babelqueue::inline v1::pulsar {

namespace bp = bindings::pulsar;
namespace pc = ::pulsar;
using clock = std::chrono::steady_clock;
using detail::build_message;
using detail::deliver_at_of;
using detail::delivery_delay;
using detail::pulsar_error;
using detail::set_delay;

namespace {

// Exclusive and Failover subscriptions dispatch a delayed message at once: on this
// transport's own subscription a delay would not hold, so nothing is sent.
error_info delays_need_shared() {
  return {transport_errc::not_supported,
          "pulsar delays delivery only on shared and key_shared subscriptions "
          "(subscription_type)"};
}

// Grace of the destructor's close: long enough for the consumers' pending (grouped) acks to
// reach a live broker, short enough not to hang on a dead one.
constexpr auto destructor_grace = std::chrono::seconds(1);

// What a transport knows of one queue name, resolved once: its topic, and its producer and
// consumer once made (owned by the topic-keyed maps below; queue names that are the same topic
// share them). Node-based maps keep these addresses stable until close().
struct queue_slot {
  std::string topic;
  pc::Producer* producer = nullptr;
  pc::Consumer* consumer = nullptr;
};

// What a received_message's handle holds (settlement_handle.hpp marks it as the instance's).
struct delivery_handle {
  pc::Message message;
  queue_slot* slot = nullptr;
};

std::string service_url(const options& o) {
  const std::string host = o.host.find(':') != std::string::npos ? "[" + o.host + "]" : o.host;
  return std::string(o.tls ? "pulsar+ssl://" : "pulsar://") + host + ":" + std::to_string(o.port);
}

int whole_seconds_up(std::chrono::milliseconds d) {
  const auto s = (d.count() + 999) / 1000;
  return static_cast<int>(std::clamp<std::int64_t>(s, 1, 86400));
}

int clamp_ms(std::chrono::milliseconds d) {
  return static_cast<int>(std::clamp<std::int64_t>(d.count(), 0, 0x7fffffff));
}

pc::ConsumerType consumer_type_of(subscription_kind k) {
  switch (k) {
    case subscription_kind::key_shared:
      return pc::ConsumerKeyShared;
    case subscription_kind::failover:
      return pc::ConsumerFailover;
    case subscription_kind::exclusive:
      return pc::ConsumerExclusive;
    case subscription_kind::shared:
      break;
  }
  return pc::ConsumerShared;
}

pc::CompressionType compression_of(std::string_view name) {
  if (name == "lz4") return pc::CompressionLZ4;
  if (name == "zlib") return pc::CompressionZLib;
  if (name == "zstd") return pc::CompressionZSTD;
  if (name == "snappy") return pc::CompressionSNAPPY;
  return pc::CompressionNone;
}

result<std::string> read_token_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  if (in) text << in.rdbuf();
  if (!in) {
    return fail(transport_errc::invalid_argument,
                "pulsar option token_file: cannot read '" + path + "'");
  }
  const std::string read = text.str();
  std::string token(trim_ascii(read));
  if (token.empty()) {
    return fail(transport_errc::invalid_argument,
                "pulsar option token_file: '" + path + "' holds no token");
  }
  return token;
}

result<void> check_queue(std::string_view queue) {
  if (auto why = bp::invalid_queue_name(queue)) return fail(transport_errc::invalid_argument, *why);
  return {};
}

// The outcome of asynchronous sends: one slot per message, shared with the callbacks (which
// may run after a bounded wait gave up, so the state outlives the call).
struct send_batch {
  std::mutex m;
  std::condition_variable cv;
  std::size_t pending = 0;
  std::vector<pc::Result> results;
};

}  // namespace

struct pulsar_transport::impl {
  settlement_owner owner{"pulsar"};  // marks the handles it hands out
  std::unique_ptr<pc::Client> client;
  pc::ProducerConfiguration producer_conf;
  pc::ConsumerConfiguration consumer_conf;
  std::map<std::string, pc::Producer, std::less<>> producers;  // by topic
  std::map<std::string, pc::Consumer, std::less<>> consumers;  // by topic
  std::map<std::string, queue_slot, std::less<>> queues;       // by queue name
  transport_stats stats;
  bool closed = false;

  // Sends `count` messages, message i built by build(i) right before its send, and waits
  // for every receipt (or the bound); one result per message.
  std::vector<result<void>> send_all(const options& o, pc::Producer& producer,
                                     std::string_view topic, std::size_t count,
                                     const std::function<pc::Message(std::size_t)>& build);
  // One message to `queue`, with a native delay when `due` has one; waits for its receipt.
  result<void> send_one(const options& o, std::string_view queue, std::string_view body,
                        const headers& hdrs, const delivery_delay& due);
  // The slot of a (valid) queue name; the topic is computed on first use only.
  queue_slot& slot_of(const options& o, std::string_view queue);
  result<pc::Producer*> producer_for(const options& o, queue_slot& slot);
  result<pc::Consumer*> consumer_for(const options& o, std::string_view queue, queue_slot& slot);
};

pulsar_transport::pulsar_transport(options opts)
    : opts_(std::move(opts)), impl_(std::make_unique<impl>()) {}

pulsar_transport::~pulsar_transport() {
  if (impl_ && !impl_->closed) (void)close(clock::now() + destructor_grace);
}

result<std::unique_ptr<pulsar_transport>> pulsar_transport::open(options opts) {
  BABELQUEUE_TRY(detail::validate(opts));
  std::unique_ptr<pulsar_transport> t(new pulsar_transport(std::move(opts)));
  const options& o = t->opts_;

  pc::ClientConfiguration conf;
  conf.setLogger(detail::new_logger_factory());
  conf.setIOThreads(static_cast<int>(o.io_threads));
  conf.setMessageListenerThreads(1);
  conf.setOperationTimeoutSeconds(whole_seconds_up(o.operation_timeout));
  conf.setConnectionTimeout(clamp_ms(o.connect_timeout));
  std::string token = o.token;
  if (!o.token_file.empty()) {
    BABELQUEUE_TRY_LET(read, read_token_file(o.token_file));
    token = std::move(*read);
  }
  if (!token.empty()) conf.setAuth(pc::AuthToken::createWithToken(token));
  if (o.tls) {
    conf.setUseTls(true);
    if (!o.tls_ca_file.empty()) conf.setTlsTrustCertsFilePath(o.tls_ca_file);
    if (!o.tls_cert_file.empty()) {
      conf.setTlsCertificateFilePath(o.tls_cert_file);
      conf.setTlsPrivateKeyFilePath(o.tls_key_file);
    }
    conf.setTlsAllowInsecureConnection(!o.tls_verify);
    conf.setValidateHostName(o.tls_verify);
  }
  try {
    t->impl_->client = std::make_unique<pc::Client>(service_url(o), conf);
  } catch (const std::exception& e) {  // the client throws on a URL it cannot parse
    return fail(transport_errc::invalid_argument,
                std::string("pulsar client could not be created: ") + e.what());
  }

  auto& pconf = t->impl_->producer_conf;
  pconf.setSendTimeout(clamp_ms(o.operation_timeout));
  pconf.setBlockIfQueueFull(true);  // a large publish_batch waits for room instead of failing
  pconf.setBatchingEnabled(o.batching);
  pconf.setBatchingMaxMessages(static_cast<unsigned>(o.batch_max_messages));
  pconf.setBatchingMaxPublishDelayMs(static_cast<unsigned long>(o.batch_delay.count()));
  pconf.setCompressionType(compression_of(o.compression));

  auto& cconf = t->impl_->consumer_conf;
  cconf.setConsumerType(consumer_type_of(o.subscription_type));
  cconf.setReceiverQueueSize(static_cast<int>(o.receiver_queue));
  if (o.ack_timeout.count() > 0) {
    cconf.setUnAckedMessagesTimeoutMs(static_cast<std::uint64_t>(o.ack_timeout.count()));
  }
  cconf.setNegativeAckRedeliveryDelayMs(static_cast<long>(o.negative_ack_delay.count()));
  cconf.setSubscriptionInitialPosition(
      o.initial_position == "latest" ? pc::InitialPositionLatest : pc::InitialPositionEarliest);
  // Acks and negative acks of single messages inside a batch: without it, releasing one
  // message of a batch would redeliver the whole batch.
  cconf.setBatchIndexAckEnabled(true);
  return t;
}

std::string pulsar_transport::topic_of(std::string_view queue) const {
  return bp::topic_name(queue, opts_.tenant, opts_.namespace_);
}

// Each message is built right before its send, so the client's I/O thread and the broker
// work while the caller builds the next (building all first left them idle, and held every
// message of a large batch at once). The last `send_window` messages stay referenced here:
// more than the producer's 1000 pending, so a message is released on this thread after its
// receipt rather than by the client's I/O thread (measured: up to 41 % slower), and memory
// stays bounded whatever the batch size (docs/benchmarks-pulsar.md).
constexpr std::size_t send_window = 2048;

std::vector<result<void>> pulsar_transport::impl::send_all(
    const options& o, pc::Producer& producer, std::string_view topic, std::size_t count,
    const std::function<pc::Message(std::size_t)>& build) {
  auto batch = std::make_shared<send_batch>();
  batch->pending = count;
  batch->results.assign(count, pc::ResultOk);
  std::vector<pc::Message> recent;
  recent.reserve(std::min(count, send_window));
  for (std::size_t i = 0; i < count; ++i) {
    pc::Message m = build(i);
    producer.sendAsync(m, [batch, i](pc::Result r, const pc::MessageId&) {
      std::lock_guard lock(batch->m);
      batch->results[i] = r;
      if (--batch->pending == 0) batch->cv.notify_all();
    });
    if (recent.size() < send_window) {
      recent.push_back(std::move(m));
    } else {
      recent[i % send_window] = std::move(m);
    }
  }
  // A batching producer holds messages until a batch fills or its delay passes; a flush
  // sends what it holds now, so a single publish never waits for a batch.
  if (o.batching) producer.flushAsync([](pc::Result) {});
  const auto deadline = clock::now() + o.operation_timeout + std::chrono::seconds(5);
  std::unique_lock lock(batch->m);
  const bool all = batch->cv.wait_until(lock, deadline, [&] { return batch->pending == 0; });
  std::vector<result<void>> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    pc::Result r = batch->results[i];
    if (!all && r == pc::ResultOk) r = pc::ResultTimeout;  // no receipt within the bound
    if (r == pc::ResultOk) {
      ++stats.published;
      out.emplace_back();
      continue;
    }
    error_info e = pulsar_error(r, "publish to '" + std::string(topic) + "'");
    if (r == pc::ResultTimeout && !producer.isConnected()) {
      // The client kept reconnecting for the whole send timeout: the broker is unreachable.
      e.code = transport_errc::unavailable;
      e.message += " (not connected to the broker)";
    }
    out.emplace_back(fail(std::move(e)));
  }
  return out;
}

namespace {

// Makes sure `subscription` exists on `topic` (see the header): a consumer that asks for no
// message (receiver queue 0), subscribed and closed. An exclusive subscription held by
// another consumer already exists.
result<void> ensure_subscription(pc::Client& client, const options& o, const std::string& topic) {
  pc::ConsumerConfiguration conf;
  conf.setConsumerType(consumer_type_of(o.subscription_type));
  conf.setReceiverQueueSize(0);
  conf.setSubscriptionInitialPosition(pc::InitialPositionEarliest);
  pc::Consumer consumer;
  const pc::Result r = client.subscribe(topic, o.subscription, conf, consumer);
  if (r == pc::ResultConsumerBusy) return {};
  if (r != pc::ResultOk) {
    return fail(pulsar_error(r, "create subscription '" + o.subscription + "' on '" + topic + "'"));
  }
  (void)consumer.close();
  return {};
}

}  // namespace

queue_slot& pulsar_transport::impl::slot_of(const options& o, std::string_view queue) {
  auto it = queues.find(queue);
  if (it == queues.end()) {
    it = queues.emplace(std::string(queue), queue_slot{}).first;
    it->second.topic = bp::topic_name(queue, o.tenant, o.namespace_);
  }
  return it->second;
}

result<pc::Producer*> pulsar_transport::impl::producer_for(const options& o, queue_slot& slot) {
  if (slot.producer != nullptr) return slot.producer;
  const std::string& topic = slot.topic;
  if (auto it = producers.find(topic); it != producers.end()) return slot.producer = &it->second;
  if (o.ensure_subscription) {
    BABELQUEUE_TRY(ensure_subscription(*client, o, topic));
    ++stats.subscriptions_ensured;
  }
  pc::Producer producer;
  const pc::Result r = client->createProducer(topic, producer_conf, producer);
  if (r != pc::ResultOk) return fail(pulsar_error(r, "create producer for '" + topic + "'"));
  ++stats.producers;
  return slot.producer = &producers.emplace(topic, std::move(producer)).first->second;
}

result<pc::Consumer*> pulsar_transport::impl::consumer_for(const options& o, std::string_view queue,
                                                           queue_slot& slot) {
  if (slot.consumer != nullptr) return slot.consumer;
  const std::string& topic = slot.topic;
  if (auto it = consumers.find(topic); it != consumers.end()) return slot.consumer = &it->second;
  pc::ConsumerConfiguration conf = consumer_conf;
  if (o.max_redeliver > 0) {
    conf.setDeadLetterPolicy(
        pc::DeadLetterPolicyBuilder()
            .deadLetterTopic(bp::topic_name(bp::dead_letter_queue(queue), o.tenant, o.namespace_))
            .maxRedeliverCount(static_cast<int>(o.max_redeliver))
            .initialSubscriptionName(o.subscription)
            .build());
  }
  pc::Consumer consumer;
  const pc::Result r = client->subscribe(topic, o.subscription, conf, consumer);
  if (r != pc::ResultOk) {
    return fail(pulsar_error(r, "subscribe '" + o.subscription + "' to '" + topic + "'"));
  }
  ++stats.consumers;
  return slot.consumer = &consumers.emplace(topic, std::move(consumer)).first->second;
}

result<void> pulsar_transport::publish(std::string_view queue, std::string_view body,
                                       const headers& hdrs) {
  return impl_->send_one(opts_, queue, body, hdrs, {});
}

result<void> pulsar_transport::publish_after(std::string_view queue, std::string_view body,
                                             std::chrono::milliseconds delay, const headers& hdrs) {
  // The name this transport had before the seam's publish_delayed(): the same checks, the
  // same wire (publish_later() below).
  return publish_delayed(queue, body, hdrs, delay);
}

result<void> pulsar_transport::publish_later(std::string_view queue, std::string_view body,
                                             const headers& hdrs, std::chrono::milliseconds delay) {
  // The due time first: nothing below (a producer made on first use, the subscription made
  // sure of) may push it later than the caller asked.
  const delivery_delay due = deliver_at_of(delay);
  if (impl_->closed) return fail(transport_errc::closed, "pulsar transport is closed");
  if (!capabilities().delayed_publish) return fail(delays_need_shared());
  return impl_->send_one(opts_, queue, body, hdrs, due);
}

result<void> pulsar_transport::impl::send_one(const options& o, std::string_view queue,
                                              std::string_view body, const headers& hdrs,
                                              const delivery_delay& due) {
  if (closed) return fail(transport_errc::closed, "pulsar transport is closed");
  if (auto r = check_queue(queue); !r) return r;
  queue_slot& slot = slot_of(o, queue);
  BABELQUEUE_TRY_LET(producer, producer_for(o, slot));
  return std::move(send_all(o, **producer, slot.topic, 1, [&](std::size_t) {
                     return build_message(body, hdrs, due);
                   }).front());
}

std::vector<result<void>> pulsar_transport::publish_each(std::string_view queue,
                                                         std::span<const outgoing_message> messages,
                                                         std::chrono::milliseconds delay) {
  // One due time for the whole batch, taken first (as publish_later()).
  const delivery_delay due = deliver_at_of(delay);
  const auto all_fail = [&](const error_info& e) {
    return std::vector<result<void>>(messages.size(), result<void>(fail(e)));
  };
  if (impl_->closed)
    return all_fail(error_info(transport_errc::closed, "pulsar transport is closed"));
  if (delay.count() < 0) {
    return all_fail(error_info(
        transport_errc::invalid_argument,
        "pulsar: a publish delay must be >= 0 (got " + std::to_string(delay.count()) + " ms)"));
  }
  if (delay.count() > 0 && !capabilities().delayed_publish) {
    return all_fail(delays_need_shared());
  }
  if (auto r = check_queue(queue); !r) return all_fail(r.error());
  if (messages.empty()) return {};
  queue_slot& slot = impl_->slot_of(opts_, queue);
  auto producer = impl_->producer_for(opts_, slot);
  if (!producer) return all_fail(producer.error());
  return impl_->send_all(opts_, **producer, slot.topic, messages.size(), [&](std::size_t i) {
    return build_message(messages[i].body, messages[i].hdrs, due);
  });
}

result<void> pulsar_transport::publish_batch(std::string_view queue,
                                             std::span<const outgoing_message> messages) {
  return first_failure(publish_each(queue, messages));
}

result<void> pulsar_transport::publish_batch_later(std::string_view queue,
                                                   std::span<const outgoing_message> messages,
                                                   std::chrono::milliseconds delay) {
  return first_failure(publish_each(queue, messages, delay));
}

result<std::optional<received_message>> pulsar_transport::receive(
    std::string_view queue, std::chrono::milliseconds timeout) {
  if (impl_->closed) return fail(transport_errc::closed, "pulsar transport is closed");
  BABELQUEUE_TRY(check_queue(queue));
  queue_slot& slot = impl_->slot_of(opts_, queue);
  BABELQUEUE_TRY_LET(consumer, impl_->consumer_for(opts_, queue, slot));
  pc::Message m;
  const pc::Result r = (*consumer)->receive(m, clamp_ms(timeout));
  if (r == pc::ResultTimeout) return std::optional<received_message>();
  if (r != pc::ResultOk) return fail(pulsar_error(r, "receive from '" + slot.topic + "'"));

  received_message out;
  out.queue = std::string(queue);
  out.body.assign(static_cast<const char*>(m.getData()), m.getLength());
  auto props = bp::read_properties(m.getProperties());
  out.hdrs = std::move(props.out_of_band);
  out.refused_schema_version = std::move(props.refused_schema_version);
  out.delivery_count = m.getRedeliveryCount();
  out.handle = impl_->owner.issue(delivery_handle{std::move(m), &slot});
  ++impl_->stats.delivered;
  return std::optional<received_message>(std::move(out));
}

result<void> pulsar_transport::ack(const received_message& message) {
  if (impl_->closed) return fail(transport_errc::closed, "pulsar transport is closed");
  // Its consumer exists: consumers go only with close(), checked above.
  auto owner = impl_->owner.claim<delivery_handle>(message);
  if (!owner) return fail(owner.error());
  delivery_handle* h = &**owner;
  const pc::Result r = h->slot->consumer->acknowledge(h->message);
  if (r != pc::ResultOk) return fail(pulsar_error(r, "ack on '" + h->slot->topic + "'"));
  owner->settle();
  ++impl_->stats.acked;
  return {};
}

result<void> pulsar_transport::release(const received_message& message,
                                       std::chrono::milliseconds delay) {
  if (impl_->closed) return fail(transport_errc::closed, "pulsar transport is closed");
  // Its consumer exists: consumers go only with close(), checked above.
  auto owner = impl_->owner.claim<delivery_handle>(message);
  if (!owner) return fail(owner.error());
  delivery_handle* h = &**owner;
  pc::Consumer* consumer = h->slot->consumer;
  if (delay.count() <= 0) {
    consumer->negativeAcknowledge(h->message);
    owner->settle();
    ++impl_->stats.nacked;
    return {};
  }
  if (!capabilities().native_delay) {
    return fail(transport_errc::not_supported,
                "pulsar delays delivery only on shared and key_shared subscriptions");
  }
  // A delay: the same payload and properties again with deliverAt, then the original is
  // acknowledged (negative acks have one fixed delay per consumer).
  const delivery_delay due = deliver_at_of(delay);
  queue_slot& slot = *h->slot;
  BABELQUEUE_TRY_LET(producer, impl_->producer_for(opts_, slot));
  pc::MessageBuilder b;
  b.setContent(h->message.getData(), h->message.getLength());
  b.setProperties(h->message.getProperties());
  set_delay(b, due);
  if (h->message.getEventTimestamp() > 0) b.setEventTimestamp(h->message.getEventTimestamp());
  if (auto sent = std::move(
          impl_->send_all(opts_, **producer, slot.topic, 1, [&b](std::size_t) { return b.build(); })
              .front());
      !sent) {
    return sent;
  }
  const pc::Result r = consumer->acknowledge(h->message);
  if (r != pc::ResultOk) {
    return fail(pulsar_error(r, "ack of the released original on '" + slot.topic + "'"));
  }
  owner->settle();
  ++impl_->stats.acked;
  return {};
}

result<std::vector<peeked_message>> pulsar_transport::peek(std::string_view, std::size_t,
                                                           std::size_t) {
  return cannot_peek(impl_->closed);
}

result<void> pulsar_transport::close(clock::time_point deadline) {
  if (impl_->closed) return {};
  impl_->closed = true;
  if (!impl_->client) return {};  // open() failed before the client existed
  // Closing the client closes its consumers (their grouped acks are sent first; what they
  // prefetched goes back to the broker) and producers.
  auto done = std::make_shared<std::promise<pc::Result>>();
  auto closed = done->get_future();
  impl_->client->closeAsync([done](pc::Result r) { done->set_value(r); });
  std::optional<error_info> err;
  if (closed.wait_until(deadline) != std::future_status::ready) {
    err = error_info(transport_errc::timeout, "pulsar close did not finish before its deadline");
  } else if (const pc::Result r = closed.get(); r != pc::ResultOk && r != pc::ResultAlreadyClosed) {
    err = pulsar_error(r, "close");
  }
  impl_->client->shutdown();  // returns at once; stops the client's threads
  impl_->queues.clear();
  impl_->consumers.clear();
  impl_->producers.clear();
  if (err) return fail(std::move(*err));
  return {};
}

std::int64_t pulsar_transport::reconcile_attempts(std::int64_t body_attempts,
                                                  const received_message& message) const {
  return bp::reconcile_attempts(body_attempts, message.delivery_count);
}

transport_stats pulsar_transport::stats() const noexcept { return impl_->stats; }

void register_transport() {
  const auto factory = babelqueue::detail::url_factory<pulsar_transport>(options_from_url);
  babelqueue::register_transport("pulsar", factory);
  babelqueue::register_transport("pulsar+ssl", factory);
}

}  // namespace babelqueue::inline v1::pulsar

namespace babelqueue::inline v1::pulsar {

std::vector<std::string> pulsar_transport::security_warnings() const {
  return babelqueue::detail::security_warnings_of({.scheme = scheme(),
                                                   .tls = opts_.tls,
                                                   .tls_verify = opts_.tls_verify,
                                                   .credential = opts_.token.empty() ? "" : "token",
                                                   .host = opts_.host,
                                                   .secure = "pulsar+ssl://"});
}

}  // namespace babelqueue::inline v1::pulsar
