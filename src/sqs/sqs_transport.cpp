// The sqs:// transport: the transport seam on the SQS JSON API (api.hpp), with the pure
// projection of bindings/sqs.hpp. See sqs_transport.hpp for the guarantees.
#include "core/propagate.hpp"
#include "runtime/binding_support.hpp"
#include "sqs/api.hpp"
#include "sqs/message.hpp"
#include "sqs/options.hpp"

#include <babelqueue/bindings/sqs.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/runtime/settlement_handle.hpp>
#include <babelqueue/sqs/sqs_transport.hpp>

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <thread>

namespace babelqueue::inline v1::sqs {

namespace bs = bindings::sqs;
using clock = std::chrono::steady_clock;
using detail::attributes_size;
using detail::check_message;
using detail::deduplication_id;
using std::chrono::milliseconds;

namespace {

// What the settlement handle of a received message holds (settlement_handle.hpp marks it
// as this instance's and keeps its settled flag, shared by every copy of the message).
struct receipt {
  std::string queue_url;
  std::string receipt_handle;
  bool queued = false;  ///< acked with ack_batch=true: its delete is pending
};
using owned_receipt = claimed_handle<receipt>;

// An ack deferred by ack_batch=true: the handle kept alive until its delete went out.
struct pending_delete {
  std::shared_ptr<void> keep;
  owned_receipt receipt;
};

// Whole seconds, rounded up, clamped to [0, max].
int seconds_up(milliseconds d, int max) {
  if (d.count() <= 0) return 0;
  const auto s = (d.count() + 999) / 1000;
  return static_cast<int>(std::min<std::int64_t>(s, max));
}

}  // namespace

struct sqs_transport::impl {
  explicit impl(detail::api_options a) : api(std::move(a)) {}
  detail::api api;
  std::map<std::string, std::string, std::less<>> urls;  // logical name → URL
  std::map<std::string, std::deque<detail::wire_message>, std::less<>> buffered;  // by logical name
  std::map<std::string, std::string, std::less<>> buffered_urls;
  std::vector<pending_delete> pending_deletes;  // receipts acked, not yet deleted
  settlement_owner owner{"sqs"};                // marks the handles it hands out
  bool closed = false;
  std::int64_t published = 0;
  std::int64_t delivered = 0;
  std::int64_t delete_failures = 0;
};

sqs_transport::sqs_transport(options opts) : opts_(std::move(opts)) {}

sqs_transport::~sqs_transport() = default;

result<std::unique_ptr<sqs_transport>> sqs_transport::open(options opts) {
  BABELQUEUE_TRY(detail::validate(opts));
  BABELQUEUE_TRY_LET(creds, detail::resolve_credentials(opts.profile));
  detail::api_options a;
  a.endpoint = detail::endpoint_of(opts);
  a.region = opts.region;
  a.creds = std::move(*creds);
  a.http.connect_timeout = opts.connect_timeout;
  a.http.tls_ca_file = opts.tls_ca_file;
  a.http.tls_verify = opts.tls_verify;
  a.retries = static_cast<int>(opts.retries);
  std::unique_ptr<sqs_transport> t(new sqs_transport(std::move(opts)));
  t->impl_ = std::make_unique<impl>(std::move(a));
  return t;
}

std::string sqs_transport::native_name(std::string_view queue) const {
  bs::dead_letter_mapping m;
  m.suffix = opts_.dlq_suffix;
  m.queue = opts_.dlq;
  return bs::native_queue_name(queue, m);
}

result<std::string> sqs_transport::queue_url(std::string_view queue) {
  if (queue.empty()) return fail(transport_errc::invalid_argument, "sqs: the queue name is empty");
  if (auto it = impl_->urls.find(queue); it != impl_->urls.end()) return it->second;
  const std::string name = native_name(queue);
  std::string url;
  if (!opts_.prefix.empty()) {
    std::string prefix = opts_.prefix;
    while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
    url = prefix + "/" + name;
  } else {
    auto r = impl_->api.get_queue_url(name, opts_.operation_timeout);
    if (!r && r.code() == transport_errc::not_found && opts_.create_queues) {
      std::vector<std::pair<std::string, std::string>> attributes;
      if (bs::is_fifo(name)) attributes.emplace_back("FifoQueue", "true");
      r = impl_->api.create_queue(name, attributes, opts_.operation_timeout);
    }
    if (!r) {
      auto e = std::move(r).error();
      e.message = "queue '" + std::string(queue) + "'" +
                  (name != queue ? " (SQS name '" + name + "')" : std::string()) + ": " + e.message;
      return fail(std::move(e));
    }
    url = std::move(*r);
  }
  impl_->urls.emplace(std::string(queue), url);
  return url;
}

result<int> sqs_transport::delay_seconds_of(std::string_view queue, milliseconds delay) const {
  if (delay.count() < 0) {
    return fail(transport_errc::invalid_argument,
                "sqs: a publish delay must be >= 0 (got " + std::to_string(delay.count()) + " ms)");
  }
  if (delay.count() == 0) return 0;
  if (delay > max_publish_delay) {
    return fail(transport_errc::invalid_argument,
                "sqs: a publish delay of " + std::to_string(delay.count()) +
                    " ms is over SQS's DelaySeconds maximum of 900 s; nothing was sent");
  }
  const std::string name = native_name(queue);
  if (opts_.fifo || bs::is_fifo(name)) {
    // SQS refuses DelaySeconds on a FIFO message; sending without it would deliver early.
    return fail(transport_errc::not_supported,
                "sqs: FIFO queue '" + name +
                    "' takes no per-message delay (SQS applies only the queue's own "
                    "DelaySeconds there); nothing was sent");
  }
  return seconds_up(delay, 900);  // whole seconds, rounded up: never early
}

result<void> sqs_transport::publish(std::string_view queue, std::string_view body,
                                    const headers& hdrs) {
  if (impl_->closed) return fail(transport_errc::closed, "sqs: the transport is closed");
  return send_one(queue, body, hdrs, 0);
}

result<void> sqs_transport::publish_later(std::string_view queue, std::string_view body,
                                          const headers& hdrs, milliseconds delay) {
  if (impl_->closed) return fail(transport_errc::closed, "sqs: the transport is closed");
  BABELQUEUE_TRY_LET(seconds, delay_seconds_of(queue, delay));
  return send_one(queue, body, hdrs, *seconds);
}

result<void> sqs_transport::send_one(std::string_view queue, std::string_view body,
                                     const headers& hdrs, int delay_seconds) {
  const auto attributes = bs::project(body, hdrs);
  if (auto r = check_message(body, attributes, opts_.max_message_bytes); !r) return r;
  BABELQUEUE_TRY_LET(url, queue_url(queue));
  detail::send_entry e;
  e.body = body;
  e.attributes = &attributes;
  e.delay_seconds = delay_seconds;
  const std::string name = native_name(queue);
  if (opts_.fifo || bs::is_fifo(name)) {
    auto ids = bs::fifo_ids_for(name, body, opts_.group_id);
    e.group_id = std::move(ids.group_id);
    if (!opts_.content_based_dedup)
      e.deduplication_id = deduplication_id(body, std::move(ids.deduplication_id), hdrs);
  }
  auto r = impl_->api.send_message(*url, e, opts_.operation_timeout);
  if (!r) {
    if (r.code() == transport_errc::not_found) impl_->urls.erase(std::string(queue));
    return r;
  }
  ++impl_->published;
  return {};
}

std::vector<result<void>> sqs_transport::publish_each(std::string_view queue,
                                                      std::span<const outgoing_message> messages,
                                                      milliseconds delay) {
  std::vector<result<void>> out(messages.size());
  if (messages.empty()) return out;
  auto fail_all = [&](const error_info& e) {
    for (auto& r : out) r = fail(e);
    return out;
  };
  if (impl_->closed)
    return fail_all(error_info(transport_errc::closed, "sqs: the transport is closed"));
  const auto delay_seconds = delay_seconds_of(queue, delay);
  if (!delay_seconds) return fail_all(delay_seconds.error());
  auto url = queue_url(queue);
  if (!url) return fail_all(url.error());
  const std::string name = native_name(queue);
  const bool fifo = opts_.fifo || bs::is_fifo(name);

  // Project and check every message; `pending` are the indexes still to send.
  std::vector<std::vector<bs::attribute>> attributes(messages.size());
  std::vector<detail::send_entry> entries(messages.size());
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    attributes[i] = bs::project(messages[i].body, messages[i].hdrs);
    if (auto r = check_message(messages[i].body, attributes[i], opts_.max_message_bytes); !r) {
      out[i] = r;
      continue;
    }
    auto& e = entries[i];
    e.body = messages[i].body;
    e.attributes = &attributes[i];
    e.delay_seconds = *delay_seconds;
    if (fifo) {
      auto ids = bs::fifo_ids_for(name, messages[i].body, opts_.group_id);
      e.group_id = std::move(ids.group_id);
      if (!opts_.content_based_dedup) {
        e.deduplication_id =
            deduplication_id(messages[i].body, std::move(ids.deduplication_id), messages[i].hdrs);
      }
    }
    pending.push_back(i);
  }

  const auto deadline = clock::now() + opts_.operation_timeout;
  milliseconds pause{50};
  while (!pending.empty()) {
    std::vector<std::size_t> again;
    // Chunks of at most 10 entries and max_message_bytes in total, in order (FIFO order
    // within a group follows the entry order).
    for (std::size_t start = 0; start < pending.size();) {
      std::vector<detail::send_entry> chunk;
      std::vector<std::size_t> index;
      std::size_t bytes = 0;
      while (start < pending.size() && chunk.size() < 10) {
        const std::size_t i = pending[start];
        const std::size_t size = messages[i].body.size() + attributes_size(attributes[i]);
        if (!chunk.empty() && bytes + size > static_cast<std::size_t>(opts_.max_message_bytes))
          break;
        bytes += size;
        chunk.push_back(entries[i]);
        index.push_back(i);
        ++start;
      }
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - clock::now());
      auto r = impl_->api.send_message_batch(*url, chunk, std::max(left, milliseconds{1}));
      if (!r) {
        if (r.code() == transport_errc::not_found) impl_->urls.erase(std::string(queue));
        for (const std::size_t at : index) out[at] = fail(r.error());
        for (std::size_t k = start; k < pending.size(); ++k) {
          out[pending[k]] = fail(
              r.error().code, "not sent: an earlier SendMessageBatch failed: " + r.error().message);
        }
        return out;
      }
      for (std::size_t k = 0; k < index.size(); ++k) {
        const auto& o = (*r)[k];
        if (o.ok) {
          out[index[k]] = {};
          ++impl_->published;
          continue;
        }
        error_info e(
            o.sender_fault ? detail::errc_of_sqs_error(400, o.code) : transport_errc::unavailable,
            "SendMessageBatch entry " + std::to_string(index[k]) + " failed: " + o.code +
                (o.message.empty() ? "" : ": " + o.message),
            {}, native_error{"sqs", 0, o.code});
        out[index[k]] = fail(e);
        if (!o.sender_fault) again.push_back(index[k]);  // SQS's fault: send it again
      }
    }
    pending = std::move(again);
    if (pending.empty() || clock::now() + pause >= deadline) break;
    std::this_thread::sleep_for(pause);
    pause *= 2;
  }
  return out;
}

result<void> sqs_transport::publish_batch(std::string_view queue,
                                          std::span<const outgoing_message> messages) {
  return first_failure(publish_each(queue, messages));
}

result<void> sqs_transport::publish_batch_later(std::string_view queue,
                                                std::span<const outgoing_message> messages,
                                                milliseconds delay) {
  return first_failure(publish_each(queue, messages, delay));
}

result<std::optional<received_message>> sqs_transport::receive(std::string_view queue,
                                                               milliseconds timeout) {
  if (impl_->closed) return fail(transport_errc::closed, "sqs: the transport is closed");
  auto buffer = impl_->buffered.find(queue);
  if (buffer == impl_->buffered.end() || buffer->second.empty()) {
    // Deferred deletes go out before the next poll: a failure is counted (stats) and the
    // messages come back after their visibility timeout, as with a failed ack().
    (void)flush_acks();
    BABELQUEUE_TRY_LET(url, queue_url(queue));
    const int wait = std::min(seconds_up(timeout, 20), static_cast<int>(opts_.wait_time));
    std::optional<int> visibility;
    if (opts_.visibility >= 0) visibility = static_cast<int>(opts_.visibility);
    auto got = impl_->api.receive_message(*url, static_cast<int>(opts_.batch), wait, visibility,
                                          opts_.operation_timeout);
    if (!got) {
      if (got.code() == transport_errc::not_found) impl_->urls.erase(std::string(queue));
      return fail(std::move(got).error());
    }
    if (got->empty()) return std::optional<received_message>{};
    impl_->delivered += static_cast<std::int64_t>(got->size());
    if (buffer == impl_->buffered.end()) {
      buffer =
          impl_->buffered.emplace(std::string(queue), std::deque<detail::wire_message>{}).first;
    }
    impl_->buffered_urls[std::string(queue)] = *url;
    for (auto& m : *got) buffer->second.push_back(std::move(m));
  }
  detail::wire_message w = std::move(buffer->second.front());
  buffer->second.pop_front();

  received_message m;
  m.queue = std::string(queue);
  m.hdrs = bs::headers_from_attributes(w.attributes);
  if (w.receive_count) m.delivery_count = bs::receive_count_of(*w.receive_count);
  for (const auto& a : w.attributes) {
    if (a.name == bs::attribute_schema_version && !bs::schema_version_accepted(a.string_value)) {
      m.refused_schema_version = a.string_value;
    }
  }
  m.handle = impl_->owner.issue(
      receipt{impl_->buffered_urls[std::string(queue)], std::move(w.receipt_handle), false});
  m.body = std::move(w.body);
  return std::optional<received_message>(std::move(m));
}

namespace {

// The receipt of a message this instance received, not settled and not waiting for its
// deferred delete; else invalid_argument.
result<owned_receipt> own(const settlement_owner& owner, const received_message& message) {
  auto r = owner.claim<receipt>(message);
  if (r && (*r)->queued) {
    return fail(transport_errc::invalid_argument,
                "sqs: this message was already acked (its delete is pending)");
  }
  return r;
}

}  // namespace

result<void> sqs_transport::ack(const received_message& message) {
  if (impl_->closed) return fail(transport_errc::closed, "sqs: the transport is closed");
  BABELQUEUE_TRY_LET(r, own(impl_->owner, message));
  if (opts_.ack_batch) {
    (*r)->queued = true;
    impl_->pending_deletes.push_back(pending_delete{message.handle, *r});
    if (impl_->pending_deletes.size() >= 10) return flush_acks();
    return {};
  }
  auto d =
      impl_->api.delete_message((*r)->queue_url, (*r)->receipt_handle, opts_.operation_timeout);
  if (!d) {
    auto e = std::move(d).error();
    e.message =
        "the message was handled but could not be deleted (SQS delivers it again after its "
        "visibility timeout): " +
        e.message;
    return fail(std::move(e));
  }
  r->settle();
  return {};
}

namespace {

// DeleteMessageBatch of `receipts` (owned, unsettled, distinct), grouped by queue URL in
// chunks of ten; one result per receipt, in order. Successful ones are marked settled.
std::vector<result<void>> delete_receipts(detail::api& api,
                                          const std::vector<owned_receipt>& receipts,
                                          milliseconds timeout) {
  std::vector<result<void>> out(receipts.size());
  std::map<std::string, std::vector<std::size_t>> by_url;
  for (std::size_t i = 0; i < receipts.size(); ++i) by_url[receipts[i]->queue_url].push_back(i);
  for (const auto& [url, indexes] : by_url) {
    for (std::size_t start = 0; start < indexes.size(); start += 10) {
      const std::size_t end = std::min(indexes.size(), start + 10);
      std::vector<std::string_view> handles;
      for (std::size_t k = start; k < end; ++k)
        handles.push_back(receipts[indexes[k]]->receipt_handle);
      auto d = api.delete_message_batch(url, handles, timeout);
      for (std::size_t k = start; k < end; ++k) {
        const owned_receipt& rc = receipts[indexes[k]];
        if (!d) {
          out[indexes[k]] = fail(d.error().code,
                                 "the message was handled but could not be deleted (SQS delivers "
                                 "it again after its visibility timeout): " +
                                     d.error().message);
          continue;
        }
        const auto& o = (*d)[k - start];
        if (o.ok) {
          rc.settle();
          out[indexes[k]] = {};
        } else {
          out[indexes[k]] = fail(
              o.sender_fault ? detail::errc_of_sqs_error(400, o.code) : transport_errc::unavailable,
              "the message was handled but could not be deleted (SQS delivers it again after "
              "its visibility timeout): DeleteMessageBatch entry failed: " +
                  o.code + (o.message.empty() ? "" : ": " + o.message),
              native_error{"sqs", 0, o.code});
        }
      }
    }
  }
  return out;
}

}  // namespace

std::vector<result<void>> sqs_transport::ack_batch(std::span<const received_message> messages) {
  std::vector<result<void>> out(messages.size());
  if (impl_->closed) {
    for (auto& r : out) r = fail(transport_errc::closed, "sqs: the transport is closed");
    return out;
  }
  std::vector<owned_receipt> receipts;
  std::vector<std::size_t> index;
  std::set<const receipt*> listed;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    auto r = own(impl_->owner, messages[i]);
    if (!r) {
      out[i] = fail(std::move(r).error());
      continue;
    }
    if (!listed.insert(&**r).second) {
      out[i] = fail(transport_errc::invalid_argument,
                    "sqs: ack of a message listed twice in one ack_batch");
      continue;
    }
    receipts.push_back(*r);
    index.push_back(i);
  }
  auto results = delete_receipts(impl_->api, receipts, opts_.operation_timeout);
  for (std::size_t k = 0; k < results.size(); ++k) out[index[k]] = std::move(results[k]);
  return out;
}

result<void> sqs_transport::flush_acks() {
  if (impl_->pending_deletes.empty()) return {};
  auto pending = std::move(impl_->pending_deletes);
  impl_->pending_deletes.clear();
  std::vector<owned_receipt> receipts;
  for (const auto& p : pending) receipts.push_back(p.receipt);
  auto results = delete_receipts(impl_->api, receipts, opts_.operation_timeout);
  std::optional<error_info> first;
  std::size_t failed = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    receipts[i]->queued = false;
    if (results[i]) continue;
    ++failed;
    if (!first) first = results[i].error();
  }
  if (!first) return {};
  impl_->delete_failures += static_cast<std::int64_t>(failed);
  first->message = "deferred delete of " + std::to_string(failed) + " of " +
                   std::to_string(results.size()) +
                   " acked message(s) failed (SQS delivers them again): " + first->message;
  return fail(std::move(*first));
}

result<void> sqs_transport::release(const received_message& message, milliseconds delay) {
  if (impl_->closed) return fail(transport_errc::closed, "sqs: the transport is closed");
  BABELQUEUE_TRY_LET(r, own(impl_->owner, message));
  auto c = impl_->api.change_visibility((*r)->queue_url, (*r)->receipt_handle,
                                        seconds_up(delay, 43200), opts_.operation_timeout);
  if (!c) return c;
  r->settle();
  return {};
}

result<std::vector<peeked_message>> sqs_transport::peek(std::string_view, std::size_t,
                                                        std::size_t) {
  return cannot_peek(impl_->closed);
}

result<void> sqs_transport::close(clock::time_point deadline) {
  if (impl_->closed) return {};
  result<void> flushed = flush_acks();
  impl_->closed = true;
  // Messages received but never handed out: visible again now, not after the visibility
  // timeout. Best effort within the deadline; what is left returns by itself.
  for (auto& [queue, messages] : impl_->buffered) {
    const std::string& url = impl_->buffered_urls[queue];
    while (!messages.empty()) {
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - clock::now());
      if (left.count() <= 0) return flushed;
      std::vector<std::string_view> handles;
      for (std::size_t i = 0; i < messages.size() && handles.size() < 10; ++i) {
        handles.push_back(messages[i].receipt_handle);
      }
      (void)impl_->api.change_visibility_batch(url, handles, 0, left);
      messages.erase(messages.begin(),
                     messages.begin() + static_cast<std::ptrdiff_t>(handles.size()));
    }
  }
  impl_->buffered.clear();
  return flushed;
}

std::int64_t sqs_transport::reconcile_attempts(std::int64_t body_attempts,
                                               const received_message& message) const {
  return bs::reconcile_attempts(body_attempts, message.delivery_count);
}

transport_stats sqs_transport::stats() const noexcept {
  return transport_stats{impl_->api.requests(), impl_->api.connects(), impl_->published,
                         impl_->delivered, impl_->delete_failures};
}

void register_transport() {
  babelqueue::register_transport("sqs",
                                 babelqueue::detail::url_factory<sqs_transport>(options_from_url));
}

}  // namespace babelqueue::inline v1::sqs

namespace babelqueue::inline v1::sqs {

std::vector<std::string> sqs_transport::security_warnings() const {
  // SigV4 signs requests: the secret key itself is never sent, over TLS or not.
  return babelqueue::detail::security_warnings_of(
      {.scheme = scheme(),
       .tls = detail::endpoint_of(opts_).starts_with("https://"),
       .tls_verify = opts_.tls_verify,
       .credential = "",
       .host = "",
       .secure = ""});
}

}  // namespace babelqueue::inline v1::sqs
