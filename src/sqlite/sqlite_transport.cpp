// The sqlite transport: publish = INSERT, receive = reserve the oldest available row in
// one IMMEDIATE transaction, ack = DELETE, release = clear the reservation. See the public
// header for the guarantees and docs/transports/sqlite.md for the schema.
#include "core/propagate.hpp"
#include "sqlite/db.hpp"
#include "sqlite/message.hpp"
#include "sqlite/options.hpp"
#include "sqlite/schema.hpp"

#include <babelqueue/runtime/settlement_handle.hpp>
#include <babelqueue/sqlite/sqlite_transport.hpp>

#include <algorithm>
#include <limits>
#include <thread>
#include <utility>

namespace babelqueue {
inline namespace v1 {
namespace sqlite {

namespace d = sqlite::detail;
using std::chrono::milliseconds;

namespace {

// The reservation token: ids are never reused (AUTOINCREMENT) and every reservation
// increments delivery_count, so (id, delivery_count) names exactly one reservation. A
// consumer whose reservation expired and was taken over no longer matches and cannot
// delete or release the new holder's message.
struct reservation {
  std::int64_t id = 0;
  std::int64_t delivery_count = 0;
};

constexpr milliseconds max_release_delay{std::chrono::hours(24 * 365 * 10)};
// How often receive() may retry at once after losing a race for a row it saw available,
// once its deadline has passed (so that timeout 0 still gets a fair chance).
constexpr int max_late_races = 3;

constexpr std::string_view insert_sql =
    "INSERT INTO bq_messages (queue, body, headers, enqueued_at, available_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5)";
// A read-only look at the head of the queue, so that idle polling never takes the write
// lock (publishers are not slowed by waiting consumers).
constexpr std::string_view next_sql =
    "SELECT available_at FROM bq_messages WHERE queue = ?1 "
    "ORDER BY available_at, id LIMIT 1";
// ?1 queue, ?2 reservation deadline, ?3 now. Reserved rows carry their deadline in
// available_at, so an expired reservation is simply an available row again.
constexpr std::string_view reserve_sql =
    "UPDATE bq_messages SET available_at = ?2, reserved_until = ?2, "
    "delivery_count = delivery_count + 1 "
    "WHERE id = (SELECT id FROM bq_messages WHERE queue = ?1 AND available_at <= ?3 "
    "ORDER BY available_at, id LIMIT 1) "
    "RETURNING id, body, headers, delivery_count";
constexpr std::string_view ack_sql =
    "DELETE FROM bq_messages WHERE id = ?1 AND delivery_count = ?2 "
    "AND reserved_until IS NOT NULL";
constexpr std::string_view release_sql =
    "UPDATE bq_messages SET reserved_until = NULL, available_at = ?3 "
    "WHERE id = ?1 AND delivery_count = ?2 AND reserved_until IS NOT NULL";
// ?1 queue, ?2 now, ?3 limit, ?4 offset: the rows receive() would hand out next, in its order.
constexpr std::string_view peek_sql =
    "SELECT body, headers FROM bq_messages WHERE queue = ?1 AND available_at <= ?2 "
    "ORDER BY available_at, id LIMIT ?3 OFFSET ?4";
constexpr std::string_view stats_sql =
    "SELECT COALESCE(SUM(available_at <= ?2), 0), "
    "COALESCE(SUM(available_at > ?2 AND reserved_until IS NULL), 0), "
    "COALESCE(SUM(available_at > ?2 AND reserved_until IS NOT NULL), 0) "
    "FROM bq_messages WHERE queue = ?1";

// Runs a statement that returns no rows and resets it.
result<void> run(d::statement& st) {
  d::reset_guard guard(st);
  BABELQUEUE_TRY(st.step());
  return {};
}

}  // namespace

struct sqlite_transport::impl {
  d::connection db;
  d::statement begin, commit, rollback;
  d::statement insert, next, reserve, ack, release, stats, peek;
  // Marks the reservations this instance hands out (see settlement_handle.hpp).
  settlement_owner owner{"sqlite"};
  bool closed = false;
  // The queue the last receive() got a message from (see receive()).
  std::string hot_queue;

  result<void> prepare_all() {
    const std::pair<d::statement*, std::string_view> all[] = {{&begin, "BEGIN IMMEDIATE"},
                                                              {&commit, "COMMIT"},
                                                              {&rollback, "ROLLBACK"},
                                                              {&insert, insert_sql},
                                                              {&next, next_sql},
                                                              {&reserve, reserve_sql},
                                                              {&ack, ack_sql},
                                                              {&release, release_sql},
                                                              {&stats, stats_sql},
                                                              {&peek, peek_sql}};
    for (const auto& [slot, sql] : all) {
      BABELQUEUE_TRY_LET(st, db.prepare(sql));
      *slot = std::move(*st);
    }
    return {};
  }

  // BEGIN IMMEDIATE takes the write lock up front (waiting at most busy_timeout), so the
  // SELECT-then-UPDATE inside can never be interleaved with another writer.
  result<void> begin_tx() { return run(begin); }
  result<void> commit_tx() {
    if (auto r = run(commit); !r) {
      (void)run(rollback);
      return r;
    }
    return {};
  }
  void rollback_tx() { (void)run(rollback); }

  // `available_at` > `now` is a delayed publish: the row is stored at once and skipped by
  // receive() and peek() until then.
  result<void> insert_one(std::string_view queue, std::string_view body, const headers& hdrs,
                          std::int64_t now, std::int64_t available_at) {
    BABELQUEUE_TRY_LET(hjson, d::headers_to_json(hdrs));
    insert.bind_text(1, queue);
    insert.bind_blob(2, body);
    if (*hjson) {
      insert.bind_text(3, **hjson);
    } else {
      insert.bind_null(3);
    }
    insert.bind(4, now);
    insert.bind(5, available_at);
    return run(insert);
  }

  result<std::optional<std::int64_t>> head(std::string_view queue) {
    d::reset_guard guard(next);
    next.bind_text(1, queue);
    BABELQUEUE_TRY_LET(row, next.step());
    if (!*row) return std::optional<std::int64_t>();
    return std::optional<std::int64_t>(next.column_int(0));
  }

  // Inside a transaction: reserve one row or report that none is available.
  result<std::optional<received_message>> reserve_in_tx(std::string_view queue, std::int64_t now,
                                                        std::int64_t until) {
    d::reset_guard guard(reserve);
    reserve.bind_text(1, queue);
    reserve.bind(2, until);
    reserve.bind(3, now);
    BABELQUEUE_TRY_LET(row, reserve.step());
    if (!*row) return std::optional<received_message>();
    const reservation token{reserve.column_int(0), reserve.column_int(3)};
    received_message m;
    m.body = reserve.column_bytes(1);
    if (!reserve.column_is_null(2)) m.hdrs = d::headers_from_json(reserve.column_bytes(2));
    m.queue = std::string(queue);
    m.delivery_count = token.delivery_count;
    m.handle = owner.issue(token);
    // A RETURNING statement must run to completion before COMMIT.
    BABELQUEUE_TRY(reserve.step());
    return std::optional<received_message>(std::move(m));
  }

  result<std::optional<received_message>> try_reserve(std::string_view queue, std::int64_t now,
                                                      std::int64_t until) {
    BABELQUEUE_TRY(begin_tx());
    auto got = reserve_in_tx(queue, now, until);
    if (!got) {
      rollback_tx();
      return got;
    }
    BABELQUEUE_TRY(commit_tx());
    if (!*got) {
      hot_queue.clear();
    } else {
      hot_queue = std::string(queue);
    }
    return got;
  }

  // Runs ack/release for a reservation this instance handed out and has not settled; a
  // miss means another consumer took the row over.
  result<void> settle(d::statement& st, const received_message& m,
                      std::optional<std::int64_t> available_at) {
    BABELQUEUE_TRY_LET(token, owner.claim<reservation>(m));
    st.bind(1, (*token)->id);
    st.bind(2, (*token)->delivery_count);
    if (available_at) st.bind(3, *available_at);
    if (auto r = run(st); !r) return r;  // a transient failure keeps the handle usable
    token->settle();
    if (db.changes() == 0) {
      return fail(transport_errc::invalid_argument,
                  "sqlite: reservation of message " + std::to_string((*token)->id) +
                      " was lost (its visibility timeout expired and it was delivered again, "
                      "or it was settled elsewhere)");
    }
    return {};
  }

  void shutdown() noexcept {
    closed = true;
    // Statements first: they hold references into the connection.
    for (d::statement* st :
         {&begin, &commit, &rollback, &insert, &next, &reserve, &ack, &release, &stats}) {
      *st = d::statement();
    }
    db.close();
  }
};

namespace {

result<void> check_queue(const sqlite_transport::impl& p, std::string_view queue) {
  if (p.closed) return fail(transport_errc::closed, "sqlite transport is closed");
  if (queue.empty()) return fail(transport_errc::invalid_argument, "sqlite: empty queue name");
  return {};
}

}  // namespace

sqlite_transport::sqlite_transport(options opts, std::unique_ptr<impl> p)
    : opts_(std::move(opts)), impl_(std::move(p)) {}

sqlite_transport::~sqlite_transport() {
  if (impl_) impl_->shutdown();
}

result<std::unique_ptr<sqlite_transport>> sqlite_transport::open(options opts) {
  BABELQUEUE_TRY(d::validate(opts));
  BABELQUEUE_TRY_LET(db, d::connection::open(opts.path, opts.create));
  auto p = std::make_unique<impl>();
  p->db = std::move(*db);
  BABELQUEUE_TRY(d::prepare_database(p->db, opts));
  BABELQUEUE_TRY(p->prepare_all());
  return std::unique_ptr<sqlite_transport>(new sqlite_transport(std::move(opts), std::move(p)));
}

result<void> sqlite_transport::publish(std::string_view queue, std::string_view body,
                                       const headers& hdrs) {
  if (auto r = check_queue(*impl_, queue); !r) return r;
  // One autocommit INSERT: it returns after its transaction committed.
  const std::int64_t now = d::wall_ms();
  return impl_->insert_one(queue, body, hdrs, now, now);
}

result<void> sqlite_transport::publish_later(std::string_view queue, std::string_view body,
                                             const headers& hdrs, milliseconds delay) {
  if (auto r = check_queue(*impl_, queue); !r) return r;
  const std::int64_t now = d::wall_ms();
  return impl_->insert_one(queue, body, hdrs, now, now + delay.count());
}

result<void> sqlite_transport::publish_batch(std::string_view queue,
                                             std::span<const outgoing_message> messages) {
  if (auto r = check_queue(*impl_, queue); !r) return r;
  if (messages.empty()) return {};
  if (auto r = impl_->begin_tx(); !r) return r;
  const std::int64_t now = d::wall_ms();
  for (const auto& m : messages) {
    if (auto r = impl_->insert_one(queue, m.body, m.hdrs, now, now); !r) {
      impl_->rollback_tx();
      return r;
    }
  }
  return impl_->commit_tx();
}

result<std::optional<received_message>> sqlite_transport::receive(std::string_view queue,
                                                                  milliseconds timeout) {
  BABELQUEUE_TRY(check_queue(*impl_, queue));
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::max(timeout, milliseconds(0));
  milliseconds backoff(1);
  int late_races = 0;
  // Right after a successful receive from the same queue, the next row is most likely
  // there too: reserve at once and skip the read-only look (one statement fewer).
  if (impl_->hot_queue == queue) {
    const std::int64_t now = d::wall_ms();
    auto got = impl_->try_reserve(queue, now, now + opts_.visibility_timeout.count());
    if (!got || *got) return got;
    impl_->hot_queue.clear();
  }
  for (;;) {
    const std::int64_t now = d::wall_ms();
    auto head = impl_->head(queue);
    if (!head) return fail(head.error());
    if (*head && **head <= now) {
      auto got = impl_->try_reserve(queue, now, now + opts_.visibility_timeout.count());
      if (!got || *got) return got;
      // Another consumer reserved the row between our look and our reserve: look again
      // at once (that consumer made progress, so this cannot spin on its own).
      if (clock::now() < deadline || ++late_races <= max_late_races) continue;
      return std::optional<received_message>();
    }
    // Rounded up: a truncated sub-millisecond remainder would return before the deadline.
    const auto left = std::chrono::ceil<milliseconds>(deadline - clock::now());
    if (left.count() <= 0) return std::optional<received_message>();
    milliseconds nap = std::min(backoff, left);
    if (*head) nap = std::min(nap, milliseconds(**head - now));  // a delayed row falls due
    std::this_thread::sleep_for(std::max(nap, milliseconds(1)));
    backoff = std::min(backoff * 2, opts_.poll_interval);
  }
}

result<std::vector<peeked_message>> sqlite_transport::peek(std::string_view queue,
                                                           std::size_t offset, std::size_t limit) {
  BABELQUEUE_TRY(check_queue(*impl_, queue));
  std::vector<peeked_message> out;
  if (limit == 0) return out;
  constexpr auto max_int = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
  auto& st = impl_->peek;
  d::reset_guard guard(st);
  st.bind_text(1, queue);
  st.bind(2, d::wall_ms());
  st.bind(3, static_cast<std::int64_t>(std::min(limit, max_int)));
  st.bind(4, static_cast<std::int64_t>(std::min(offset, max_int)));
  for (;;) {
    BABELQUEUE_TRY_LET(row, st.step());
    if (!*row) break;
    peeked_message m;
    m.body = st.column_bytes(0);
    if (!st.column_is_null(1)) m.hdrs = d::headers_from_json(st.column_bytes(1));
    out.push_back(std::move(m));
  }
  return out;
}

result<void> sqlite_transport::ack(const received_message& message) {
  if (impl_->closed) return fail(transport_errc::closed, "sqlite transport is closed");
  return impl_->settle(impl_->ack, message, std::nullopt);
}

result<void> sqlite_transport::release(const received_message& message, milliseconds delay) {
  if (impl_->closed) return fail(transport_errc::closed, "sqlite transport is closed");
  if (delay.count() < 0 || delay > max_release_delay) {
    return fail(transport_errc::invalid_argument, "sqlite: release delay must be within 0.." +
                                                      std::to_string(max_release_delay.count()) +
                                                      "ms, got " + std::to_string(delay.count()) +
                                                      "ms");
  }
  return impl_->settle(impl_->release, message, d::wall_ms() + delay.count());
}

result<void> sqlite_transport::close(std::chrono::steady_clock::time_point deadline) {
  // Nothing is buffered (every publish committed before returning) and unsettled rows
  // come back by themselves after their visibility timeout, so closing never waits.
  (void)deadline;
  impl_->shutdown();
  return {};
}

result<queue_stats> sqlite_transport::stats(std::string_view queue) {
  BABELQUEUE_TRY(check_queue(*impl_, queue));
  d::statement& st = impl_->stats;
  d::reset_guard guard(st);
  st.bind_text(1, queue);
  st.bind(2, d::wall_ms());
  BABELQUEUE_TRY_LET(row, st.step());
  queue_stats s;
  if (*row) {
    s.ready = st.column_int(0);
    s.delayed = st.column_int(1);
    s.in_flight = st.column_int(2);
  }
  return s;
}

void register_transport() {
  ::babelqueue::register_transport(
      "sqlite", [](const broker_url& url) -> result<std::unique_ptr<transport>> {
        BABELQUEUE_TRY_LET(opts, options_from_url(url));
        BABELQUEUE_TRY_LET(t, sqlite_transport::open(std::move(*opts)));
        return std::unique_ptr<transport>(std::move(*t));
      });
}

}  // namespace sqlite
}  // namespace v1
}  // namespace babelqueue
