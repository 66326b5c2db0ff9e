// Parsing of --delay and --at (time_args.hpp). RFC 3339 by hand because GCC 12's libstdc++
// has no std::chrono::parse; the calendar arithmetic is std::chrono's.
#include "commands/runtime/time_args.hpp"

#include <charconv>
#include <limits>

namespace babelqueue::cli {
namespace {

// Reads exactly `width` digits at `pos` into `out`.
bool digits(std::string_view s, std::size_t& pos, std::size_t width, int& out) {
  if (pos + width > s.size()) return false;
  int v = 0;
  for (std::size_t i = 0; i < width; ++i) {
    const char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  pos += width;
  out = v;
  return true;
}

bool expect(std::string_view s, std::size_t& pos, char c) {
  if (pos >= s.size() || s[pos] != c) return false;
  ++pos;
  return true;
}

}  // namespace

std::optional<std::chrono::milliseconds> parse_delay(std::string_view text, std::string& why) {
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || end == text.data() || n < 0) {
    why = "expected a duration such as 1500ms, 30s, 5m, 2h or 1d";
    return std::nullopt;
  }
  const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  std::int64_t factor = 0;
  if (unit == "ms") {
    factor = 1;
  } else if (unit == "s") {
    factor = 1000;
  } else if (unit == "m") {
    factor = 60'000;
  } else if (unit == "h") {
    factor = 3'600'000;
  } else if (unit == "d") {
    factor = 86'400'000;
  }
  if (factor == 0) {
    why = unit.empty() ? "give a unit (ms, s, m, h or d): a bare number is ambiguous"
                       : "unknown unit '" + std::string(unit) + "' (use ms, s, m, h or d)";
    return std::nullopt;
  }
  if (n > std::numeric_limits<std::int64_t>::max() / factor) {
    why = "too large";
    return std::nullopt;
  }
  return std::chrono::milliseconds(n * factor);
}

std::optional<std::chrono::system_clock::time_point> parse_instant(std::string_view text,
                                                                   std::string& why) {
  using namespace std::chrono;
  const std::string_view s = text;
  why = "expected an RFC 3339 time such as 2026-12-24T09:00:00Z (with Z or a ±hh:mm offset)";
  std::size_t pos = 0;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (!digits(s, pos, 4, y) || !expect(s, pos, '-') || !digits(s, pos, 2, mo) ||
      !expect(s, pos, '-') || !digits(s, pos, 2, d)) {
    return std::nullopt;
  }
  if (pos >= s.size() || (s[pos] != 'T' && s[pos] != 't')) return std::nullopt;
  ++pos;
  if (!digits(s, pos, 2, h) || !expect(s, pos, ':') || !digits(s, pos, 2, mi) ||
      !expect(s, pos, ':') || !digits(s, pos, 2, se)) {
    return std::nullopt;
  }
  milliseconds frac{0};
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int scale = 100, n = 0;
    const std::size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      n += (s[pos] - '0') * scale;  // milliseconds: digits past the third are cut
      scale /= 10;
      ++pos;
    }
    if (pos == start) return std::nullopt;
    frac = milliseconds(n);
  }
  minutes offset{0};
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    const bool negative = s[pos] == '-';
    ++pos;
    int oh = 0, om = 0;
    if (!digits(s, pos, 2, oh) || !expect(s, pos, ':') || !digits(s, pos, 2, om) || oh > 23 ||
        om > 59) {
      return std::nullopt;
    }
    offset = hours(oh) + minutes(om);
    if (negative) offset = -offset;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  const year_month_day date{year(y), month(static_cast<unsigned>(mo)),
                            day(static_cast<unsigned>(d))};
  if (!date.ok() || h > 23 || mi > 59 || se > 60) {
    why = "not a real date and time";
    return std::nullopt;
  }
  const auto local = sys_days(date) + hours(h) + minutes(mi) + seconds(se) + frac;
  return time_point_cast<system_clock::duration>(local - offset);
}

}  // namespace babelqueue::cli
