// Fuzz target: payload schemas (babelqueue::schema): parse a schema document, validate an
// instance against it, run the compat lint.
//
// Input: `<schema text> NUL <instance text>`; without a NUL byte the whole input is the
// schema and the schema's own JSON value is the instance (so plain schema files, e.g. the
// conformance suite's, are seeds as they are).
//
// Invariants:
//  - document::parse() never crashes or throws; a refusal carries malformed_json,
//    invalid_argument (not an object, nested deeper than max_depth), number_out_of_range or
//    invalid_utf8; a schema nested deeper than max_depth is refused (so the validator's
//    recursion is bounded by max_depth, whatever the instance);
//  - validate() is deterministic, report::ok() agrees with violations() and first(), the
//    violations are sorted by text(), and every violation has a reason, a `<root>`-or-path
//    reason_path and a JSON Pointer;
//  - a document rebuilt from raw() validates identically;
//  - a schema is backward compatible with itself (breaking_changes(s, s) is empty); the lint
//    between two arbitrary schemas never crashes.
#include "fuzz_check.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/error.hpp>
#include <babelqueue/schema/compat.hpp>
#include <babelqueue/schema/document.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace {

namespace bq = babelqueue;

// Nesting of a JSON value (a scalar is 0, `{}` is 1), without recursion.
std::size_t depth_of(const bq::json& value) {
  std::vector<std::pair<const bq::json*, std::size_t>> stack{{&value, 0}};
  std::size_t deepest = 0;
  while (!stack.empty()) {
    auto [v, d] = stack.back();
    stack.pop_back();
    if (!v->is_structured()) continue;
    deepest = std::max(deepest, d + 1);
    for (const auto& child : *v) stack.emplace_back(&child, d + 1);
  }
  return deepest;
}

void check_report(const bq::schema::report& r) {
  const auto& v = r.violations();
  FUZZ_CHECK(r.ok() == v.empty(), "ok() disagrees with violations()");
  FUZZ_CHECK((r.first() == nullptr) == v.empty(), "first() disagrees with violations()");
  FUZZ_CHECK(std::is_sorted(v.begin(), v.end(),
                            [](const auto& a, const auto& b) { return a.text() < b.text(); }),
             "violations() not sorted by text()");
  for (const auto& one : v) {
    FUZZ_CHECK(!one.reason.empty() && !one.message.empty(), "violation without reason/message");
    FUZZ_CHECK(!one.reason_path.empty(), "violation without reason_path");
    FUZZ_CHECK(one.pointer.empty() || one.pointer.front() == '/', "pointer is not RFC 6901");
  }
  if (r.first() != nullptr) {
    FUZZ_CHECK(std::find(v.begin(), v.end(), *r.first()) != v.end(),
               "first() is not one of violations()");
  }
  FUZZ_CHECK(r.summary().empty() == v.empty(), "summary() disagrees with violations()");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(bytes), size);
  const auto nul = input.find('\0');
  const std::string_view schema_text = input.substr(0, nul);
  const bool split = nul != std::string_view::npos;

  const bq::schema::parse_options options;  // the defaults, as the runtime loads schemas
  auto doc = bq::schema::document::parse(schema_text, options);
  if (!doc) {
    const auto code = doc.code();
    FUZZ_CHECK(code == bq::errc::malformed_json || code == bq::schema::errc::invalid_schema ||
                   code == bq::errc::number_out_of_range || code == bq::errc::invalid_utf8,
               "unexpected schema error code");
    FUZZ_CHECK(!doc.error().message.empty(), "schema error without a message");
    return 0;
  }
  FUZZ_CHECK(doc->raw().is_object(), "a schema must be an object");
  FUZZ_CHECK(depth_of(doc->raw()) <= options.max_depth, "a schema deeper than max_depth loaded");

  bq::result<bq::json> instance =
      split ? bq::parse_json(input.substr(nul + 1)) : bq::result<bq::json>(doc->raw());
  if (instance) {
    const auto first = doc->validate(*instance);
    check_report(first);
    const auto second = doc->validate(*instance);
    FUZZ_CHECK(first.violations() == second.violations(), "validate() is not deterministic");

    auto rebuilt = bq::schema::document::from_json(doc->raw(), options);
    FUZZ_CHECK(rebuilt.has_value(), "raw() of a parsed schema must load again");
    FUZZ_CHECK(rebuilt->validate(*instance).violations() == first.violations(),
               "a schema rebuilt from raw() validates differently");
  }

  FUZZ_CHECK(bq::schema::breaking_changes(*doc, *doc).empty(),
             "a schema is not compatible with itself");
  if (split && instance && instance->is_object()) {
    if (auto other = bq::schema::document::from_json(*instance, options)) {
      (void)bq::schema::breaking_changes(*doc, *other);
      (void)bq::schema::breaking_changes(*other, *doc);
    }
  }
  return 0;
}
