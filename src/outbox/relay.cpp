// The outbox relay (relay.hpp): wire-helpers §2.4 (flush) and §2.5 (drain).
#include "core/propagate.hpp"

#include <babelqueue/outbox/error.hpp>
#include <babelqueue/outbox/relay.hpp>

#include <algorithm>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace outbox {
namespace {

constexpr std::size_t default_batch = 100;
constexpr std::size_t default_drain_ceiling = 10000;

// The reason stored on the row: the transport's code name and message (Go stores
// err.Error(); Python "<Type>: <msg>"): e.g. "unavailable: redis: connection refused".
std::string reason_of(const error_info& e) { return std::string(e.reason()) + ": " + e.message; }

// The latest due time a pass fetches: now when the transport cannot hold a message, now +
// max_delay when it holds one that long, every row when it has no limit (store.hpp).
due_time fetch_until(due_time now, const transport_capabilities& caps) {
  if (!caps.delayed_publish) return now;
  if (caps.max_delay.count() <= 0 || caps.max_delay > due_time::max() - now) {
    return due_time::max();
  }
  return now + caps.max_delay;
}

}  // namespace

relay::relay(std::shared_ptr<store> rows, transport& broker, relay_options options)
    : rows_(std::move(rows)), broker_(broker), options_(std::move(options)) {
  if (!rows_) throw_invalid_argument("outbox::relay: the store is null");
  if (options_.batch == 0) options_.batch = default_batch;
  if (options_.backoff_step <= std::chrono::milliseconds::zero())
    options_.backoff_step = std::chrono::milliseconds(50);
  if (options_.backoff_cap <= std::chrono::milliseconds::zero())
    options_.backoff_cap = std::chrono::milliseconds(5000);
  if (!options_.sleeper) {
    options_.sleeper = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
  }
  if (!options_.clock) options_.clock = [] { return std::chrono::system_clock::now(); };
}

result<void> relay::send(const record& row) {
  if (row.deliver_at) {
    // The time left now, rounded up (never early); read per row, so a long pass does not
    // add its own duration to the rows at its end.
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(*row.deliver_at - options_.clock());
    if (left.count() > 0) return broker_.publish_delayed(row.queue, row.body, {}, left);
  }
  return broker_.publish(row.queue, row.body);
}

std::chrono::milliseconds relay::backoff(std::int64_t attempts) const noexcept {
  const std::int64_t step = options_.backoff_step.count();
  const std::int64_t cap = options_.backoff_cap.count();
  // factor = max(1, attempts + 1); compared against cap / step first, so neither the + 1
  // nor the product can overflow for a huge attempts count.
  if (attempts >= cap / step) return options_.backoff_cap;
  const std::int64_t factor = std::max<std::int64_t>(1, attempts + 1);
  return std::chrono::milliseconds(std::min(step * factor, cap));
}

result<flush_result> relay::flush() {
  const auto now = std::chrono::floor<std::chrono::milliseconds>(options_.clock());
  BABELQUEUE_TRY_LET(rows,
                     rows_->fetch_due(options_.batch, fetch_until(now, broker_.capabilities())));
  flush_result out;
  std::vector<std::string> published;
  for (std::size_t i = 0; i < rows->size(); ++i) {
    const record& row = (*rows)[i];
    auto sent = send(row);
    if (sent) {
      published.push_back(row.id);
      continue;
    }
    if (is_transient(sent.error().code)) {
      // The broker is down or slow, not the row: this row and the rest of the pass stay
      // pending untouched (no attempt counted, so an outage never parks a row), the pass
      // ends (its rows' locks go) and the relay backs off by the outage's length.
      out.deferred = rows->size() - i;
      out.outage = sent.error();
      break;
    }
    if (auto marked = rows_->mark_failed(row.id, reason_of(sent.error())); !marked) {
      // Rows published in this pass stay unmarked and go out again: at-least-once.
      return failure{marked.error()};
    }
    ++out.failed;
    options_.sleeper(backoff(row.attempts));
  }
  if (!published.empty() || out.outage) {
    BABELQUEUE_TRY(rows_->mark_published(published));
  }
  out.published = published.size();
  if (out.outage) {
    options_.sleeper(backoff(outages_++));
  } else if (!rows->empty()) {
    outages_ = 0;
  }
  return out;
}

result<flush_result> relay::drain(std::size_t max_passes) {
  if (max_passes == 0) max_passes = default_drain_ceiling;
  flush_result total;
  for (std::size_t pass = 0; pass < max_passes; ++pass) {
    auto one = flush();
    if (!one) return one;
    total.published += one->published;
    total.failed += one->failed;
    total.deferred = one->deferred;
    total.outage = one->outage;
    if (one->published == 0 || one->outage) break;
  }
  return total;
}

}  // namespace outbox
}  // namespace v1
}  // namespace babelqueue
