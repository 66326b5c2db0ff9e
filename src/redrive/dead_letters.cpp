// list_dead_letters(): peek where the transport can, receive-and-release only when asked.
#include "core/propagate.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/redrive/dead_letters.hpp>
#include <babelqueue/runtime/error.hpp>

#include <utility>

namespace babelqueue::inline v1 {
namespace {

result<std::vector<dead_letter_entry>> by_receive(transport& broker, std::string_view queue,
                                                  const dead_letter_list_options& options) {
  std::vector<received_message> taken;
  std::optional<error_info> error;
  while (taken.size() < options.offset + options.limit) {
    auto got = broker.receive(queue, options.receive_timeout);
    if (!got) {
      error = got.error();
      break;
    }
    if (!*got) break;
    taken.push_back(std::move(**got));
  }
  std::vector<dead_letter_entry> out;
  for (std::size_t i = 0; i < taken.size(); ++i) {
    if (i >= options.offset) out.push_back(describe_dead_letter(taken[i].body, taken[i].hdrs));
    if (auto r = broker.release(taken[i]); !r && !error) error = r.error();
  }
  if (error) return fail(*error);
  return out;
}

}  // namespace

dead_letter_entry describe_dead_letter(std::string body, headers hdrs) {
  dead_letter_entry e;
  e.hdrs = std::move(hdrs);
  if (auto env = decode(body)) {
    e.decodable = true;
    e.id = std::string(env->id());
    e.urn = std::string(env->urn());
    e.trace_id = std::string(env->trace_id());
    e.attempts = env->attempts();
    if (auto dl = env->dead_letter()) {
      e.has_dead_letter = true;
      e.reason = dl->reason;
      e.error = dl->error.value_or("");
      e.exception = dl->exception.value_or("");
      e.original_queue = dl->original_queue;
      e.lang = dl->lang;
      e.failed_at = dl->failed_at;
    }
  } else {
    e.decode_error = std::string(env.error().reason()) + ": " + env.error().message;
  }
  e.body = std::move(body);
  return e;
}

result<std::vector<dead_letter_entry>> list_dead_letters(transport& broker, std::string_view queue,
                                                         const dead_letter_list_options& options) {
  if (queue.empty()) return fail(transport_errc::invalid_argument, "empty queue name");
  if (!broker.capabilities().peek) {
    if (options.receive_and_release) return by_receive(broker, queue, options);
    return fail(transport_errc::not_supported,
                std::string(broker.scheme()) +
                    ": this transport cannot list a queue without taking its messages; allow "
                    "receive-and-release (it moves them to the back and may count a delivery)");
  }
  BABELQUEUE_TRY_LET(peeked, broker.peek(queue, options.offset, options.limit));
  std::vector<dead_letter_entry> out;
  out.reserve(peeked->size());
  for (auto& m : *peeked) out.push_back(describe_dead_letter(std::move(m.body), std::move(m.hdrs)));
  return out;
}

}  // namespace babelqueue::inline v1
