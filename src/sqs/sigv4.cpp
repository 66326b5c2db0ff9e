// AWS Signature Version 4 (wire-brokers §1.9) on OpenSSL 3's SHA-256 and HMAC.
//
// What this signer canonicalises, and what it deliberately leaves to the caller:
//  - the path is used as given ("/" when empty): no URI re-encoding and no dot-segment or
//    double-slash normalisation (SQS's JSON protocol always POSTs to "/");
//  - the query string's parameters are sorted by name, then by value (byte order), each kept
//    exactly as encoded by the caller; a parameter without '=' reads as `name=`;
//  - header names are lower-cased and trimmed; values are trimmed and every run of
//    whitespace becomes one space (what botocore does); several headers of one name are
//    joined by ',' in the order given; every header passed is signed.
#include "sqs/sigv4.hpp"

#include <babelqueue/runtime/error.hpp>
#include <babelqueue/text.hpp>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <map>

namespace babelqueue::inline v1::sqs::detail {
namespace {

constexpr std::string_view algorithm = "AWS4-HMAC-SHA256";

using digest = std::array<unsigned char, 32>;

// OpenSSL cannot fail on these in-memory operations short of running out of memory, and the
// signer's interface has no error channel, so that case throws babelqueue::error.
[[noreturn]] void crypto_failed(const char* what) {
  const unsigned long code = ERR_get_error();
  char text[256] = "unknown OpenSSL error";
  if (code != 0) ERR_error_string_n(code, text, sizeof text);
  throw babelqueue::error(
      error_info{make_error_code(transport_errc::unavailable),
                 std::string("SigV4: ") + what + " failed",
                 {},
                 native_error{"openssl", static_cast<std::int64_t>(code), text}});
}

std::string to_hex(const unsigned char* bytes, std::size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

digest hmac_sha256(const unsigned char* key, std::size_t key_len, std::string_view data) {
  digest out{};
  unsigned int len = 0;
  ERR_clear_error();
  if (HMAC(EVP_sha256(), key, static_cast<int>(key_len),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(),
           &len) == nullptr ||
      len != out.size()) {
    crypto_failed("HMAC-SHA256");
  }
  return out;
}

digest hmac_sha256(const digest& key, std::string_view data) {
  return hmac_sha256(key.data(), key.size(), data);
}

using babelqueue::ascii_lower;
using babelqueue::is_ascii_space;
constexpr auto trim = babelqueue::trim_ascii;

// Trimmed, with every run of whitespace inside collapsed to one space.
std::string canonical_value(std::string_view v) {
  v = trim(v);
  std::string out;
  out.reserve(v.size());
  bool in_space = false;
  for (char c : v) {
    if (is_ascii_space(c)) {
      in_space = true;
      continue;
    }
    if (in_space) out += ' ';
    in_space = false;
    out += c;
  }
  return out;
}

std::string canonical_query(std::string_view query) {
  std::vector<std::pair<std::string_view, std::string_view>> params;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (param.empty()) continue;
    const std::size_t eq = param.find('=');
    if (eq == std::string_view::npos) {
      params.emplace_back(param, std::string_view{});
    } else {
      params.emplace_back(param.substr(0, eq), param.substr(eq + 1));
    }
  }
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty()) out += '&';
    out += name;
    out += '=';
    out += value;
  }
  return out;
}

struct canonical_headers {
  std::string lines;        ///< "name:value\n" per header name, sorted by name
  std::string signed_list;  ///< "name;name;..."
};

canonical_headers canonicalize(const std::vector<http_header>& headers) {
  std::map<std::string, std::string> by_name;  // lower-case name -> values joined by ','
  for (const auto& [name, value] : headers) {
    auto [it, inserted] = by_name.try_emplace(ascii_lower(trim(name)));
    if (!inserted) it->second += ',';
    it->second += canonical_value(value);
  }
  canonical_headers out;
  for (const auto& [name, value] : by_name) {
    out.lines += name;
    out.lines += ':';
    out.lines += value;
    out.lines += '\n';
    if (!out.signed_list.empty()) out.signed_list += ';';
    out.signed_list += name;
  }
  return out;
}

std::string canonical_request(const signing_input& in, const canonical_headers& headers) {
  std::string out(in.method);
  out += '\n';
  out += in.path.empty() ? std::string_view("/") : in.path;
  out += '\n';
  out += canonical_query(in.query);
  out += '\n';
  out += headers.lines;
  out += '\n';
  out += headers.signed_list;
  out += '\n';
  out += sha256_hex(in.body);
  return out;
}

// `date/region/service/aws4_request`.
std::string credential_scope(std::string_view date, const signing_scope& scope) {
  std::string out(date);
  out += '/';
  out += scope.region;
  out += '/';
  out += scope.service;
  out += "/aws4_request";
  return out;
}

constexpr auto iequals = babelqueue::equals_ascii_ci;

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  ERR_clear_error();
  if (EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr) != 1) {
    crypto_failed("SHA-256");
  }
  return to_hex(md, len);
}

std::string amz_date(std::chrono::system_clock::time_point time) {
  using namespace std::chrono;
  const auto secs = floor<seconds>(time);
  const auto day = floor<days>(secs);
  const year_month_day ymd{day};
  const hh_mm_ss hms{secs - day};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d%02u%02uT%02d%02d%02dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()));
  return buf;
}

std::string canonical_request(const signing_input& in) {
  return canonical_request(in, canonicalize(in.headers));
}

std::string string_to_sign(std::string_view canonical, const signing_scope& scope) {
  const std::string date = amz_date(scope.time);
  std::string out(algorithm);
  out += '\n';
  out += date;
  out += '\n';
  out += credential_scope(std::string_view(date).substr(0, 8), scope);
  out += '\n';
  out += sha256_hex(canonical);
  return out;
}

std::vector<http_header> sign(const signing_input& in, const signing_scope& scope,
                              const credentials& creds) {
  const std::string date = amz_date(scope.time);

  // What is signed: the caller's headers (minus any stale date/token/signature, which are
  // replaced like botocore replaces them), plus the date and the session token.
  signing_input signed_in = in;
  signed_in.headers.clear();
  for (const auto& h : in.headers) {
    const std::string_view name = trim(h.first);
    if (iequals(name, "x-amz-date") || iequals(name, "x-amz-security-token") ||
        iequals(name, "authorization")) {
      continue;
    }
    signed_in.headers.push_back(h);
  }
  std::vector<http_header> added;
  added.emplace_back("X-Amz-Date", date);
  if (!creds.session_token.empty()) {
    added.emplace_back("X-Amz-Security-Token", creds.session_token);
  }
  signed_in.headers.insert(signed_in.headers.end(), added.begin(), added.end());

  const canonical_headers headers = canonicalize(signed_in.headers);
  const std::string sts = string_to_sign(canonical_request(signed_in, headers), scope);

  const std::string_view day = std::string_view(date).substr(0, 8);
  // The signing key chain; the copies of the secret and the derived keys are wiped after use.
  std::string secret_key = "AWS4" + creds.secret_access_key;
  digest key = hmac_sha256(reinterpret_cast<const unsigned char*>(secret_key.data()),
                           secret_key.size(), day);
  OPENSSL_cleanse(secret_key.data(), secret_key.size());
  key = hmac_sha256(key, scope.region);
  key = hmac_sha256(key, scope.service);
  key = hmac_sha256(key, "aws4_request");
  const digest signature = hmac_sha256(key, sts);
  OPENSSL_cleanse(key.data(), key.size());

  std::string authorization(algorithm);
  authorization += " Credential=";
  authorization += creds.access_key_id;
  authorization += '/';
  authorization += credential_scope(day, scope);
  authorization += ", SignedHeaders=";
  authorization += headers.signed_list;
  authorization += ", Signature=";
  authorization += to_hex(signature.data(), signature.size());
  added.emplace_back("Authorization", std::move(authorization));
  return added;
}

}  // namespace babelqueue::inline v1::sqs::detail
