#pragma once
// The redis transport's operations, sans-I/O (operation.hpp): each one writes the commands
// of one transport call and reads its replies; engine::run() does the I/O and the retries.
//
//   publish_op    deferred settles + RPUSH chunks               publish, publish_batch
//   reserve_op    settles + [BLMOVE wait] + reserving script    receive
//                 (untracked: settles + move script + LMOVE/BLMOVE)
//   settle_op     deferred settles                              ack (sync), flush, close
//   release_op    gated release script                          release
//   unreserve_op  prefetched reservations back to the head      receive (other queue), close
//   recover_op    the recover script                            recover
//   length_op     LLEN                                          list_length
//   range_op      LRANGE                                        peek
//
// Deferred acks ride in front of a publish or inside a receive's reserving script: the
// operation takes them from transport_state::pending in compose(), gives them back in undo()
// (their settle is gated, so resending is harmless), and drops them once settled.
//
// Thread-safety: like the transport, one thread at a time.

#include "redis/operation.hpp"
#include "redis/request.hpp"

#include <babelqueue/redis/redis_transport.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::inline v1::redis::detail {

/// One reservation: what the handle of a received message holds (the transport's
/// settlement_owner marks it as that instance's; `settled` says a gated release finished).
struct reservation {
  std::string queue;
  std::string raw;    // the stored value: the LREM/ZREM handle
  std::string token;  // tracking token; empty when reserved untracked
  std::string job;    // laravel=1: the job as popped (`raw` is its :reserved member)
  bool settled = false;
};
using reservation_ptr = std::shared_ptr<reservation>;

/// Indices of the scripts (scripts.hpp) in the set every connection loads.
enum script_index : std::size_t {
  k_settle_reserve = 0,
  k_release = 1,
  k_release_untracked = 2,
  k_recover = 3,
  k_unreserve = 4,
  k_migrate = 5,
  k_schedule = 6,
};
/// The scripts every connection loads, in script_index order.
script_set transport_scripts();

/// Suffix of the owned layout's delayed-publish sorted set, `<queue>:scheduled` (this SDK's
/// extension; redis_transport.hpp, "Delayed publish"). Not `:delayed`: that name holds raw
/// jobs in Laravel's layout, whose migration would push this set's prefixed members.
inline constexpr std::string_view scheduled_suffix = ":scheduled";
/// `<queue>:scheduled`.
std::string scheduled_key(std::string_view queue);

/// The longest single blocking wait of a receive (both layouts): a message that comes due in
/// a delayed set, or that another producer schedules during the wait, pushes nothing a
/// blocked BLMOVE/BLPOP would see, so the wait is cut into slices and every slice ends with a
/// move of the due messages. Also capped at the earliest due time a round reported.
inline constexpr std::chrono::milliseconds k_block_slice{1000};
/// BLMOVE/BLPOP's timeout argument: seconds with millisecond decimals (Redis >= 6); never 0
/// (= forever).
std::string seconds_arg(std::chrono::milliseconds wait);
/// The wait of a blocking attempt: `remaining`, capped at k_block_slice and at `next_due_ms`
/// (the earliest due time a round reported; < 0 = none), at least 1 ms.
std::chrono::milliseconds blocking_wait(std::chrono::milliseconds remaining,
                                        std::int64_t next_due_ms);

/// State of one transport that its operations share: option-derived script arguments, the
/// deferred acks, and scratch space reused from call to call so that the hot paths
/// (receive, ack, publish) allocate nothing of their own.
class transport_state {
 public:
  explicit transport_state(const options& o);

  const options& opts;
  // Script arguments derived from the options once: retry_after in seconds (-1 = +inf) and
  // the number of messages one reservation takes.
  const std::string retry_after_arg;
  const std::string prefetch_arg;
  const std::string batch_arg;  ///< options::migration_batch (due scheduled members per move)

  std::vector<reservation_ptr> pending;  ///< deferred acks, in ack order
  std::int64_t stale_acks = 0;           ///< acks/releases whose reservation was gone

  struct queue_keys {
    std::string queue;
    std::string processing;
    std::string deadlines;
    std::string scheduled;
  };
  /// The processing, deadlines and scheduled keys of `queue` (bindings/redis.hpp), cached for the
  /// last queue asked: valid until the next call with another queue.
  const queue_keys& keys(std::string_view queue);
  /// `out.size()` random lowercase hex digits.
  void random_hex(std::span<char> out);

  // -- used by the operations --
  /// Moves the deferred acks into `taken` (emptied first); both keep their capacity.
  void take_pending();
  /// Puts `taken` back in front of the deferred acks (a round that did not complete).
  void give_back();
  std::vector<reservation_ptr> taken;              // acks the current round carries
  std::vector<const reservation*> ack_scratch;     // settle grouping
  std::vector<const reservation*> merged_scratch;  // acks merged into a reservation
  std::vector<reservation_ptr> got;                // reservations of the current round

 private:
  queue_keys keys_;
  bool keys_valid_ = false;
  std::mt19937_64 rng_;
};

/// Appends the settle commands of the acks in `st.ack_scratch` (consumed), per queue in
/// first-seen order: one settling script call (reserving nothing) for tracked reservations,
/// one LREM per untracked one. Their replies are read by count_stale().
void compose_settles(request& req, script_shas shas, transport_state& st, std::string_view random12,
                     bool report_errors);

/// The acks this round took (transport_state::taken), all of them, as settle candidates in
/// transport_state::ack_scratch.
void all_taken_to_scratch(transport_state& st);

/// Calls `push` with consecutive chunks of `values` in order, each small enough for one
/// variadic RPUSH (at most 1000 values and 8 MiB, and at least one value).
void for_each_push_chunk(std::span<const std::string_view> values,
                         const std::function<void(std::span<const std::string_view>)>& push);

/// Kinds of command_meta shared by the operations.
enum command_kind : std::uint8_t {
  k_settle_tracked = 1,  // count = acks in the script call
  k_settle_untracked,    // one LREM
  k_push,                // RPUSH
  k_wait,                // BLMOVE q q LEFT LEFT t (waits, takes nothing)
  k_reserve_tracked,     // the settle-and-reserve script; count = acks merged into it
  k_reserve_untracked,   // LMOVE / BLMOVE into :processing
  k_single,              // the one command of release/unreserve/recover/LLEN
  k_move_due,            // the untracked receive's move of due scheduled messages
};

/// How many acks of a settle command (or a reserving script) found their reservation gone.
std::int64_t count_stale(const command_meta& cmd, const redisReply& reply);

/// The end of a reserving round, for both layouts: done once something was reserved (a
/// failed settle of another queue does not fail it), on a server error (the acks it carried
/// go back: their outcome is unknown) or when the time is up; else another, waiting, attempt
/// (`first` cleared).
next_step finish_reserving(transport_state& st, std::optional<error_info>& error,
                           clock::time_point deadline, std::chrono::milliseconds remaining,
                           bool& first);
/// The end of a gated release, for both layouts: the reservation is settled either way;
/// `gone` (its gate found nothing) counts a stale ack and leaves `gone_message` as the error.
next_step finish_release(transport_state& st, reservation& r, bool gone,
                         std::optional<error_info>& error, const char* gone_message);
/// Reads a recover script's {moved, stamped, remaining}; false for any other reply.
bool read_recover_report(const redisReply& reply, recover_report& out);

class publish_op final : public operation {
 public:
  publish_op(transport_state& st, std::string_view queue, std::span<const std::string_view> values);
  std::chrono::milliseconds begin_attempt(std::chrono::milliseconds) override;
  void compose(request& req, script_shas shas) override;
  void on_reply(const command_meta& cmd, const redisReply& reply) override;
  void undo() override { st_.give_back(); }
  next_step finish(std::optional<error_info>& error) override;

 private:
  transport_state& st_;
  std::string_view queue_;
  std::span<const std::string_view> values_;
};

class reserve_op final : public operation {
 public:
  reserve_op(transport_state& st, std::string_view queue, clock::time_point deadline);
  std::chrono::milliseconds begin_attempt(std::chrono::milliseconds remaining) override;
  void compose(request& req, script_shas shas) override;
  void on_reply(const command_meta& cmd, const redisReply& reply) override;
  void undo() override { st_.give_back(); }
  next_step finish(std::optional<error_info>& error) override;
  /// The reservations of the finished round (transport_state::got), in queue order.
  std::vector<reservation_ptr>& reserved() { return st_.got; }

 private:
  void add(std::string_view raw, std::string_view token);

  transport_state& st_;
  std::string_view queue_;
  clock::time_point deadline_;
  bool first_ = true;
  bool block_ = false;
  std::chrono::milliseconds remaining_{0};
  std::chrono::milliseconds wait_{0};  // how long the coming BLMOVE waits
  std::int64_t next_due_ms_ = -1;      // the last round's hint: ms until the next one is due
  clock::time_point next_due_at_{};    // when that hint was measured (about)
};

class settle_op final : public operation {
 public:
  explicit settle_op(transport_state& st);
  void compose(request& req, script_shas shas) override;
  void on_reply(const command_meta& cmd, const redisReply& reply) override;
  void undo() override { st_.give_back(); }
  next_step finish(std::optional<error_info>& error) override;

 private:
  transport_state& st_;
};

class release_op final : public operation {
 public:
  release_op(transport_state& st, reservation& r);
  void compose(request& req, script_shas shas) override;
  void on_reply(const command_meta& cmd, const redisReply& reply) override;
  next_step finish(std::optional<error_info>& error) override;

 private:
  transport_state& st_;
  reservation& r_;
  bool gone_ = false;
};

class unreserve_op final : public operation {
 public:
  unreserve_op(transport_state& st, std::deque<reservation_ptr>& prefetched);
  void compose(request& req, script_shas shas) override;
  void on_reply(const command_meta&, const redisReply&) override {}
  next_step finish(std::optional<error_info>& error) override;

 private:
  transport_state& st_;
  std::deque<reservation_ptr>& prefetched_;
};

class recover_op final : public operation {
 public:
  recover_op(transport_state& st, std::string_view queue, std::chrono::milliseconds older_than);
  void compose(request& req, script_shas shas) override;
  void on_reply(const command_meta& cmd, const redisReply& reply) override;
  next_step finish(std::optional<error_info>& error) override;
  recover_report report;

 private:
  transport_state& st_;
  std::string_view queue_;
  std::string older_;
  bool ok_ = false;
};

class length_op final : public operation {
 public:
  explicit length_op(std::string_view key);
  void compose(request& req, script_shas shas) override;
  void on_reply(const command_meta& cmd, const redisReply& reply) override;
  next_step finish(std::optional<error_info>& error) override;
  std::int64_t length = 0;

 private:
  std::string_view key_;
  bool ok_ = false;
};

/// LRANGE key first last: the stored values (frames included) from the head.
class range_op final : public operation {
 public:
  range_op(std::string_view key, std::int64_t first, std::int64_t last);
  void compose(request& req, script_shas shas) override;
  void on_reply(const command_meta& cmd, const redisReply& reply) override;
  next_step finish(std::optional<error_info>& error) override;
  std::vector<std::string> values;

 private:
  std::string_view key_;
  std::string first_, last_;
  bool ok_ = false;
};

}  // namespace babelqueue::inline v1::redis::detail
