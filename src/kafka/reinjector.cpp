// The retry-tier re-injector (reinjector.hpp).
#include "core/propagate.hpp"
#include "kafka/consumer.hpp"
#include "kafka/options.hpp"
#include "kafka/producer.hpp"

#include <babelqueue/bindings/kafka.hpp>
#include <babelqueue/kafka/reinjector.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>

namespace babelqueue::inline v1::kafka {

namespace bk = bindings::kafka;
using clock = std::chrono::steady_clock;

struct reinjector::impl {
  options opts;
  // Issues the handles of the consumer's records (declared before it: it outlives it).
  settlement_owner handles{"kafka reinjector"};
  std::unique_ptr<detail::producer> producer;
  std::unique_ptr<detail::consumer> consumer;
  detail::consumer_counters counters;
  // Partitions paused for a record not yet due, with the wall-clock ms it is due.
  std::map<std::pair<std::string, std::int32_t>, std::int64_t> held;
  // When each record seen is due (wall-clock ms), by (topic, partition, offset).
  std::map<std::tuple<std::string, std::int32_t, std::int64_t>, std::int64_t> due;
  // The topics a record may name in bq-original-topic: the work topics it was opened for
  // and the ones the operator allowed besides.
  std::set<std::string, std::less<>> destinations;
  // The longest tier: no record waits longer (bq-delay is bounded by it).
  std::int64_t longest_ms = 0;
};

using record_key = std::tuple<std::string, std::int32_t, std::int64_t>;

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const std::string* find_header(const detail::record_handle& h, std::string_view name) {
  for (const auto& [k, v] : h.raw_headers) {
    if (k == name) return &v;
  }
  return nullptr;
}

// When a record first seen `now` is due: its timestamp plus its bq-delay (bounded by the
// longest tier, so no header can park a record longer, and no sum can overflow), clamped to
// [now, now + delay] (a producer clock running ahead cannot park it for more than its delay).
std::int64_t due_at(std::int64_t timestamp_ms, std::int64_t delay_ms, std::int64_t longest_ms,
                    std::int64_t now) {
  const std::int64_t delay = std::clamp<std::int64_t>(delay_ms, 0, longest_ms);
  const bool stamped =
      timestamp_ms > 0 && timestamp_ms <= std::numeric_limits<std::int64_t>::max() - delay;
  return std::clamp((stamped ? timestamp_ms : now) + delay, now, now + delay);
}

}  // namespace

reinjector::~reinjector() {
  if (impl_) (void)close();
}

result<std::unique_ptr<reinjector>> reinjector::open(options opts,
                                                     const std::vector<std::string>& topics,
                                                     const std::vector<std::string>& also_allowed) {
  BABELQUEUE_TRY(detail::validate(opts));
  if (opts.retry_topics.empty()) {
    return fail(transport_errc::invalid_argument,
                "kafka re-injector needs the retry tiers (retry_topics=5s,1m,...)");
  }
  if (topics.empty()) {
    return fail(transport_errc::invalid_argument, "kafka re-injector needs at least one topic");
  }
  std::unique_ptr<reinjector> r(new reinjector());
  r->impl_ = std::make_unique<impl>();
  r->impl_->opts = std::move(opts);
  r->impl_->longest_ms = r->impl_->opts.retry_topics.back().count();
  r->impl_->destinations.insert(topics.begin(), topics.end());
  r->impl_->destinations.insert(also_allowed.begin(), also_allowed.end());
  for (const auto& t : topics) {
    for (std::size_t n = 1; n <= r->impl_->opts.retry_topics.size(); ++n) {
      r->tier_topics_.push_back(bk::retry_topic(t, n));
    }
  }
  BABELQUEUE_TRY_LET(p, detail::producer::open(r->impl_->opts));
  r->impl_->producer = std::move(*p);
  if (auto probe = r->impl_->producer->probe(r->impl_->opts.operation_timeout); !probe) {
    return fail(probe.error());
  }
  detail::create_missing_topics(r->impl_->producer->handle(), r->tier_topics_,
                                r->impl_->opts.operation_timeout);
  auto c = detail::consumer::open(r->impl_->opts, r->impl_->opts.group + ".reinjector",
                                  r->tier_topics_, &r->impl_->counters, r->impl_->handles,
                                  /*keep_raw_headers=*/true);
  if (!c) return fail(c.error());
  r->impl_->consumer = std::move(*c);
  return r;
}

result<std::int64_t> reinjector::run_for(std::chrono::milliseconds timeout) {
  if (!impl_) return fail(transport_errc::closed, "kafka re-injector is closed");
  auto& self = *impl_;
  const auto deadline = clock::now() + timeout;
  std::int64_t reinjected = 0;
  for (;;) {
    // Resume what became due.
    std::int64_t next_due = -1;
    for (auto it = self.held.begin(); it != self.held.end();) {
      if (it->second <= now_ms()) {
        self.consumer->resume(it->first.first, it->first.second);
        it = self.held.erase(it);
      } else {
        next_due = next_due < 0 ? it->second : std::min(next_due, it->second);
        ++it;
      }
    }
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    if (wait.count() <= 0) return reinjected;
    if (next_due >= 0) {
      wait =
          std::min(wait, std::chrono::milliseconds(std::max<std::int64_t>(next_due - now_ms(), 0)));
    }
    BABELQUEUE_TRY_LET(got, self.consumer->receive(wait));
    if (!*got) continue;
    const received_message& m = **got;
    BABELQUEUE_TRY_LET(owned, self.handles.claim<detail::record_handle>(
                                  m));  // cannot happen: its own consumer's record
    const detail::record_handle& h = **owned;
    // Due at timestamp + bq-delay, clamped to [now, now + delay] when first seen (as the
    // Python re-injector): a producer clock running ahead cannot park a record for more than
    // its delay, and the due time is kept so that a record seen again after its partition
    // resumed is not postponed once more.
    const record_key key{*h.topic, h.ticket.partition, h.ticket.offset};
    if (self.due.size() > 100000) self.due.clear();  // entries of partitions that moved away
    auto known = self.due.find(key);
    if (known == self.due.end()) {
      std::int64_t delay = 0;
      if (const auto* d = find_header(h, bk::header_delay))
        delay = bk::parse_attempts(*d).value_or(0);
      known = self.due.emplace(key, due_at(h.timestamp_ms, delay, self.longest_ms, now_ms())).first;
    }
    const std::int64_t due = known->second;
    if (due > now_ms()) {
      BABELQUEUE_TRY(self.consumer->hold(h));
      self.held[{*h.topic, h.ticket.partition}] = due;
      ++stats_.held;
      continue;
    }
    // The work topic the tier belongs to, unless bq-original-topic names another topic the
    // re-injector may write to: a header is data anyone producing to the tier can set, and
    // must not choose an arbitrary destination.
    std::string destination = bk::work_topic_of(*h.topic).value_or(*h.topic);
    if (const auto* o = find_header(h, bk::header_original_topic);
        o != nullptr && !o->empty() && *o != destination) {
      if (self.destinations.contains(*o)) {
        destination = *o;
      } else {
        ++stats_.refused_destinations;
      }
    }
    detail::record rec;
    rec.topic = destination;
    rec.value = m.body;
    for (const auto& kv : h.raw_headers) {
      if (kv.first != bk::header_delay && kv.first != bk::header_original_topic)
        rec.headers.push_back(kv);
    }
    rec.timestamp_ms = 0;  // now (re-entry into the work topic)
    if (auto sent = self.producer->produce({&rec, 1}, clock::now() + self.opts.operation_timeout);
        !sent) {
      // Not acknowledged: rewind so the record is tried again (never committed past).
      (void)self.consumer->hold(h);
      self.held[{*h.topic, h.ticket.partition}] = now_ms() + 1000;
      return fail(sent.error());
    }
    self.due.erase(key);
    BABELQUEUE_TRY(self.consumer->settle(h));
    ++reinjected;
    ++stats_.reinjected;
  }
}

result<void> reinjector::run() {
  while (!stop_.load(std::memory_order_acquire)) {
    auto r = run_for(std::chrono::milliseconds(500));
    if (!r && !is_transient(r.code())) return fail(r.error());
  }
  return {};
}

result<void> reinjector::close() {
  if (!impl_) return {};
  // open() may have failed half-way (the broker did not answer the probe): no consumer yet,
  // perhaps no producer; the destructor closes that half-made re-injector too.
  result<void> r;
  result<void> f;
  if (impl_->consumer) r = impl_->consumer->close();
  if (impl_->producer) f = impl_->producer->flush(clock::now() + impl_->opts.operation_timeout);
  impl_.reset();
  if (!r) return r;
  return f;
}

}  // namespace babelqueue::inline v1::kafka
