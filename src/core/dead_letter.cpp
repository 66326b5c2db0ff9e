// annotate(), reason spellings, the clock.
#include <babelqueue/dead_letter.hpp>

#include <chrono>

namespace babelqueue {
inline namespace v1 {

std::string_view to_string(dead_letter_reason reason) noexcept {
  switch (reason) {
    case dead_letter_reason::failed:
      return "failed";
    case dead_letter_reason::unknown_urn:
      return "unknown_urn";
    case dead_letter_reason::poison:
      return "poison";
  }
  return "failed";
}

std::optional<dead_letter_reason> parse_dead_letter_reason(std::string_view text) noexcept {
  if (text == "failed") return dead_letter_reason::failed;
  if (text == "unknown_urn") return dead_letter_reason::unknown_urn;
  if (text == "poison") return dead_letter_reason::poison;
  return std::nullopt;
}

std::int64_t unix_millis() noexcept {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

envelope annotate(const envelope& env, dead_letter_reason reason, std::string_view original_queue,
                  std::int64_t attempts, std::optional<std::string_view> error,
                  std::optional<std::string_view> exception) {
  envelope copy = env;
  dead_letter_info info;
  info.reason = std::string(to_string(reason));
  if (error) info.error = std::string(*error);
  if (exception) info.exception = std::string(*exception);
  info.failed_at = unix_millis();
  info.original_queue = std::string(original_queue);
  info.attempts = attempts;
  info.lang = std::string(lang_tag);
  copy.set_dead_letter(info);
  return copy;
}

}  // namespace v1
}  // namespace babelqueue
