// detail::write_uuid_text against a byte-by-byte reference: every byte value at every
// position (and so every nibble in both halves), the dashes, and nothing written past 36.
#include "core/uuid_text.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>

namespace {

std::string reference_text(const unsigned char* b) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += digits[b[i] >> 4];
    s += digits[b[i] & 0x0F];
  }
  return s;
}

std::string written_text(const unsigned char* b) {
  std::array<char, 40> out;
  out.fill('#');
  babelqueue::detail::write_uuid_text(b, out.data());
  EXPECT_EQ(std::string(out.data() + 36, 4), "####") << "written past the 36 characters";
  return std::string(out.data(), 36);
}

}  // namespace

TEST(UuidText, EveryByteValueAtEveryPositionMatchesTheReference) {
  for (int position = 0; position < 16; ++position) {
    for (int value = 0; value < 256; ++value) {
      std::array<unsigned char, 16> b{};
      for (int i = 0; i < 16; ++i)
        b[static_cast<std::size_t>(i)] = static_cast<unsigned char>(i * 17 + value);
      b[static_cast<std::size_t>(position)] = static_cast<unsigned char>(value);
      ASSERT_EQ(written_text(b.data()), reference_text(b.data()))
          << "byte " << position << " = " << value;
    }
  }
}

TEST(UuidText, KnownValues) {
  const std::array<unsigned char, 16> zero{};
  EXPECT_EQ(written_text(zero.data()), "00000000-0000-0000-0000-000000000000");
  std::array<unsigned char, 16> ff;
  ff.fill(0xFF);
  EXPECT_EQ(written_text(ff.data()), "ffffffff-ffff-ffff-ffff-ffffffffffff");
  const std::array<unsigned char, 16> rfc{0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3,
                                          0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00};
  EXPECT_EQ(written_text(rfc.data()), "123e4567-e89b-12d3-a456-426614174000");
}
