// URN convention check (advisory).
#include <babelqueue/urn.hpp>

namespace babelqueue {
inline namespace v1 {
namespace {

bool all_of(std::string_view s, bool (*ok)(char)) {
  for (char c : s)
    if (!ok(c)) return false;
  return true;
}

bool urn_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == ':' || c == '.' || c == '_' ||
         c == '-';
}
bool context_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

}  // namespace

std::string_view to_string(urn_rule rule) noexcept {
  switch (rule) {
    case urn_rule::ok:
      return "ok";
    case urn_rule::empty:
      return "empty";
    case urn_rule::not_ascii_lowercase:
      return "not_ascii_lowercase";
    case urn_rule::bad_prefix:
      return "bad_prefix";
    case urn_rule::bad_context:
      return "bad_context";
    case urn_rule::bad_event:
      return "bad_event";
    case urn_rule::extra_segments:
      return "extra_segments";
    case urn_rule::class_name:
      return "class_name";
  }
  return "ok";
}

urn_verdict check_urn(std::string_view urn) {
  if (urn.empty()) return {urn_rule::empty, "a URN must not be empty"};
  if (urn.find('\\') != std::string_view::npos) {
    return {urn_rule::class_name, "a URN is never a class name (found '\\')"};
  }
  if (!all_of(urn, urn_char)) {
    return {urn_rule::not_ascii_lowercase,
            "a URN uses only lowercase ASCII [a-z0-9:._-]: no spaces, uppercase or unicode"};
  }
  constexpr std::string_view prefix = "urn:babel:";
  if (urn.substr(0, prefix.size()) != prefix) {
    return {urn_rule::bad_prefix, "a URN starts with 'urn:babel:'"};
  }
  std::string_view rest = urn.substr(prefix.size());
  std::size_t colon = rest.find(':');
  if (colon == std::string_view::npos) {
    return {urn_rule::bad_event, "missing ':<event-or-command>' after the bounded context"};
  }
  std::string_view context = rest.substr(0, colon);
  std::string_view event = rest.substr(colon + 1);
  if (context.empty() || !all_of(context, context_char)) {
    return {urn_rule::bad_context, "the bounded context is lowercase [a-z0-9-]+"};
  }
  if (event.find(':') != std::string_view::npos) {
    return {urn_rule::extra_segments, "a URN has exactly four ':'-separated segments"};
  }
  if (event.empty() || event.front() == '.' || event.back() == '.' ||
      event.find("..") != std::string_view::npos) {
    return {urn_rule::bad_event, "the event is lowercase, with non-empty dot-separated parts"};
  }
  return {};
}

}  // namespace v1
}  // namespace babelqueue
