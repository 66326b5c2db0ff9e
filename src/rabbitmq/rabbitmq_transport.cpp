// The amqp:// transport: the seam's operations on top of detail::connection, with the
// reconnect loop, the settlement handles and the release-by-republish of D7.
#include "core/propagate.hpp"
#include "core/reconnect_backoff.hpp"
#include "rabbitmq/connection.hpp"
#include "rabbitmq/options.hpp"
#include "rabbitmq/wait_queue.hpp"
#include "runtime/binding_support.hpp"

#include <babelqueue/bindings/rabbitmq.hpp>
#include <babelqueue/rabbitmq/rabbitmq_transport.hpp>
#include <babelqueue/runtime/settlement_handle.hpp>

#include <map>
#include <thread>

namespace babelqueue::inline v1::rabbitmq {

namespace rb = bindings::rabbitmq;
using detail::clock;

namespace {

/// What a received_message's opaque handle holds (settlement_handle.hpp marks it as the
/// instance's).
struct delivery_handle {
  std::uint64_t generation = 0;
  amqp_channel_t channel = 0;
  std::uint64_t tag = 0;
  std::optional<std::int64_t> x_attempts;
};

result<void> check_queue(std::string_view queue) {
  if (queue.empty()) return fail(transport_errc::invalid_argument, "amqp: empty queue name");
  if (queue.size() > rb::max_short_string) {
    return fail(transport_errc::invalid_argument,
                "amqp: a queue name is at most 255 bytes (an AMQP short string)");
  }
  return {};
}

// A header name is a field-table key, an AMQP short string: a longer one would be sent as a
// malformed frame, which the broker answers by closing the connection (INTERNAL_ERROR).
result<void> check_header_names(const headers& hdrs) {
  for (const auto& h : hdrs) {
    if (h.first.size() > rb::max_short_string) {
      return fail(transport_errc::invalid_argument,
                  "amqp: a header name is at most 255 bytes (an AMQP short string); one is " +
                      std::to_string(h.first.size()));
    }
  }
  return {};
}

}  // namespace

struct rabbitmq_transport::impl {
  explicit impl(const options& o)
      : opts(o), conn(o), backoff(o.reconnect_backoff_min, o.reconnect_backoff_max) {}

  /// Connects (with backoff) until `deadline`; at least one attempt when the schedule allows.
  result<void> ensure(clock::time_point deadline);
  /// Connects and declares `queue` (and `wait`, the wait queue of a delayed publish),
  /// reconnecting when the connection drops on the way.
  result<void> prepare(std::string_view queue, const detail::wait_queue* wait,
                       clock::time_point deadline);
  /// The handle of `m` when it is an unsettled delivery of this instance, else an error.
  result<claimed_handle<delivery_handle>> settleable(const received_message& m);
  /// Publishes `count` messages (`at(i)` gives body and headers) under the confirm window
  /// and waits for every confirm; to `queue`, or to the wait queue `wait` of `queue`.
  template <class MessageAt>
  result<void> publish_many(std::string_view queue, std::size_t count, MessageAt at,
                            const detail::wait_queue* wait = nullptr);

  const options& opts;

  detail::connection conn;
  ::babelqueue::detail::reconnect_backoff backoff;
  std::optional<error_info> last_connect_error;
  bool closed = false;
  /// Marks the handles this instance hands out.
  settlement_owner owner{"amqp"};
};

rabbitmq_transport::rabbitmq_transport(options opts)
    : opts_(std::move(opts)), impl_(std::make_unique<impl>(opts_)) {}

rabbitmq_transport::~rabbitmq_transport() = default;

result<std::unique_ptr<rabbitmq_transport>> rabbitmq_transport::open(options opts) {
  BABELQUEUE_TRY(detail::validate(opts));
  std::unique_ptr<rabbitmq_transport> t(new rabbitmq_transport(std::move(opts)));
  BABELQUEUE_TRY(t->impl_->conn.start_keeper());
  auto lock = t->impl_->conn.lock();
  BABELQUEUE_TRY(t->impl_->conn.connect(clock::now() + t->opts_.connect_timeout));
  t->impl_->backoff.succeeded();
  return t;
}

result<void> rabbitmq_transport::impl::ensure(clock::time_point deadline) {
  auto& d = *this;
  while (!d.conn.is_open()) {
    auto now = clock::now();
    if (now < d.backoff.next_attempt()) {
      if (d.backoff.next_attempt() >= deadline) {
        // Use up the caller's time rather than failing at once, so that a loop around
        // receive()/publish() cannot spin during an outage.
        std::this_thread::sleep_until(deadline);
        error_info e =
            d.last_connect_error.value_or(error_info(transport_errc::unavailable, "not connected"));
        e.message = "the broker is unavailable (" + e.message + ")";
        if (e.code != transport_errc::permission && e.code != transport_errc::invalid_argument) {
          e.code = transport_errc::unavailable;
        }
        return fail(std::move(e));
      }
      std::this_thread::sleep_until(d.backoff.next_attempt());
    }
    auto r = d.conn.connect(deadline);
    if (r) {
      d.backoff.succeeded();
      d.last_connect_error.reset();
      return {};
    }
    d.last_connect_error = r.error();
    d.backoff.failed();
    if (detail::is_permanent(r.error())) return r;  // refused credentials, bad TLS files
    if (clock::now() >= deadline) return r;
  }
  return {};
}

// --- publish -----------------------------------------------------------------------------

result<void> rabbitmq_transport::impl::prepare(std::string_view queue,
                                               const detail::wait_queue* wait,
                                               clock::time_point deadline) {
  for (;;) {
    if (auto r = ensure(deadline); !r) return r;
    // The work queue first: it is where the wait queue dead-letters to, and the broker
    // drops a dead-letter no queue takes. The wait queue is the SDK's own, so it is declared
    // even without declare_queues (nobody can provision one per delay in advance).
    auto r = opts.declare_queues ? conn.declare(queue) : result<void>();
    if (r && wait != nullptr) r = conn.declare_wait(*wait);
    if (r || conn.is_open() || !is_transient(r.code()) || clock::now() >= deadline) return r;
  }
}

template <class MessageAt>
result<void> rabbitmq_transport::impl::publish_many(std::string_view queue, std::size_t count,
                                                    MessageAt at, const detail::wait_queue* wait) {
  if (closed) return fail(transport_errc::closed, "amqp transport is closed");
  if (auto r = check_queue(queue); !r) return r;
  if (count == 0) return {};
  for (std::size_t i = 0; i < count; ++i) {  // before anything is sent
    if (auto r = check_header_names(at(i).second); !r) return r;
  }
  auto deadline = clock::now() + opts.operation_timeout;
  if (auto r = prepare(queue, wait, deadline); !r) return r;
  const std::string_view route = wait != nullptr ? std::string_view(wait->name) : queue;
  const std::uint64_t generation = conn.generation();
  const auto window = static_cast<std::size_t>(opts.confirm_window);
  for (std::size_t i = 0; i < count; ++i) {
    if (conn.unconfirmed() >= window) {
      if (auto r = conn.await_confirms(window - 1, deadline); !r) return r;
      deadline = clock::now() + opts.operation_timeout;
    }
    if (!conn.is_open() || conn.generation() != generation) {
      return fail(transport_errc::unavailable,
                  "connection lost during a batch publish; earlier messages may be unconfirmed");
    }
    const auto [body, hdrs] = at(i);
    if (auto r = conn.send(route, body, rb::project(body, hdrs)); !r) return r;
  }
  return conn.await_confirms(0, deadline);
}

result<void> rabbitmq_transport::publish(std::string_view queue, std::string_view body,
                                         const headers& hdrs) {
  auto lock = impl_->conn.lock();
  auto one = [&](std::size_t) { return std::pair<std::string_view, const headers&>(body, hdrs); };
  auto r = impl_->publish_many(queue, 1, one);
  if (!r && r.code() == transport_errc::not_found && opts_.declare_queues) {
    // Returned unroutable: the queue was deleted after we declared it (no queue holds the
    // message, so sending it again cannot duplicate it). Declare it again, once.
    r = impl_->publish_many(queue, 1, one);
  }
  return r;
}

// Delayed publish (header "Delayed publish"): the seam checked the delay (> 0, at most
// max_publish_delay); a publish() to the wait queue, whose TTL and dead-lettering bring the
// message to `queue` when due. A per-message `expiration` in one shared queue would be
// wrong: RabbitMQ expires only the head of a queue, so a long delay would block shorter ones.
result<void> rabbitmq_transport::publish_later(std::string_view queue, std::string_view body,
                                               const headers& hdrs,
                                               std::chrono::milliseconds delay) {
  auto lock = impl_->conn.lock();
  if (impl_->closed) return fail(transport_errc::closed, "amqp transport is closed");
  BABELQUEUE_TRY(check_queue(queue));
  const detail::wait_queue wait =
      detail::wait_queue_for(queue, delay, std::chrono::system_clock::now());
  auto one = [&](std::size_t) { return std::pair<std::string_view, const headers&>(body, hdrs); };
  auto r = impl_->publish_many(queue, 1, one, &wait);
  if (!r && r.code() == transport_errc::not_found) {
    // Returned unroutable: the wait queue was deleted since we declared it (no queue holds
    // the message, so sending it again cannot duplicate it). Declare it again, once (the
    // return dropped it from the declared set).
    r = impl_->publish_many(queue, 1, one, &wait);
  }
  return r;
}

result<void> rabbitmq_transport::publish_batch(std::string_view queue,
                                               std::span<const outgoing_message> messages) {
  auto lock = impl_->conn.lock();
  return impl_->publish_many(queue, messages.size(), [&](std::size_t i) {
    return std::pair<std::string_view, const headers&>(messages[i].body, messages[i].hdrs);
  });
}

// --- consume -----------------------------------------------------------------------------

result<std::optional<received_message>> rabbitmq_transport::receive(
    std::string_view queue, std::chrono::milliseconds timeout) {
  auto lock = impl_->conn.lock();
  if (impl_->closed) return fail(transport_errc::closed, "amqp transport is closed");
  BABELQUEUE_TRY(check_queue(queue));
  const auto deadline = clock::now() + std::max(timeout, std::chrono::milliseconds(0));
  for (;;) {
    BABELQUEUE_TRY(impl_->ensure(deadline));
    auto c = impl_->conn.consumer_of(queue);
    if (!c) {
      if (impl_->conn.is_open() || !is_transient(c.code()) || clock::now() >= deadline) {
        return fail(c.error());
      }
      continue;  // the connection dropped on the way: reconnect within the timeout
    }
    if ((*c)->ready.empty()) {
      if (auto r = impl_->conn.await_delivery(queue, deadline); !r) {
        if (!is_transient(r.code()) || clock::now() >= deadline) return fail(r.error());
        continue;
      }
      BABELQUEUE_TRY_LET(again, impl_->conn.consumer_of(queue));
      c = again;
    }
    auto& ready = (*c)->ready;
    if (ready.empty()) return std::optional<received_message>();  // timed out
    detail::delivery d = std::move(ready.front());
    ready.pop_front();
    auto handle = impl_->owner.issue(
        delivery_handle{impl_->conn.generation(), (*c)->channel, d.tag, d.x_attempts});
    received_message m;
    m.body = std::move(d.body);
    m.queue = std::string(queue);
    m.hdrs = std::move(d.hdrs);
    m.delivery_count = d.x_attempts;
    m.handle = std::move(handle);
    return std::optional<received_message>(std::move(m));
  }
}

result<claimed_handle<delivery_handle>> rabbitmq_transport::impl::settleable(
    const received_message& m) {
  auto& d = *this;
  if (d.closed) return fail(transport_errc::closed, "amqp transport is closed");
  auto h = d.owner.claim<delivery_handle>(m);
  if (!h) return h;
  // See a close the broker sent meanwhile before trusting the delivery tag.
  if (d.conn.is_open()) (void)d.conn.catch_up();
  if (!d.conn.is_open() || d.conn.generation() != (*h)->generation ||
      !d.conn.consumes_on((*h)->channel)) {
    h->settle();  // its tag is void: the broker delivers the message again
    return fail(transport_errc::unavailable,
                "amqp: the connection or channel this message came on was lost; the broker "
                "delivers it again");
  }
  return h;
}

result<void> rabbitmq_transport::ack(const received_message& message) {
  auto lock = impl_->conn.lock();
  BABELQUEUE_TRY_LET(h, impl_->settleable(message));
  h->settle();
  return impl_->conn.ack((*h)->channel, (*h)->tag);
}

result<void> rabbitmq_transport::release(const received_message& message,
                                         std::chrono::milliseconds delay) {
  auto lock = impl_->conn.lock();
  if (delay.count() > 0) {
    if (impl_->closed) return fail(transport_errc::closed, "amqp transport is closed");
    return fail(transport_errc::not_supported,
                "amqp: release() cannot delay (RabbitMQ has no delay of its own; publish_delayed() "
                "goes through a wait queue); release with delay 0");
  }
  BABELQUEUE_TRY_LET(h, impl_->settleable(message));
  // Republish the same bytes and headers to the tail, confirmed, then ack the original
  // (D7: no basic.reject/requeue). x-attempts never goes down: Laravel counts there.
  rb::properties props = rb::project(message.body, message.hdrs);
  if (const auto received = (*h)->x_attempts) {
    bool found = false;
    for (auto& [name, value] : props.headers) {
      if (name != rb::header_attempts) continue;
      found = true;
      if (auto* n = std::get_if<std::int64_t>(&value); n != nullptr && *n < *received)
        *n = *received;
    }
    if (!found) props.headers.emplace_back(std::string(rb::header_attempts), *received);
  }
  const auto deadline = clock::now() + opts_.operation_timeout;
  const std::uint64_t generation = (*h)->generation;
  if (opts_.declare_queues) {
    if (auto r = impl_->conn.declare(message.queue); !r) return r;
  }
  if (auto r = impl_->conn.send(message.queue, message.body, props); !r) return r;
  if (auto r = impl_->conn.await_confirms(0, deadline); !r) return r;
  if (!impl_->conn.is_open() || impl_->conn.generation() != generation) {
    return fail(transport_errc::unavailable, "amqp: connection lost during a release");
  }
  h->settle();
  return impl_->conn.ack((*h)->channel, (*h)->tag);
}

// --- lifecycle ---------------------------------------------------------------------------

result<std::vector<peeked_message>> rabbitmq_transport::peek(std::string_view, std::size_t,
                                                             std::size_t) {
  return cannot_peek(impl_->closed);
}

result<void> rabbitmq_transport::close(std::chrono::steady_clock::time_point deadline) {
  auto lock = impl_->conn.lock();
  if (impl_->closed) return {};
  impl_->closed = true;
  impl_->conn.close(deadline);
  return {};
}

std::int64_t rabbitmq_transport::reconcile_attempts(std::int64_t body_attempts,
                                                    const received_message& message) const {
  return rb::reconcile_attempts(body_attempts, message.delivery_count);
}

transport_stats rabbitmq_transport::stats() const noexcept {
  auto lock = impl_->conn.lock();
  return impl_->conn.stats();
}

// -----------------------------------------------------------------------------------------

void register_transport() {
  const auto factory = babelqueue::detail::url_factory<rabbitmq_transport>(options_from_url);
  babelqueue::register_transport("amqp", factory);
  babelqueue::register_transport("amqps", factory);
}

}  // namespace babelqueue::inline v1::rabbitmq

namespace babelqueue::inline v1::rabbitmq {

std::vector<std::string> rabbitmq_transport::security_warnings() const {
  return babelqueue::detail::security_warnings_of(
      {.scheme = scheme(),
       .tls = opts_.tls,
       .tls_verify = opts_.tls_verify,
       .credential = opts_.password.empty() ? "" : "password",
       .host = opts_.host,
       .secure = "amqps://"});
}

}  // namespace babelqueue::inline v1::rabbitmq
