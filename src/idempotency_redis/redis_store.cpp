// The idempotency seen-set with claims in Redis (idempotency/redis_store.hpp): a small pool
// of the redis transport's connection engines, one store_operation per call.
#include "core/propagate.hpp"
#include "idempotency_redis/store_operation.hpp"
#include "redis/engine.hpp"
#include "redis/options.hpp"

#include <babelqueue/idempotency/error.hpp>
#include <babelqueue/idempotency/redis_store.hpp>
#include <babelqueue/runtime/url.hpp>
#include <babelqueue/uuid.hpp>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace idempotency {
namespace {

using redis::detail::clock;
using redis::detail::engine;

// An error of the redis connection code (transport_errc) as an idempotency error: bad
// options or refused credentials are the caller's; every other failure is transient.
error_info to_store_error(error_info e) {
  if (&e.code.category() == &category()) return e;
  const bool caller = e.code == condition::invalid_argument ||
                      e.code == make_error_code(transport_errc::permission);
  e.code = make_error_code(caller ? errc::invalid_argument : errc::unavailable);
  e.message = "idempotency redis: " + e.message;
  return e;
}

bool printable_key_prefix(std::string_view p) {
  if (p.empty() || p.size() > 256) return false;
  for (char c : p) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

result<void> check_options(const redis_store_options& o) {
  for (const auto* p : {&o.prefix, &o.claim_prefix}) {
    if (!printable_key_prefix(*p)) {
      return fail(errc::invalid_argument,
                  "idempotency redis: unsafe key prefix '" + *p +
                      "' (want 1..256 bytes of printable ASCII, no spaces)");
    }
  }
  if (o.prefix.starts_with(o.claim_prefix) || o.claim_prefix.starts_with(o.prefix)) {
    return fail(errc::invalid_argument, "idempotency redis: the prefixes '" + o.prefix + "' and '" +
                                            o.claim_prefix +
                                            "' overlap (committed and claim keys would collide)");
  }
  if (o.connections < 1 || o.connections > 64) {
    return fail(errc::invalid_argument, "idempotency redis: connections must be 1..64");
  }
  return {};
}

redis::detail::script_set store_scripts() {
  redis::detail::script_set s;
  s.bodies = {detail::claim_script, detail::release_script};  // detail::script_index order
  return s;
}

}  // namespace

struct redis_store::impl {
  redis::options connection;
  redis_store_options options;
  std::string remember_ttl;  // PX of remember, empty = no expiry

  std::mutex pool_mutex;
  std::condition_variable idle_changed;
  std::vector<std::unique_ptr<engine>> engines;
  std::vector<engine*> idle;

  std::mutex tokens_mutex;
  std::map<std::string, std::string, std::less<>> tokens;  // id → owner token of our claim

  std::atomic<std::int64_t> round_trips{0};
  std::atomic<std::int64_t> reconnects{0};

  // An idle engine, a new one while the pool is below its size, else wait for one.
  engine* take() {
    std::unique_lock lock(pool_mutex);
    for (;;) {
      if (!idle.empty()) {
        engine* e = idle.back();
        idle.pop_back();
        return e;
      }
      if (engines.size() < options.connections) {
        engines.push_back(std::make_unique<engine>(connection, store_scripts()));
        return engines.back().get();
      }
      idle_changed.wait(lock);
    }
  }
  void give_back(engine* e) {
    {
      std::lock_guard lock(pool_mutex);
      idle.push_back(e);
    }
    idle_changed.notify_one();
  }

  // One call: one operation on one pooled connection, bounded by command_timeout.
  result<void> run(detail::store_operation& op) {
    engine* e = take();
    const auto trips = e->round_trips();
    const auto again = e->reconnects();
    auto r = e->run(op, clock::now() + connection.command_timeout);
    round_trips += e->round_trips() - trips;
    reconnects += e->reconnects() - again;
    give_back(e);
    if (!r) return fail(to_store_error(r.error()));
    return {};
  }

  std::string key(std::string_view id) const { return options.prefix + std::string(id); }
  std::string claim_key(std::string_view id) const {
    return options.claim_prefix + std::string(id);
  }
};

redis_store::redis_store(std::unique_ptr<impl> state) : impl_(std::move(state)) {}
redis_store::~redis_store() = default;

result<std::unique_ptr<redis_store>> redis_store::open(std::string_view url,
                                                       redis_store_options options) {
  auto parsed = broker_url::parse(url);
  if (!parsed) return fail(to_store_error(parsed.error()));
  auto connection = redis::options_from_url(*parsed);
  if (!connection) return fail(to_store_error(connection.error()));
  return open(std::move(*connection), std::move(options));
}

result<std::unique_ptr<redis_store>> redis_store::open(redis::options connection,
                                                       redis_store_options options) {
  BABELQUEUE_TRY(check_options(options));
  if (auto r = redis::detail::validate(connection); !r) return fail(to_store_error(r.error()));
  auto state = std::make_unique<impl>();
  state->connection = std::move(connection);
  state->options = std::move(options);
  if (state->options.ttl.count() > 0)
    state->remember_ttl = std::to_string(state->options.ttl.count());
  // Connect once now, so a wrong host, password or db is reported by open().
  auto first = std::make_unique<engine>(state->connection, store_scripts());
  if (auto r = first->connect(clock::now() + state->connection.connect_timeout); !r) {
    return fail(to_store_error(r.error()));
  }
  state->round_trips += first->round_trips();
  state->idle.push_back(first.get());
  state->engines.push_back(std::move(first));
  return std::unique_ptr<redis_store>(new redis_store(std::move(state)));
}

result<bool> redis_store::seen(std::string_view id) {
  const std::string key = impl_->key(id);
  detail::store_operation op(detail::store_operation::k_seen, key, {}, {}, {});
  BABELQUEUE_TRY(impl_->run(op));
  return op.answer() > 0;
}

result<void> redis_store::remember(std::string_view id) {
  const std::string key = impl_->key(id);
  const std::string claim_key = impl_->claim_key(id);
  detail::store_operation op(detail::store_operation::k_remember, key, claim_key, {},
                             impl_->remember_ttl);
  if (auto r = impl_->run(op); !r) return r;
  std::lock_guard lock(impl_->tokens_mutex);
  if (auto it = impl_->tokens.find(id); it != impl_->tokens.end()) impl_->tokens.erase(it);
  return {};
}

result<void> redis_store::forget(std::string_view id) {
  const std::string key = impl_->key(id);
  detail::store_operation op(detail::store_operation::k_forget, key, {}, {}, {});
  return impl_->run(op);
}

result<bool> redis_store::claim(std::string_view id, std::chrono::milliseconds ttl) {
  if (ttl <= std::chrono::milliseconds::zero()) {
    return fail(errc::invalid_argument, "idempotency claim: the ttl must be positive");
  }
  const std::string key = impl_->key(id);
  const std::string claim_key = impl_->claim_key(id);
  const std::string token = uuid_v4();
  const std::string px = std::to_string(ttl.count());
  detail::store_operation op(detail::store_operation::k_claim, key, claim_key, token, px);
  BABELQUEUE_TRY(impl_->run(op));
  if (op.answer() != 1) return false;
  std::lock_guard lock(impl_->tokens_mutex);
  impl_->tokens.insert_or_assign(std::string(id), token);
  return true;
}

result<void> redis_store::release(std::string_view id) {
  std::string token;
  {
    std::lock_guard lock(impl_->tokens_mutex);
    auto it = impl_->tokens.find(id);
    if (it == impl_->tokens.end()) return {};  // not claimed by this instance: nothing to drop
    token = it->second;
  }
  const std::string claim_key = impl_->claim_key(id);
  detail::store_operation op(detail::store_operation::k_release, {}, claim_key, token, {});
  if (auto r = impl_->run(op); !r) return r;
  std::lock_guard lock(impl_->tokens_mutex);
  if (auto it = impl_->tokens.find(id); it != impl_->tokens.end() && it->second == token) {
    impl_->tokens.erase(it);
  }
  return {};
}

redis_store_stats redis_store::stats() const {
  return {impl_->reconnects.load(), impl_->round_trips.load()};
}

}  // namespace idempotency
}  // namespace v1
}  // namespace babelqueue
