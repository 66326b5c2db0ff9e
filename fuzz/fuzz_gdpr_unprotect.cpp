// Fuzz target: GDPR field encryption (babelqueue::gdpr) with a fixed key and a small fixed
// schema that marks a string, a nested field, an array-element field, a whole object and
// nested-array elements.
//
// The input is used twice:
//  1. as attacker-controlled ciphertext: placed (as a string, any bytes) in every marked
//     field and unprotect()ed with the AES-GCM cipher in both frame layouts and with a
//     base64-only cipher (no authentication, so the fuzzer reaches the plaintext parser);
//  2. when it parses as JSON, as the `data` object itself: unprotect()ed as received, and
//     protect()ed then unprotect()ed again.
// Plus: when it parses as a JSON object it is also read as a schema (field_plan::build,
// sensitive_paths).
//
// Invariants:
//  - unprotect() never crashes or throws; a failure is a decrypt code (is_decrypt_error)
//    naming a data path (invalid_argument for a non-object), and leaves `data` exactly as
//    it was (all-or-nothing);
//  - aes_gcm_cipher::decrypt() fails only with malformed_ciphertext or decrypt_failed;
//    base64_decode() output re-encodes to text of the same length that decodes to it again;
//  - protect() of a JSON object succeeds, leaves every marked field present as a string, and
//    unprotect() with the same cipher restores the exact value (x == unprotect(protect(x)));
//    with the other frame layout or another key it fails with decrypt_failed, data intact;
//    protect() of a non-object is invalid_argument (null: a no-op), data intact;
//  - field_plan::build() either succeeds or fails with invalid_schema at a schema pointer,
//    and every planned path is one sensitive_paths() lists.
#include "fuzz_check.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/gdpr/aes_gcm_cipher.hpp>
#include <babelqueue/gdpr/cipher.hpp>
#include <babelqueue/gdpr/protect.hpp>
#include <babelqueue/gdpr/sensitive_paths.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

namespace bq = babelqueue;
namespace gdpr = babelqueue::gdpr;
using bq::json;

constexpr std::string_view key = "0123456789abcdef0123456789abcdef";  // AES-256
constexpr std::string_view other_key = "fedcba9876543210fedcba9876543210";

constexpr std::string_view schema_text = R"({
  "type": "object",
  "properties": {
    "email": {"type": "string", "x-gdpr-sensitive": true},
    "profile": {"type": "object", "properties": {
      "full_name": {"type": "string", "x-gdpr-sensitive": "name"},
      "age": {"type": "integer"}}},
    "addresses": {"type": "array", "items": {"type": "object", "properties": {
      "line": {"x-gdpr-sensitive": "address"}, "city": {"type": "string"}}}},
    "card": {"type": "object", "x-gdpr-sensitive": "payment",
             "properties": {"pan": {"x-gdpr-sensitive": true}}},
    "matrix": {"type": "array", "items": {"type": "array", "items": {"x-gdpr-sensitive": true}}},
    "note": {"type": "string"}
  }
})";

struct fixture {
  gdpr::field_plan plan;
  gdpr::aes_gcm_cipher aes;
  gdpr::aes_gcm_cipher aes_php;
  gdpr::aes_gcm_cipher aes_other_key;
  gdpr::function_cipher base64;  // no authentication: decrypt = base64 decode
};

const fixture& fixed() {
  static const fixture f = [] {
    auto schema = bq::parse_json(schema_text);
    FUZZ_CHECK(schema.has_value(), "the fixed schema must parse");
    auto plan = gdpr::field_plan::build(*schema);
    FUZZ_CHECK(plan.has_value() && plan->fields().size() == 5, "the fixed plan must build");
    return fixture{*plan, *gdpr::aes_gcm_cipher::create(key),
                   *gdpr::aes_gcm_cipher::create(key, gdpr::frame_layout::php),
                   *gdpr::aes_gcm_cipher::create(other_key),
                   gdpr::function_cipher(
                       [](std::string_view plain) -> babelqueue::result<std::string> {
                         return gdpr::base64_encode(plain);
                       },
                       [](std::string_view text) { return gdpr::base64_decode(text); })};
  }();
  return f;
}

// unprotect() of `data`: on failure a decrypt code with a path, data untouched.
bool unprotect_checked(json& data, const gdpr::cipher& c) {
  const json before = data;
  auto r = gdpr::unprotect(data, fixed().plan, c);
  if (r) return true;
  FUZZ_CHECK(data == before, "a failed unprotect changed data");
  if (!data.is_object()) {
    FUZZ_CHECK(r.code() == gdpr::errc::invalid_argument, "unprotect of a non-object");
    return false;
  }
  FUZZ_CHECK(gdpr::is_decrypt_error(r.code()), "unprotect failed with a non-decrypt code");
  FUZZ_CHECK(!r.error().path.empty(), "unprotect error without a data path");
  FUZZ_CHECK(!r.error().message.empty(), "unprotect error without a message");
  return false;
}

// The input as a hostile ciphertext in every marked field.
void attack_ciphertext(std::string_view text) {
  const std::string s(text);
  const json data = {{"email", s},
                     {"profile", {{"full_name", s}, {"age", 3}}},
                     {"addresses", json::array({{{"line", s}, {"city", "x"}}, {{"city", "y"}}})},
                     {"card", s},
                     {"matrix", json::array({json::array({s, 1}), json::array()})},
                     {"note", s}};
  const fixture& f = fixed();
  for (const gdpr::cipher* c :
       {static_cast<const gdpr::cipher*>(&f.aes), static_cast<const gdpr::cipher*>(&f.aes_php),
        static_cast<const gdpr::cipher*>(&f.base64)}) {
    json copy = data;
    if (unprotect_checked(copy, *c)) {
      // Every marked field held `s`, which decrypted to one JSON value; the rest is as it was.
      FUZZ_CHECK(copy["note"] == data["note"] && copy["profile"]["age"] == 3,
                 "unprotect touched an unmarked field");
      FUZZ_CHECK(copy["email"] == copy["card"] && copy["email"] == copy["matrix"][0][0] &&
                     copy["email"] == copy["profile"]["full_name"] &&
                     copy["email"] == copy["addresses"][0]["line"],
                 "one ciphertext decrypted to different values");
      FUZZ_CHECK(copy["matrix"][0][1] == 1, "a non-string marked leaf was changed");
    }
  }

  auto plain = f.aes.decrypt(text);
  if (!plain) {
    FUZZ_CHECK(plain.code() == gdpr::errc::malformed_ciphertext ||
                   plain.code() == gdpr::errc::decrypt_failed,
               "aes decrypt error code");
  }
  auto decoded = gdpr::base64_decode(text);
  if (decoded) {
    const std::string encoded = gdpr::base64_encode(*decoded);
    FUZZ_CHECK(encoded.size() == text.size(), "base64 re-encoding changed the length");
    auto back = gdpr::base64_decode(encoded);
    FUZZ_CHECK(back.has_value() && *back == *decoded, "base64 does not round-trip");
  } else {
    FUZZ_CHECK(decoded.code() == gdpr::errc::malformed_ciphertext, "base64 error code");
  }
}

// Every marked field present in `data` (a JSON object) after protect(): a string.
void check_sealed(const json& sealed, const json& original) {
  if (auto it = original.find("email"); it != original.end())
    FUZZ_CHECK(sealed["email"].is_string(), "email left in clear");
  if (auto it = original.find("card"); it != original.end())
    FUZZ_CHECK(sealed["card"].is_string(), "card left in clear");
  if (auto p = original.find("profile");
      p != original.end() && p->is_object() && p->contains("full_name"))
    FUZZ_CHECK(sealed["profile"]["full_name"].is_string(), "full_name left in clear");
  if (auto a = original.find("addresses"); a != original.end() && a->is_array()) {
    for (std::size_t i = 0; i < a->size(); ++i) {
      const json& el = (*a)[i];
      if (el.is_object() && el.contains("line"))
        FUZZ_CHECK(sealed["addresses"][i]["line"].is_string(), "address line left in clear");
    }
  }
}

void round_trip(const json& data) {
  const fixture& f = fixed();
  {
    json copy = data;
    unprotect_checked(copy, f.aes);  // hostile data as received
  }
  {
    json copy = data;
    unprotect_checked(copy, f.base64);
  }
  for (const auto* own : {&f.aes, &f.aes_php}) {
    json sealed = data;
    auto r = gdpr::protect(sealed, f.plan, *own);
    if (!data.is_object()) {
      if (data.is_null()) {
        FUZZ_CHECK(r.has_value(), "protect(null) must be a no-op");
      } else {
        FUZZ_CHECK(r.code() == gdpr::errc::invalid_argument, "protect of a non-object");
      }
      FUZZ_CHECK(sealed == data, "protect of a non-object changed it");
      return;
    }
    FUZZ_CHECK(r.has_value(), "protect of a parsed JSON object failed");
    check_sealed(sealed, data);

    // The other layout / another key cannot open it (when anything was sealed).
    const gdpr::cipher& wrong = own == &f.aes ? f.aes_php : f.aes;
    for (const gdpr::cipher* c : {&wrong, static_cast<const gdpr::cipher*>(&f.aes_other_key)}) {
      json copy = sealed;
      auto bad = gdpr::unprotect(copy, f.plan, *c);
      if (sealed != data) {
        FUZZ_CHECK(bad.code() == gdpr::errc::decrypt_failed, "opened with the wrong key/layout");
        FUZZ_CHECK(copy == sealed, "a failed unprotect changed data");
      }
    }

    json opened = sealed;
    FUZZ_CHECK(unprotect_checked(opened, *own), "unprotect of our own protect failed");
    FUZZ_CHECK(opened == data, "unprotect(protect(x)) != x");
  }
  // The same round trip through a cipher that does not authenticate.
  json sealed = data;
  FUZZ_CHECK(gdpr::protect(sealed, f.plan, f.base64).has_value(), "base64 protect failed");
  FUZZ_CHECK(unprotect_checked(sealed, f.base64) && sealed == data,
             "base64 unprotect(protect(x)) != x");
}

void as_schema(const json& schema) {
  auto plan = gdpr::field_plan::build(schema);
  const auto inventory = gdpr::sensitive_paths(schema);
  FUZZ_CHECK(std::is_sorted(inventory.begin(), inventory.end(),
                            [](const auto& a, const auto& b) { return a.path < b.path; }),
             "sensitive_paths() not sorted");
  if (!plan) {
    FUZZ_CHECK(plan.code() == gdpr::errc::invalid_schema, "plan error code");
    FUZZ_CHECK(!plan.error().path.empty() && plan.error().path.front() == '#',
               "plan error without a schema pointer");
    return;
  }
  for (const auto& field : plan->fields()) {
    FUZZ_CHECK(!field.steps.empty() && field.steps.front().key.has_value(),
               "a planned field at the root or under root items");
    FUZZ_CHECK(std::any_of(inventory.begin(), inventory.end(),
                           [&](const auto& p) { return p.path == field.path; }),
               "a planned field sensitive_paths() does not list");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(bytes), size);
  attack_ciphertext(text);
  auto parsed = bq::parse_json(text);
  if (!parsed) return 0;
  round_trip(*parsed);
  if (parsed->is_object()) as_schema(*parsed);
  return 0;
}
