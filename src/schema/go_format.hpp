#pragma once
// Text layouts of Go's fmt and encoding/json that bqschema's output is made of, so the
// registry commands print byte-identical lines: `%v` of a decoded JSON value, `%q` of a
// string, `%d`, and json.MarshalIndent.

#include <babelqueue/json.hpp>

#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace schema {
namespace detail {

// fmt `%v` of a float64: shortest round-trip digits, `%e` layout (`1e+06`, `1e-05`) when the
// decimal exponent is < -4 or >= 6, else plain (`0.5`, `123456`).
std::string go_float(double value);
// encoding/json's layout of a float64 (`1e+21`, `1e-7`, `0.000001`).
std::string go_json_number(double value);
// fmt `%v` of a value encoding/json decoded into `any`: numbers as float64, strings raw,
// `<nil>`, `[a b]`, `map[k:v …]` with sorted keys.
std::string go_value(const json& value);
// fmt `%q` (strconv.Quote).
std::string go_quote(std::string_view text);
// encoding/json string literal (HTML-escaping on, as Marshal).
void go_json_string(std::string_view text, std::string& out);

}  // namespace detail
}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
