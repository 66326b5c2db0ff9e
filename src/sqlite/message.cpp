// Headers column codec: canonical JSON object text, one string value per name.
#include "sqlite/message.hpp"

#include "core/propagate.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>

namespace babelqueue::inline v1::sqlite::detail {

result<std::optional<std::string>> headers_to_json(const headers& hdrs) {
  const headers clean = sanitize_headers(hdrs);
  if (clean.empty()) return std::optional<std::string>();
  json object = json::object();
  for (const auto& [name, value] : clean) object[name] = value;  // map order = sorted
  BABELQUEUE_TRY_LET(text, to_canonical_json(object));
  return std::optional<std::string>(std::move(*text));
}

headers headers_from_json(std::string_view text) {
  headers out;
  // nlohmann's parser with exceptions off: a malformed column yields `discarded`.
  const auto parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return out;
  for (const auto& [name, value] : parsed.items()) {
    if (value.is_string()) out.emplace(name, value.get<std::string>());
  }
  return out;
}

}  // namespace babelqueue::inline v1::sqlite::detail
