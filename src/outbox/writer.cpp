// The outbox writer (writer.hpp): encode, pick the queue, turn a delay into a due time,
// save — no transaction control.
#include "core/propagate.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/outbox/error.hpp>
#include <babelqueue/outbox/writer.hpp>

#include <string>
#include <utility>

namespace babelqueue {
inline namespace v1 {
namespace outbox {
namespace {

// How far in the past a deliver_at may be and still mean "now": the caller computed it a
// moment ago, or on a host whose clock is slightly behind. Further back it is a mistake
// (seconds for milliseconds, a stale value), refused rather than published at once.
constexpr std::chrono::milliseconds past_tolerance{1000};
// 9999-12-31T23:59:59.999Z: the stores' columns and any text rendering of them stay
// four-digit years; nothing sane is later.
constexpr due_time latest_due{std::chrono::milliseconds(253402300799999)};

// The due time `when` asks for (nullopt = at once), or why it is refused.
result<std::optional<due_time>> due_of(const write_options& when) {
  using std::chrono::milliseconds;
  if (when.delay.count() < 0) {
    return fail(errc::invalid_argument, "outbox: a delay must be >= 0 (got " +
                                            std::to_string(when.delay.count()) +
                                            " ms); nothing was saved");
  }
  if (when.delay.count() > 0 && when.deliver_at) {
    return fail(errc::invalid_argument,
                "outbox: give a delay or a deliver_at, not both; nothing was saved");
  }
  const due_time now = due_now();
  if (when.deliver_at) {
    // Rounded up: a message is never due before the instant the caller named.
    const auto at = std::chrono::ceil<milliseconds>(*when.deliver_at);
    if (at < now - past_tolerance) {
      return fail(errc::invalid_argument,
                  "outbox: deliver_at is " + std::to_string((now - at).count()) +
                      " ms in the past (more than 1 s: a mistake, not 'at once'); nothing was "
                      "saved");
    }
    if (at > latest_due) {
      return fail(errc::invalid_argument,
                  "outbox: deliver_at is after year 9999; nothing was saved");
    }
    return std::optional<due_time>(at);
  }
  if (when.delay.count() == 0) return std::optional<due_time>();
  if (when.delay > latest_due - now) {
    return fail(errc::invalid_argument, "outbox: a delay of " + std::to_string(when.delay.count()) +
                                            " ms ends after year 9999; nothing was saved");
  }
  return std::optional<due_time>(now + when.delay);
}

}  // namespace

std::string_view queue_of(const envelope& env) noexcept {
  const std::string_view q = env.queue();
  return q.empty() ? std::string_view("default") : q;
}

writer::writer(std::shared_ptr<store> rows) : rows_(std::move(rows)) {
  if (!rows_) throw_invalid_argument("outbox::writer: the store is null");
}

result<std::string> writer::write(const envelope& env) { return write(env, write_options{}); }

result<std::string> writer::write(const envelope& env, const write_options& when) {
  // The time is checked before encoding: a refused time saves nothing and costs nothing.
  BABELQUEUE_TRY_LET(due, due_of(when));
  BABELQUEUE_TRY_LET(body, encode(env));
  if (!*due) return rows_->save(*body, queue_of(env));
  return rows_->save_at(*body, queue_of(env), **due);
}

result<std::string> writer::write_encoded(std::string_view body, std::string_view queue) {
  return write_encoded(body, queue, write_options{});
}

result<std::string> writer::write_encoded(std::string_view body, std::string_view queue,
                                          const write_options& when) {
  if (queue.empty()) return fail(errc::invalid_argument, "outbox: write_encoded needs a queue");
  BABELQUEUE_TRY_LET(due, due_of(when));
  if (!*due) return rows_->save(body, queue);
  return rows_->save_at(body, queue, **due);
}

}  // namespace outbox
}  // namespace v1
}  // namespace babelqueue
