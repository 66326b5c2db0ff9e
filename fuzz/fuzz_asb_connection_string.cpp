// Fuzz target: the Azure Service Bus connection-string parser and the SAS token
// (include/babelqueue/asb/connection_string.hpp, sas_token.hpp; target
// babelqueue::asb). The input is a connection string, as a user or an environment
// variable hands it over.
//
// Invariants:
//  - nothing crashes; a refusal is an auth_errc code of condition::invalid_argument whose
//    path is empty, a known key name, or (unknown_key) the key as written, shortened;
//  - an accepted string has an Endpoint `<scheme>://<host>[:port]` without a trailing `/`, a
//    host, a non-zero port when one is named, exactly one credential form (key name + key, or
//    a signature), and values that are non-empty, trimmed and free of `;`;
//  - it serialises back (canonical key names, `;`-separated) to a string that parses to the
//    same fields;
//  - with a key, make_sas_token() on the endpoint's audience succeeds, is deterministic and
//    only uses the characters of the format; with the whole input as the resource URI (when
//    non-empty), its `sr=` value percent-decodes back to the input.
#include "fuzz_check.hpp"

#include <babelqueue/asb/connection_string.hpp>
#include <babelqueue/asb/sas_token.hpp>
#include <babelqueue/error.hpp>
#include <babelqueue/text.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace {

namespace asb = babelqueue::asb;

bool trimmed_value(const std::optional<std::string>& v) {
  if (!v) return true;
  return !v->empty() && babelqueue::trim_ascii(*v) == *v && v->find(';') == std::string::npos;
}

std::string serialise(const asb::connection_string& cs) {
  std::string out = "Endpoint=" + cs.endpoint;
  const auto add = [&](const char* key, const std::optional<std::string>& v) {
    if (v) out += std::string(";") + key + "=" + *v;
  };
  add("SharedAccessKeyName", cs.shared_access_key_name);
  add("SharedAccessKey", cs.shared_access_key);
  add("SharedAccessSignature", cs.shared_access_signature);
  add("EntityPath", cs.entity_path);
  if (cs.use_development_emulator) out += ";UseDevelopmentEmulator=true";
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;  // the encoder writes upper case only
}

// Inverse of the token's quote_plus; nullopt on an invalid escape.
std::optional<std::string> unquote_plus(std::string_view in) {
  std::string out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out += ' ';
    } else if (in[i] == '%') {
      if (i + 2 >= in.size()) return std::nullopt;
      const int hi = hex_value(in[i + 1]);
      const int lo = hex_value(in[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += in[i];
    }
  }
  return out;
}

bool token_charset(std::string_view token) {
  for (char c : token.substr(asb::sas_token_prefix.size())) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-' || c == '~' || c == '%' || c == '+' ||
                    c == '&' || c == '=';
    if (!ok) return false;
  }
  return true;
}

const std::chrono::system_clock::time_point k_expiry{std::chrono::seconds(1749136327)};

void check_token_of_text(std::string_view text) {
  if (text.empty()) return;
  auto token = asb::make_sas_token(text, "p", "k", k_expiry);
  FUZZ_CHECK(token.has_value(), "make_sas_token() refused a non-empty URI");
  FUZZ_CHECK(token->rfind(asb::sas_token_prefix, 0) == 0, "token prefix");
  FUZZ_CHECK(token_charset(*token), "token has a character outside the format");
  const std::string_view body = std::string_view(*token).substr(asb::sas_token_prefix.size());
  FUZZ_CHECK(body.rfind("sr=", 0) == 0, "token does not start with sr=");
  const auto amp = body.find('&');
  FUZZ_CHECK(amp != std::string_view::npos, "token has no &");
  const auto decoded = unquote_plus(body.substr(3, amp - 3));
  FUZZ_CHECK(decoded && *decoded == text, "sr= does not decode back to the resource URI");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(bytes), size);
  check_token_of_text(text.substr(0, 512));

  auto parsed = asb::parse_connection_string(text);
  if (!parsed) {
    FUZZ_CHECK(parsed.code().category() == asb::auth_category(), "error category");
    FUZZ_CHECK(parsed.code() == babelqueue::condition::invalid_argument, "error condition");
    const std::string& path = parsed.error().path;
    FUZZ_CHECK(path.size() <= 43, "error path longer than a shortened key");
    return 0;
  }
  const asb::connection_string& cs = *parsed;
  FUZZ_CHECK(!cs.host.empty(), "no host");
  FUZZ_CHECK(cs.endpoint.find("://") != std::string::npos, "endpoint without ://");
  FUZZ_CHECK(!cs.endpoint.empty() && cs.endpoint.back() != '/', "endpoint ends with /");
  FUZZ_CHECK(!cs.port || *cs.port != 0, "port 0");
  FUZZ_CHECK(cs.shared_access_key.has_value() == cs.shared_access_key_name.has_value(),
             "key name without key, or key without name");
  FUZZ_CHECK(cs.shared_access_key.has_value() != cs.shared_access_signature.has_value(),
             "not exactly one credential form");
  FUZZ_CHECK(trimmed_value(cs.shared_access_key_name) && trimmed_value(cs.shared_access_key) &&
                 trimmed_value(cs.shared_access_signature) && trimmed_value(cs.entity_path),
             "a value is empty, untrimmed or holds ';'");

  const std::string again_text = serialise(cs);
  auto again = asb::parse_connection_string(again_text);
  FUZZ_CHECK(again.has_value(), "a re-serialised connection string does not parse");
  FUZZ_CHECK(*again == cs, "a re-serialised connection string parses to other fields");

  if (cs.shared_access_key) {
    const std::string audience = "sb://" + cs.host + "/" + cs.entity_path.value_or("");
    auto a =
        asb::make_sas_token(audience, *cs.shared_access_key_name, *cs.shared_access_key, k_expiry);
    auto b =
        asb::make_sas_token(audience, *cs.shared_access_key_name, *cs.shared_access_key, k_expiry);
    FUZZ_CHECK(a.has_value() && b.has_value(), "make_sas_token() refused parsed credentials");
    FUZZ_CHECK(*a == *b, "make_sas_token() is not deterministic");
    FUZZ_CHECK(token_charset(*a), "token has a character outside the format");
  }
  return 0;
}
