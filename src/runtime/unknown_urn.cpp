#include <babelqueue/runtime/unknown_urn.hpp>

namespace babelqueue {
inline namespace v1 {

std::string_view to_string(unknown_urn_strategy strategy) noexcept {
  switch (strategy) {
    case unknown_urn_strategy::fail:
      return "fail";
    case unknown_urn_strategy::del:
      return "delete";
    case unknown_urn_strategy::release:
      return "release";
    case unknown_urn_strategy::dead_letter:
      return "dead_letter";
  }
  return "fail";
}

std::optional<unknown_urn_strategy> parse_unknown_urn_strategy(std::string_view text) noexcept {
  if (text == "fail") return unknown_urn_strategy::fail;
  if (text == "delete") return unknown_urn_strategy::del;
  if (text == "release") return unknown_urn_strategy::release;
  if (text == "dead_letter" || text == "dead-letter") return unknown_urn_strategy::dead_letter;
  return std::nullopt;
}

}  // namespace v1
}  // namespace babelqueue
