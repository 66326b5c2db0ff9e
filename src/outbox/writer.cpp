// The outbox writer (writer.hpp): encode, pick the queue, save — no transaction control.
#include "core/propagate.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/outbox/error.hpp>
#include <babelqueue/outbox/writer.hpp>

#include <utility>

namespace babelqueue {
inline namespace v1 {
namespace outbox {

std::string_view queue_of(const envelope& env) noexcept {
  const std::string_view q = env.queue();
  return q.empty() ? std::string_view("default") : q;
}

writer::writer(std::shared_ptr<store> rows) : rows_(std::move(rows)) {
  if (!rows_) throw_invalid_argument("outbox::writer: the store is null");
}

result<std::string> writer::write(const envelope& env) {
  BABELQUEUE_TRY_LET(body, encode(env));
  return rows_->save(*body, queue_of(env));
}

result<std::string> writer::write_encoded(std::string_view body, std::string_view queue) {
  if (queue.empty()) return fail(errc::invalid_argument, "outbox: write_encoded needs a queue");
  return rows_->save(body, queue);
}

}  // namespace outbox
}  // namespace v1
}  // namespace babelqueue
