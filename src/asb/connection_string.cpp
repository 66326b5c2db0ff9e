// The Azure Service Bus connection-string parser (grammar in connection_string.hpp).
#include <babelqueue/asb/connection_string.hpp>
#include <babelqueue/text.hpp>

#include <array>
#include <charconv>
#include <cstddef>
#include <string>

namespace babelqueue {
inline namespace v1 {
namespace asb {
namespace {

enum key_index : std::size_t {
  endpoint_key,
  key_name_key,
  key_key,
  signature_key,
  entity_path_key,
  emulator_key,
  key_count,
};

// The canonical spelling of each key (what error paths name).
constexpr std::array<std::string_view, key_count> key_names = {
    "Endpoint",   "SharedAccessKeyName",    "SharedAccessKey", "SharedAccessSignature",
    "EntityPath", "UseDevelopmentEmulator",
};

constexpr char lower(char c) noexcept {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
}

bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

failure refuse(auth_errc code, std::string message, std::string_view key = {}) {
  return fail(error_info{make_error_code(code), std::move(message), std::string(key)});
}

// A key of a connection string is echoed in messages only up to this length (a part with a
// misplaced separator could make a secret look like a key).
std::string shown_key(std::string_view key) {
  constexpr std::size_t max = 40;
  if (key.size() <= max) return std::string(key);
  return std::string(key.substr(0, max)) + "...";
}

bool is_scheme_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '-' || c == '.';
}

// Endpoint: <scheme>://<host>[:<port>][/]. Fills host and port; the error message otherwise.
result<void> parse_endpoint(std::string_view value, connection_string& out) {
  const auto bad = [](std::string_view why) {
    return refuse(auth_errc::invalid_value, "connection string: Endpoint " + std::string(why),
                  key_names[endpoint_key]);
  };
  const auto sep = value.find("://");
  if (sep == std::string_view::npos || sep == 0) return bad("is not <scheme>://<host>");
  for (char c : value.substr(0, sep)) {
    if (!is_scheme_char(c)) return bad("has an invalid scheme");
  }
  std::string_view rest = value.substr(sep + 3);
  const auto end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  if (end != std::string_view::npos && rest.substr(end) != "/") {
    return bad("has a path, query or fragment (put the entity in EntityPath)");
  }
  if (authority.find('@') != std::string_view::npos) return bad("carries user information");
  std::string_view host = authority;
  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return bad("has an unclosed IPv6 bracket");
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("has text after its IPv6 host");
      has_port = true;
      port_text = after.substr(1);
    }
  } else if (const auto colon = authority.find(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    has_port = true;
    port_text = authority.substr(colon + 1);
  }
  if (host.empty()) return bad("has no host");
  for (char c : host) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f || c == '[' || c == ']' || c == '/' || c == '\\') {
      return bad("has an invalid host");
    }
  }
  if (has_port) {
    unsigned port = 0;
    const auto [ptr, ec] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (port_text.empty() || ec != std::errc() || ptr != port_text.data() + port_text.size() ||
        port == 0 || port > 65535 || port_text.front() == '+') {
      return bad("has an invalid port");
    }
    out.port = static_cast<std::uint16_t>(port);
  }
  out.host = std::string(host);
  std::string_view endpoint = value;
  if (!endpoint.empty() && endpoint.back() == '/') endpoint.remove_suffix(1);
  out.endpoint = std::string(endpoint);
  return {};
}

}  // namespace

result<connection_string> parse_connection_string(std::string_view text) {
  if (is_blank(text)) return refuse(auth_errc::malformed, "connection string is blank");

  std::array<std::optional<std::string_view>, key_count> values;
  std::size_t part_number = 0;
  bool any_part = false;
  while (!text.empty()) {
    const auto semi = text.find(';');
    const std::string_view part = text.substr(0, semi);
    text = semi == std::string_view::npos ? std::string_view() : text.substr(semi + 1);
    ++part_number;
    if (is_blank(part)) continue;
    any_part = true;
    const auto eq = part.find('=');
    if (eq == std::string_view::npos) {
      return refuse(auth_errc::malformed,
                    "connection string: part " + std::to_string(part_number) + " is not Key=Value");
    }
    const std::string_view key = trim_ascii(part.substr(0, eq));
    const std::string_view value = trim_ascii(part.substr(eq + 1));
    if (key.empty()) {
      return refuse(auth_errc::malformed,
                    "connection string: part " + std::to_string(part_number) + " has no key");
    }
    std::size_t index = key_count;
    for (std::size_t i = 0; i < key_count; ++i) {
      if (iequals(key, key_names[i])) index = i;
    }
    if (index == key_count) {
      return refuse(auth_errc::unknown_key,
                    "connection string: unknown key '" + shown_key(key) + "'", shown_key(key));
    }
    if (values[index]) {
      return refuse(auth_errc::duplicate_key,
                    "connection string: " + std::string(key_names[index]) + " appears twice",
                    key_names[index]);
    }
    if (value.empty()) {
      return refuse(auth_errc::invalid_value,
                    "connection string: " + std::string(key_names[index]) + " is empty",
                    key_names[index]);
    }
    values[index] = value;
  }

  if (!any_part) return refuse(auth_errc::malformed, "connection string has no Key=Value part");

  connection_string out;
  if (!values[endpoint_key]) {
    return refuse(auth_errc::missing_key, "connection string: no Endpoint",
                  key_names[endpoint_key]);
  }
  if (auto r = parse_endpoint(*values[endpoint_key], out); !r) return failure{std::move(r).error()};

  const auto copy = [&](key_index i, std::optional<std::string>& field) {
    if (values[i]) field = std::string(*values[i]);
  };
  copy(key_name_key, out.shared_access_key_name);
  copy(key_key, out.shared_access_key);
  copy(signature_key, out.shared_access_signature);
  copy(entity_path_key, out.entity_path);

  if (out.shared_access_signature && (out.shared_access_key || out.shared_access_key_name)) {
    const auto other = out.shared_access_key ? key_key : key_name_key;
    return refuse(auth_errc::conflicting_keys,
                  "connection string: SharedAccessSignature cannot be combined with " +
                      std::string(key_names[other]),
                  key_names[other]);
  }
  if (out.shared_access_key_name && !out.shared_access_key) {
    return refuse(auth_errc::missing_key,
                  "connection string: SharedAccessKeyName without SharedAccessKey",
                  key_names[key_key]);
  }
  if (out.shared_access_key && !out.shared_access_key_name) {
    return refuse(auth_errc::missing_key,
                  "connection string: SharedAccessKey without SharedAccessKeyName",
                  key_names[key_name_key]);
  }
  if (!out.shared_access_key && !out.shared_access_signature) {
    return refuse(auth_errc::missing_key,
                  "connection string: no credentials (SharedAccessKeyName and SharedAccessKey, "
                  "or SharedAccessSignature)",
                  key_names[key_key]);
  }

  if (const auto flag = values[emulator_key]) {
    if (iequals(*flag, "true")) {
      out.use_development_emulator = true;
    } else if (!iequals(*flag, "false")) {
      return refuse(auth_errc::invalid_value,
                    "connection string: UseDevelopmentEmulator is neither true nor false",
                    key_names[emulator_key]);
    }
  }
  return out;
}

}  // namespace asb
}  // namespace v1
}  // namespace babelqueue
