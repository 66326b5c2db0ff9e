// Standard padded base64 (RFC 4648 §4), the text form of the reference cipher (D8).
// Decoding is strict about the alphabet, padding and length (as Go's StdEncoding) so that a
// value mangled in transit is reported as malformed rather than half-decoded.
#include <babelqueue/gdpr/aes_gcm_cipher.hpp>

#include <array>
#include <cstdint>

namespace babelqueue {
inline namespace v1 {
namespace gdpr {
namespace {

constexpr std::string_view alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<std::int8_t, 256> make_table() {
  std::array<std::int8_t, 256> table{};
  for (auto& v : table) v = -1;
  for (std::size_t i = 0; i < alphabet.size(); ++i)
    table[static_cast<unsigned char>(alphabet[i])] = static_cast<std::int8_t>(i);
  return table;
}
constexpr auto decode_table = make_table();

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const auto n = (std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16) |
                   (std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8) |
                   std::uint32_t{static_cast<unsigned char>(bytes[i + 2])};
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += alphabet[(n >> 6) & 63];
    out += alphabet[n & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest == 1) {
    const auto n = std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16;
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += "==";
  } else if (rest == 2) {
    const auto n = (std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16) |
                   (std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8);
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += alphabet[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

result<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0)
    return fail(errc::malformed_ciphertext,
                "not standard padded base64 (length is not a multiple of 4)");
  std::size_t pad = 0;
  if (!text.empty() && text.back() == '=')
    pad = (text.size() >= 2 && text[text.size() - 2] == '=') ? 2 : 1;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    std::uint32_t n = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      const char ch = text[i + j];
      std::int8_t v = 0;
      if (ch == '=' && last && j >= 4 - pad) {
        v = 0;
      } else {
        v = decode_table[static_cast<unsigned char>(ch)];
        if (v < 0)
          return fail(errc::malformed_ciphertext, "not standard padded base64 (bad character)");
      }
      n = (n << 6) | static_cast<std::uint32_t>(v);
    }
    out += static_cast<char>((n >> 16) & 0xff);
    if (!last || pad < 2) out += static_cast<char>((n >> 8) & 0xff);
    if (!last || pad < 1) out += static_cast<char>(n & 0xff);
  }
  return out;
}

}  // namespace gdpr
}  // namespace v1
}  // namespace babelqueue
