// format_double() (D2, ECMAScript Number::toString over the shortest round-trip digits)
// against a reference layout built from detail::shortest() — the std::string-based layout the
// buffer writer replaced — over a million doubles of random bit patterns plus the edges, and
// every result parses back to the same double.
#include "core/shared_helpers.hpp"

#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace {

std::string reference_layout(double value) {
  if (value == 0) return std::signbit(value) ? "-0" : "0";
  const auto d = babelqueue::detail::shortest(value);
  std::string out = d.negative ? "-" : "";
  const std::string& digits = d.digits;
  const int k = static_cast<int>(digits.size());
  const int n = d.point;
  if (k <= n && n <= 21) return out + digits + std::string(static_cast<std::size_t>(n - k), '0');
  if (0 < n && n <= 21) {
    return out + digits.substr(0, static_cast<std::size_t>(n)) + "." +
           digits.substr(static_cast<std::size_t>(n));
  }
  if (-6 < n && n <= 0) return out + "0." + std::string(static_cast<std::size_t>(-n), '0') + digits;
  out += digits.substr(0, 1);
  if (k > 1) out += "." + digits.substr(1);
  return out + "e" + (n - 1 < 0 ? "-" : "+") + std::to_string(std::abs(n - 1));
}

void expect_matches_reference(double v) {
  const std::string got = babelqueue::format_double(v);
  ASSERT_EQ(got, reference_layout(v)) << std::bit_cast<std::uint64_t>(v);
  double back = 0;
  auto res = std::from_chars(got.data(), got.data() + got.size(), back);
  ASSERT_EQ(res.ptr, got.data() + got.size()) << got;
  ASSERT_EQ(std::bit_cast<std::uint64_t>(back), std::bit_cast<std::uint64_t>(v)) << got;
}

}  // namespace

TEST(DoubleFormat, EdgesMatchTheReferenceAndRoundTrip) {
  using lim = std::numeric_limits<double>;
  for (double v : {0.0,
                   -0.0,
                   1.0,
                   -1.0,
                   0.1,
                   0.3,
                   0.30000000000000004,
                   1e21,
                   1e20,
                   123456789012345680000.0,
                   1e-6,
                   1e-7,
                   1.5e-7,
                   5e-324,
                   lim::min(),
                   lim::max(),
                   lim::lowest(),
                   19.99,
                   2.5,
                   100.0,
                   1e300,
                   9007199254740993.0,
                   4.35,
                   0.000001234}) {
    expect_matches_reference(v);
  }
}

TEST(DoubleFormat, RandomBitPatternsMatchTheReferenceAndRoundTrip) {
  std::mt19937_64 rng(20261203);
  for (int i = 0; i < 1000000; ++i) {
    const auto v = std::bit_cast<double>(rng());
    if (!std::isfinite(v)) continue;
    expect_matches_reference(v);
    if (HasFatalFailure()) return;
  }
}

TEST(DoubleFormat, RandomDecimalsMatchTheReferenceAndRoundTrip) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> mantissa(-99999999, 99999999);
  std::uniform_int_distribution<int> exponent(-30, 30);
  for (int i = 0; i < 200000; ++i) {
    expect_matches_reference(static_cast<double>(mantissa(rng)) * std::pow(10.0, exponent(rng)));
    if (HasFatalFailure()) return;
  }
}

// The short-decimal fast path (at most three fractional digits, below 2^53 / 10^4): every
// m / 10^k it can take, the doubles one spacing either side (which it must refuse or get
// right), sums that land next to a short decimal (19.99 + 64 is 83.99000000000001), and the
// bound itself.
TEST(DoubleFormat, ShortDecimalsAndTheirNeighboursMatchTheReference) {
  for (std::int64_t m = 1; m <= 60000; ++m) {
    for (double scale : {1.0, 10.0, 100.0, 1000.0}) {
      const double v = static_cast<double>(m) / scale;
      expect_matches_reference(v);
      expect_matches_reference(-v);
      expect_matches_reference(std::nextafter(v, 0.0));
      expect_matches_reference(std::nextafter(v, 1e300));
      if (HasFatalFailure()) return;
    }
  }
  for (int i = 0; i < 30000; ++i) {
    expect_matches_reference(19.99 + i);
    expect_matches_reference(0.1 * i);
    expect_matches_reference(i * 0.001 + 0.002);
    if (HasFatalFailure()) return;
  }
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::int64_t> big(1, 900719925474);  // up to the bound, k = 0..3
  for (int i = 0; i < 60000; ++i) {
    const auto m = big(rng);
    const double v = static_cast<double>(m) / std::pow(10.0, i % 4);
    expect_matches_reference(v);
    expect_matches_reference(std::nextafter(v, 0.0));
    expect_matches_reference(v * 10);  // past the bound for the largest m
    if (HasFatalFailure()) return;
  }
  const double bound = 9007199254740992.0 / 10000.0;
  for (double v : {bound, std::nextafter(bound, 0.0), std::nextafter(bound, 1e300), 0.001,
                   std::nextafter(0.001, 0.0), 0.0011, 999999999999.999, 123456789012.345}) {
    expect_matches_reference(v);
  }
}

// The fixed-notation range (10^-6 up to 2^53) that std::to_chars' shortest fixed form
// writes directly: random doubles spread evenly over its magnitudes, and its two ends.
TEST(DoubleFormat, FixedRangeMatchesTheReference) {
  std::mt19937_64 rng(2026120401);
  std::uniform_real_distribution<double> log10_magnitude(-6.0, 15.96);
  for (int i = 0; i < 300000; ++i) {
    const double v = std::pow(10.0, log10_magnitude(rng));
    expect_matches_reference(v);
    expect_matches_reference(-v);
    if (HasFatalFailure()) return;
  }
  for (double v : {1e-6, std::nextafter(1e-6, 0.0), std::nextafter(1e-6, 1.0), 9007199254740992.0,
                   std::nextafter(9007199254740992.0, 0.0), 9007199254740994.0, 4503599627370495.5,
                   123456789.123456789, 0.1 + 0.2}) {
    expect_matches_reference(v);
  }
}
