// The app runtime: construction, routes, publish, consume, drain, stop (app.hpp).
#include "core/propagate.hpp"
#include "runtime/publish_delay.hpp"
#include "runtime/worker.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/runtime/app.hpp>
#include <babelqueue/runtime/url.hpp>
#include <babelqueue/text.hpp>

#include <algorithm>
#include <functional>
#include <optional>
#include <thread>

namespace babelqueue {
inline namespace v1 {
namespace {

result<void> validate(const app_options& o) {
  if (o.queue.empty()) return fail(runtime_errc::invalid_argument, "app_options.queue is empty");
  if (o.workers == 0)
    return fail(runtime_errc::invalid_argument, "app_options.workers must be >= 1");
  if (o.poll_timeout.count() < 0 || o.close_timeout.count() < 0 ||
      o.unknown_urn_release_delay.count() < 0) {
    return fail(runtime_errc::invalid_argument, "app_options durations must not be negative");
  }
  BABELQUEUE_TRY(o.retry.validate());
  if (o.dead_letter_queue.empty() && o.dead_letter_suffix.empty()) {
    return fail(runtime_errc::invalid_argument,
                "app_options: an empty dead_letter_suffix without a dead_letter_queue would "
                "dead-letter onto the consumed queue itself");
  }
  return {};
}

transport_source url_source(std::string_view url) {
  return [u = std::string(url)]() { return open_transport(u); };
}

}  // namespace

app::app(std::string_view url, app_options options) : app(url_source(url), std::move(options)) {}

app::app(transport_source source, app_options options)
    : options_(std::move(options)),
      observer_hub_(std::make_unique<const detail::observer_hub>(options_.observers)),
      observers_(*observer_hub_),
      source_(std::move(source)) {
  validate(options_).value();
  if (!source_) throw error(error_info{runtime_errc::invalid_argument, "no transport source"});
  auto t = source_();
  if (!t) throw error(t.error());
  publisher_ = std::move(*t);
  publisher_headers_ = publisher_->capabilities().headers;
  // Once per app: every transport it opens is made from the same source (URL, options).
  for (const auto& warning : publisher_->security_warnings()) {
    observers_.log(log_level::warn, {}, [&] { return warning; });
  }
}

result<std::unique_ptr<app>> app::open(std::string_view url, app_options options) {
  BABELQUEUE_TRY(validate(options));
  try {
    return std::make_unique<app>(url, std::move(options));
  } catch (const error& e) {
    return fail(e.info());
  }
}

app::~app() {
  stop();
  std::lock_guard lock(publisher_mutex_);
  if (publisher_) {
    (void)publisher_->close(std::chrono::steady_clock::now() + options_.close_timeout);
  }
}

void app::handle(const std::string& urn, handler fn) {
  // Producer side (D3a): the programmer's string is trimmed of ASCII white space; a received
  // URN never is, so a padded one on the wire matches no route.
  std::string key(trim_ascii(urn));
  if (key.empty()) throw error(error_info{errc::empty_urn, "handle() needs a non-blank URN"});
  auto shared = std::make_shared<const handler>(std::move(fn));
  std::unique_lock lock(routes_mutex_);
  routes_[std::move(key)] = std::move(shared);
}

void app::handle_unmatched(handler fn) {
  std::shared_ptr<const handler> shared;
  if (fn) shared = std::make_shared<const handler>(std::move(fn));
  std::unique_lock lock(routes_mutex_);
  unmatched_ = std::move(shared);
}

std::shared_ptr<const handler> app::find_handler(std::string_view urn) const {
  std::shared_lock lock(routes_mutex_);
  auto it = routes_.find(urn);
  if (it == routes_.end() || !*it->second) return unmatched_;
  return it->second;
}

std::string app::dead_letter_queue_for(std::string_view consumed_queue) const {
  if (!options_.dead_letter_queue.empty()) return options_.dead_letter_queue;
  return std::string(consumed_queue) + options_.dead_letter_suffix;
}

namespace {

// The fresh envelope of app::publish(urn, data, options): meta.queue is the target queue.
template <class Data>
result<envelope> make_for(const app_options& defaults, std::string_view urn, const Data& data,
                          const publish_options& options) {
  make_options mo;
  mo.queue = options.queue.empty() ? defaults.queue : options.queue;
  mo.trace_id = options.trace_id;
  return make(urn, data, mo);
}

}  // namespace

// A fresh envelope goes through publish_fresh(): when the caller gave no trace_id, an
// observer may choose it (publish_info::adoptable_trace_id), and the envelope is made again
// with that trace. publish(env, options) sends to options.queue, else env.queue().
result<std::string> app::publish(std::string_view urn, const json& data,
                                 const publish_options& options) {
  return publish_fresh(options,
                       [&](const publish_options& o) { return make_for(options_, urn, data, o); });
}

result<std::string> app::publish(std::string_view urn, json_text data,
                                 const publish_options& options) {
  return publish_fresh(options,
                       [&](const publish_options& o) { return make_for(options_, urn, data, o); });
}

result<std::string> app::publish_fresh(
    const publish_options& options,
    const std::function<result<envelope>(const publish_options&)>& make_env) {
  BABELQUEUE_TRY(detail::publish_delay(options.delay, options.deliver_at));  // before make()
  BABELQUEUE_TRY_LET(env, make_env(options));
  envelope_publish_options eo{options.queue, options.hdrs, options.delay, options.deliver_at};
  if (observers_.empty() || !is_blank(options.trace_id)) {
    return publish_encoded(*env, eo, nullptr);
  }
  return publish_encoded(*env, eo, [&](const std::string& trace_id) -> result<envelope> {
    publish_options again = options;
    again.trace_id = trace_id;
    return make_env(again);
  });
}

result<std::string> app::publish(const envelope& env, const envelope_publish_options& options) {
  return publish_encoded(env, options, nullptr);
}

result<std::string> app::publish_encoded(
    const envelope& env, const envelope_publish_options& options,
    const std::function<result<envelope>(const std::string&)>& remake) {
  std::string queue = options.queue;
  if (queue.empty()) queue = env.queue().empty() ? options_.queue : std::string(env.queue());
  BABELQUEUE_TRY_LET(delay, detail::publish_delay(options.delay, options.deliver_at));
  BABELQUEUE_TRY_LET(encoded, encode(env));
  std::string body = std::move(*encoded);
  const envelope* sent_env = &env;
  std::optional<envelope> adopted;  // the envelope made again with an observer's trace_id
  std::optional<detail::trace_adoption> adoption;
  if (remake) {
    adoption.emplace();
    adoption->rebuild =
        [&](const std::string& trace_id) -> result<detail::trace_adoption::rebuilt> {
      BABELQUEUE_TRY_LET(again, remake(trace_id));
      BABELQUEUE_TRY_LET(again_body, encode(*again));
      adopted = std::move(*again);
      body = std::move(*again_body);
      sent_env = &*adopted;
      return detail::trace_adoption::rebuilt{sent_env, body};
    };
  }
  // The span hooks run outside the publisher lock (publishing threads do not wait on
  // each other's observers).
  auto r = detail::observed_publish(
      observers_, publish_kind::app, queue, &env, body, options.hdrs, publisher_headers_, nullptr,
      [&](const headers& sent) -> result<void> {
        std::lock_guard lock(publisher_mutex_);
        if (!publisher_) {
          BABELQUEUE_TRY_LET(t, source_());
          publisher_ = std::move(*t);
        }
        auto sent_r = publisher_->publish_delayed(queue, body, sent, *delay);
        if (!sent_r && sent_r.code() == transport_errc::closed)
          publisher_.reset();  // reopen next time
        return sent_r;
      },
      adoption ? &*adoption : nullptr);
  if (!r) return fail(r.error());
  if (!observers_.empty()) observers_.each([&](observer& o) { o.on_published(queue); });
  return std::string(sent_env->id());
}

void app::stop() noexcept {
  {
    // The mutex pairs with wait_unless_stopped() so a sleeping worker cannot miss it.
    std::lock_guard lock(stop_mutex_);
    stop_.store(true, std::memory_order_release);
  }
  stop_cv_.notify_all();
}

bool app::wait_unless_stopped(std::chrono::milliseconds d) {
  std::unique_lock lock(stop_mutex_);
  return !stop_cv_.wait_for(lock, d, [this] { return stop_.load(std::memory_order_acquire); });
}

result<void> app::consume(std::vector<std::string> queues) {
  if (consuming_.exchange(true)) {
    return fail(runtime_errc::already_running, "consume() is already running on this app");
  }
  struct reset_flag {
    std::atomic<bool>& f;
    ~reset_flag() { f.store(false); }
  } guard{consuming_};

  if (queues.empty()) queues.push_back(options_.queue);
  for (const auto& q : queues) {
    if (q.empty()) return fail(runtime_errc::invalid_argument, "consume(): empty queue name");
  }
  if (stop_requested()) return {};

  // Open every transport first, so a bad URL or an unreachable broker fails fast.
  std::vector<std::unique_ptr<worker>> workers;
  std::vector<std::string> worker_queue;
  for (const auto& q : queues) {
    for (unsigned i = 0; i < options_.workers; ++i) {
      auto t = source_();
      if (!t) {
        for (auto& w : workers) w->close();
        return fail(t.error());
      }
      workers.push_back(std::make_unique<worker>(*this, std::move(*t)));
      worker_queue.push_back(q);
    }
  }
  observers_.log(log_level::info, {}, [&] {
    return "consuming " + std::to_string(queues.size()) + " queue(s) with " +
           std::to_string(options_.workers) + " worker(s) each";
  });

  auto loop = [this](worker& w, const std::string& queue) {
    using namespace std::chrono_literals;
    std::chrono::milliseconds backoff = 50ms;
    while (!stop_requested()) {
      auto got = w.poll_once(queue);
      if (got) {
        backoff = 50ms;
        continue;
      }
      observers_.log(log_level::error, detail::log_context::of_queue(queue, &got.error()), [&] {
        return "receive failed (" + std::string(got.error().reason()) + ": " + got.error().message +
               "); retrying in " + std::to_string(backoff.count()) + " ms";
      });
      if (!wait_unless_stopped(backoff)) break;
      backoff = std::min<std::chrono::milliseconds>(backoff * 2, 5000ms);
      if (got.code() == transport_errc::closed) {
        if (auto r = w.reopen(); !r) {
          observers_.log(log_level::error, detail::log_context::of_queue(queue, &r.error()),
                         [&] { return "reopening the transport failed: " + r.error().message; });
        }
      }
    }
  };

  std::vector<std::thread> threads;
  threads.reserve(workers.size());
  try {
    for (std::size_t i = 0; i < workers.size(); ++i) {
      threads.emplace_back(loop, std::ref(*workers[i]), std::cref(worker_queue[i]));
    }
  } catch (...) {
    stop();  // could not start a thread: stop those that run, then report
    for (auto& t : threads) t.join();
    for (auto& w : workers) w->close();
    return fail(runtime_errc::resource_exhausted, "could not start worker threads");
  }
  for (auto& t : threads) t.join();
  for (auto& w : workers) w->close();
  observers_.log(log_level::info, {}, [] { return std::string("consume stopped"); });
  return {};
}

result<std::size_t> app::drain(std::string_view queue, std::size_t max) {
  const std::string q = queue.empty() ? options_.queue : std::string(queue);
  BABELQUEUE_TRY_LET(t, source_());
  worker w(*this, std::move(*t));
  w.enable_drain_guard();
  std::size_t count = 0;
  while (!stop_requested() && (max == 0 || count < max)) {
    auto got = w.poll_once(q);
    if (!got) {
      w.close();
      return fail(got.error());
    }
    if (!*got) {
      if (w.retry_pending()) continue;  // a backed-off retry of this drain is not due yet
      break;
    }
    ++count;
  }
  w.close();
  return count;
}

}  // namespace v1
}  // namespace babelqueue
