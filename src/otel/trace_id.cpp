// The trace_id ↔ TraceID bijection (trace_id.hpp): hex parsing and SHA-256 (OpenSSL).
#include "core/shared_helpers.hpp"

#include <babelqueue/otel/trace_id.hpp>

#include <openssl/evp.h>

#include <algorithm>
#include <cstddef>

namespace babelqueue {
inline namespace v1 {
namespace otel {
namespace {

// The 16 bytes of a UUID-shaped string (every '-' removed, exactly 32 hex digits left);
// false for anything else.
bool parse_uuid_hex(std::string_view s, trace_id_bytes& out) noexcept {
  std::size_t digits = 0;
  int high = -1;
  for (char c : s) {
    if (c == '-') continue;
    const int v = detail::hex_value(c);
    if (v < 0 || digits == 32) return false;
    if (high < 0) {
      high = v;
    } else {
      out[digits / 2] = static_cast<std::uint8_t>((high << 4) | v);
      high = -1;
    }
    ++digits;
  }
  return digits == 32;
}

// The first N bytes of SHA-256 over `prefix` + `text`. EVP_Digest cannot fail for SHA-256
// on valid input short of an allocation failure; then the output stays zero, which the
// callers' zero guard turns into a valid id.
template <std::size_t N>
std::array<std::uint8_t, N> sha256_prefix(std::string_view prefix, std::string_view text) noexcept {
  std::array<std::uint8_t, N> out{};
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (ctx != nullptr && EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1 &&
      EVP_DigestUpdate(ctx, prefix.data(), prefix.size()) == 1 &&
      EVP_DigestUpdate(ctx, text.data(), text.size()) == 1 &&
      EVP_DigestFinal_ex(ctx, md, &len) == 1 && len >= N) {
    std::copy_n(md, N, out.begin());
  }
  EVP_MD_CTX_free(ctx);
  return out;
}

template <std::size_t N>
bool all_zero(const std::array<std::uint8_t, N>& a) noexcept {
  return std::all_of(a.begin(), a.end(), [](std::uint8_t b) { return b == 0; });
}

template <std::size_t N>
std::string hex_of(const std::array<std::uint8_t, N>& a) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s;
  s.reserve(2 * N);
  for (std::uint8_t b : a) {
    s.push_back(digits[b >> 4]);
    s.push_back(digits[b & 0x0f]);
  }
  return s;
}

}  // namespace

trace_id_bytes trace_id_of(std::string_view trace_id) noexcept {
  trace_id_bytes id{};
  if (parse_uuid_hex(trace_id, id) && !all_zero(id)) return id;
  id = sha256_prefix<16>({}, trace_id);
  if (all_zero(id)) id[15] = 1;
  return id;
}

std::string uuid_of(const trace_id_bytes& id) {
  const std::string h = hex_of(id);
  std::string s;
  s.reserve(36);
  s.append(h, 0, 8).append(1, '-').append(h, 8, 4).append(1, '-').append(h, 12, 4);
  s.append(1, '-').append(h, 16, 4).append(1, '-').append(h, 20, 12);
  return s;
}

span_id_bytes synthetic_span_id_of(std::string_view trace_id) noexcept {
  span_id_bytes id = sha256_prefix<8>("babelqueue-span:", trace_id);
  if (all_zero(id)) id[7] = 1;
  return id;
}

std::string to_hex(const trace_id_bytes& id) { return hex_of(id); }
std::string to_hex(const span_id_bytes& id) { return hex_of(id); }

}  // namespace otel
}  // namespace v1
}  // namespace babelqueue
