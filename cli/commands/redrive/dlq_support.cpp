#include "commands/redrive/dlq_support.hpp"

#include "command.hpp"
#include "commands/runtime/broker.hpp"

#include <babelqueue/runtime/url.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <limits>

namespace babelqueue::cli {

std::unique_ptr<transport> open_broker_or_report(const std::string& url) {
  register_builtin_transports();
  const std::string resolved = resolve_broker(url);
  auto t = open_transport(resolved);
  if (!t) {
    std::cerr << "cannot open broker " << redact_url(resolved) << ": " << t.error().reason() << ": "
              << t.error().message << "\n";
    exit_status() = 2;
    return nullptr;
  }
  print_security_warnings(**t);
  return std::move(*t);
}

std::string format_unix_millis(std::int64_t ms) {
  if (ms == 0) return "";
  const auto secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  if (gmtime_r(&secs, &tm) == nullptr) return std::to_string(ms);
  char buf[40];
  const auto n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char frac[8];
  std::snprintf(frac, sizeof frac, ".%03dZ", static_cast<int>(((ms % 1000) + 1000) % 1000));
  return std::string(buf, n) + frac;
}

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::int64_t unit = 1000;
  switch (text.back()) {
    case 's':
      text.remove_suffix(1);
      break;
    case 'm':
      unit = 60'000;
      text.remove_suffix(1);
      break;
    case 'h':
      unit = 3'600'000;
      text.remove_suffix(1);
      break;
    case 'd':
      unit = 86'400'000;
      text.remove_suffix(1);
      break;
    default:
      break;
  }
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 0 ||
      n > std::numeric_limits<std::int64_t>::max() / unit) {
    return std::nullopt;
  }
  return std::chrono::milliseconds(n * unit);
}

namespace {
// Cuts at a UTF-8 character boundary so that the cell stays valid text.
std::string clip(const std::string& cell, std::size_t max_width) {
  if (cell.size() <= max_width) return cell;
  std::size_t cut = max_width - 1;
  while (cut > 0 && (static_cast<unsigned char>(cell[cut]) & 0xC0) == 0x80) --cut;
  return cell.substr(0, cut) + "\xE2\x80\xA6";
}
// Display width in characters (UTF-8 lead bytes), good enough for aligned columns.
std::size_t width(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}
}  // namespace

void print_table(std::ostream& out, const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows, std::size_t max_width) {
  std::vector<std::vector<std::string>> cells;
  cells.push_back(header);
  for (const auto& r : rows) {
    std::vector<std::string> c;
    for (const auto& v : r) {
      std::string flat = v;
      std::replace(flat.begin(), flat.end(), '\n', ' ');
      c.push_back(clip(flat, max_width));
    }
    cells.push_back(std::move(c));
  }
  std::vector<std::size_t> widths(header.size(), 0);
  for (const auto& r : cells) {
    for (std::size_t i = 0; i < r.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], width(r[i]));
    }
  }
  for (const auto& r : cells) {
    std::string line;
    for (std::size_t i = 0; i < r.size() && i < widths.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(widths[i] - width(r[i]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
}

}  // namespace babelqueue::cli
