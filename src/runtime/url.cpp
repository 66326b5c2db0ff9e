// Broker URL parsing and typed query options (url.hpp).
#include "core/propagate.hpp"
#include "core/shared_helpers.hpp"

#include <babelqueue/runtime/url.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

namespace babelqueue {
inline namespace v1 {
namespace {

using detail::hex_value;

// Percent-decodes one URL component. `+` stays `+` (this is not form encoding).
result<std::string> percent_decode(std::string_view in, std::string_view what) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out.push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size() || hex_value(in[i + 1]) < 0 || hex_value(in[i + 2]) < 0) {
      return fail(runtime_errc::invalid_argument,
                  "bad percent escape in the URL " + std::string(what));
    }
    out.push_back(static_cast<char>(hex_value(in[i + 1]) * 16 + hex_value(in[i + 2])));
    i += 2;
  }
  return out;
}

bool valid_scheme(std::string_view s) {
  if (s.empty() || std::isalpha(static_cast<unsigned char>(s[0])) == 0) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
  });
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// One `host[:port]` of the authority (IPv6 hosts in brackets), percent-decoded.
result<std::pair<std::string, std::optional<std::uint16_t>>> parse_host_port(
    std::string_view authority) {
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos) {
      return fail(runtime_errc::invalid_argument, "unterminated '[' in the URL host");
    }
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':')
        return fail(runtime_errc::invalid_argument, "junk after ']' in the URL host");
      port = after.substr(1);
      if (port.empty()) return fail(runtime_errc::invalid_argument, "empty port in the URL");
    }
  } else if (auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (port.empty()) return fail(runtime_errc::invalid_argument, "empty port in the URL");
  }
  BABELQUEUE_TRY_LET(h, percent_decode(host, "host"));
  std::pair<std::string, std::optional<std::uint16_t>> out{std::move(*h), std::nullopt};
  if (!port.empty()) {
    unsigned value = 0;
    auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc{} || p != port.data() + port.size() || value == 0 || value > 65535) {
      // Quote the port only when it is digits: text that is not a number is most often a
      // password whose raw `/`, `?`, `#` or `@` ended the userinfo early, and is never shown.
      const bool digits = port.find_first_not_of("0123456789") == std::string_view::npos;
      return fail(runtime_errc::invalid_argument,
                  digits ? "URL port must be 1..65535, got " + std::string(port)
                         : std::string("URL port is not a number (if the URL carries a password, "
                                       "percent-encode its reserved characters: / as %2F, "
                                       "? as %3F, # as %23, @ as %40, : as %3A)"));
    }
    out.second = static_cast<std::uint16_t>(value);
  }
  return out;
}

}  // namespace

result<broker_url> broker_url::parse(std::string_view url) {
  broker_url u;
  const auto sep = url.find("://");
  if (sep == std::string_view::npos) {
    return fail(runtime_errc::invalid_argument, "broker URL must look like scheme://...: '" +
                                                    redact_url(url).substr(0, 64) +
                                                    "'");  // redact first: a cut may hide the '@'
  }
  if (!valid_scheme(url.substr(0, sep))) {
    return fail(runtime_errc::invalid_argument,
                "bad URL scheme '" + redact_url(url.substr(0, sep)) + "'");
  }
  u.scheme = lower(url.substr(0, sep));
  std::string_view rest = url.substr(sep + 3);

  // The fragment is meaningless for a broker; refuse it rather than guess.
  if (rest.find('#') != std::string_view::npos) {
    return fail(runtime_errc::invalid_argument, "a broker URL cannot carry a #fragment");
  }
  std::string_view query;
  if (auto q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  std::string_view authority = rest;
  std::string_view path;
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    authority = rest.substr(0, slash);
    path = rest.substr(slash);
  }
  // userinfo: the last '@' of the authority (a password may contain an encoded '@' only).
  if (auto at = authority.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
    std::string_view user = userinfo;
    if (auto colon = userinfo.find(':'); colon != std::string_view::npos) {
      user = userinfo.substr(0, colon);
      BABELQUEUE_TRY_LET(pw, percent_decode(userinfo.substr(colon + 1), "password"));
      u.password = std::move(*pw);
      u.has_password = true;
    }
    BABELQUEUE_TRY_LET(us, percent_decode(user, "user"));
    u.user = std::move(*us);
  }
  // `kafka://a:9092,b:9092`: a comma-separated host list (first in host/port, the others
  // in more_hosts).
  std::string_view first = authority.substr(0, authority.find(','));
  BABELQUEUE_TRY_LET(hp, parse_host_port(first));
  u.host = std::move(hp->first);
  u.port = hp->second;
  for (std::string_view others = authority.substr(first.size()); !others.empty();) {
    others.remove_prefix(1);  // the ','
    std::string_view item = others.substr(0, others.find(','));
    others.remove_prefix(item.size());
    BABELQUEUE_TRY_LET(more, parse_host_port(item));
    if (more->first.empty())
      return fail(runtime_errc::invalid_argument, "empty host in the URL host list");
    u.more_hosts.push_back(std::move(*more));
  }
  BABELQUEUE_TRY_LET(pa, percent_decode(path, "path"));
  u.path = std::move(*pa);

  // A piece without `=` right after a secret option is part of that secret (a raw `&` inside
  // a token or password): kept in its value, so that it is neither an unknown option quoted in
  // an error nor shown by redact_url(), which reads it the same way.
  std::string* secret_value = nullptr;
  while (!query.empty()) {
    std::string_view pair = query;
    if (auto amp = query.find('&'); amp != std::string_view::npos) {
      pair = query.substr(0, amp);
      query = query.substr(amp + 1);
    } else {
      query = {};
    }
    if (secret_value != nullptr && pair.find('=') == std::string_view::npos) {
      BABELQUEUE_TRY_LET(more, percent_decode(pair, "query value"));
      *secret_value += '&' + *more;
      continue;
    }
    secret_value = nullptr;
    if (pair.empty()) continue;
    std::string_view key = pair, value;
    if (auto eq = pair.find('='); eq != std::string_view::npos) {
      key = pair.substr(0, eq);
      value = pair.substr(eq + 1);
    }
    BABELQUEUE_TRY_LET(k, percent_decode(key, "query key"));
    BABELQUEUE_TRY_LET(v, percent_decode(value, "query value"));
    if (k->empty())
      return fail(runtime_errc::invalid_argument, "empty option name in the URL query");
    const bool secret = is_secret_option(*k);
    auto [it, added] = u.query.emplace(std::move(*k), std::move(*v));
    if (!added) {
      return fail(runtime_errc::invalid_argument,
                  "option '" + std::string(key) + "' given twice in the URL query");
    }
    if (secret) secret_value = &it->second;
  }
  return u;
}

std::string broker_url::redacted() const {
  std::string out = scheme + "://";
  if (!user.empty() || has_password) {
    out += user;
    if (has_password) out += ":***";
    out += '@';
  }
  if (host.find(':') != std::string::npos) {
    out += '[' + host + ']';
  } else {
    out += host;
  }
  if (port) out += ':' + std::to_string(*port);
  for (const auto& [h, p] : more_hosts) {
    out += ',';
    out += h.find(':') != std::string::npos ? '[' + h + ']' : h;
    if (p) out += ':' + std::to_string(*p);
  }
  out += path;
  char sep = '?';
  for (const auto& [k, v] : query) {
    out += sep;
    out += k;
    out += '=';
    out += is_secret_option(k) ? std::string("***") : v;
    sep = '&';
  }
  return out;
}

bool is_secret_option(std::string_view key) {
  std::string k = lower(key);
  const auto ends_with = [&](std::string_view suffix) {
    return k.size() >= suffix.size() &&
           k.compare(k.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  // A file or path names where a secret is, not the secret: show it.
  if (ends_with("_file") || ends_with("_path") || ends_with("-file") || ends_with("-path")) {
    return false;
  }
  for (std::string_view word : {"pass", "secret", "token", "sas", "signature", "credential", "auth",
                                "private", "apikey", "api_key"}) {
    if (k.find(word) != std::string::npos) return true;
  }
  return k == "key" || ends_with("_key") || ends_with("-key") || ends_with("key_value");
}

namespace {

// `text` (what follows a URL's userinfo, or a whole URL without one) with every secret query
// value replaced by `***` and any `#fragment` dropped. Pairs are looked for after every `?`
// and `&`, not only in a well-formed query: when a password's raw `@` moved the userinfo's
// end, the query may start anywhere. A piece without `=` that follows a secret value is taken
// as part of it (`token=ab&cd`: a raw `&` inside the secret).
void append_redacted_rest(std::string& out, std::string_view text) {
  constexpr auto npos = std::string_view::npos;
  text = text.substr(0, text.find('#'));
  auto end = text.find_first_of("?&");
  out.append(text.substr(0, end));  // the host and path
  bool in_secret = false;
  while (end != npos) {
    const char separator = text[end];
    const auto start = end + 1;
    end = text.find_first_of("?&", start);
    const std::string_view piece = text.substr(start, end == npos ? npos : end - start);
    const auto eq = piece.find('=');
    if (in_secret && eq == npos) continue;  // still the secret's value
    out += separator;
    in_secret = false;
    if (eq != npos) {
      const std::string_view key = piece.substr(0, eq);
      auto decoded = percent_decode(key, "query");
      in_secret = is_secret_option(decoded ? *decoded : std::string(key));
    }
    if (in_secret) {
      out.append(piece.substr(0, eq));
      out += "=***";
    } else {
      out.append(piece);
    }
  }
}

}  // namespace

std::string redact_url(std::string_view url) {
  std::string out;
  out.reserve(url.size());
  const auto sep = url.find("://");
  if (sep == std::string_view::npos || !valid_scheme(url.substr(0, sep))) {
    // No scheme (a `://` after anything but a scheme may be inside a password): cannot tell
    // a user from a secret, so everything before the last `@` goes.
    if (const auto at = url.rfind('@'); at != std::string_view::npos) {
      out += "***";
      out += '@';
      append_redacted_rest(out, url.substr(at + 1));
    } else {
      append_redacted_rest(out, url);
    }
    return out;
  }
  out.append(url.substr(0, sep + 3));
  std::string_view rest = url.substr(sep + 3);
  // The userinfo ends at the LAST `@` of the whole text, not of the authority: a password
  // that holds a raw `/`, `?` or `#` (a SAS key holds `/` about half the time) would otherwise
  // be read as host, path or query and printed. When that `@` belongs to a query value
  // instead (`?user=me@corp`), the host and port are hidden too: over-redacting a log line
  // is the safe side.
  if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = rest.substr(0, at);
    if (const auto colon = userinfo.find(':'); colon != std::string_view::npos) {
      out.append(userinfo.substr(0, colon));
      out += ":***@";
      std::string_view after = rest.substr(at + 1);
      const auto query_like = userinfo.find_first_of("?&");
      if (query_like != std::string_view::npos &&
          userinfo.find('=', query_like) != std::string_view::npos) {
        // The `@` may be inside a query value (`?token=ab@cd&...`): what follows it up to the
        // next option may be the rest of that secret.
        const auto next = after.find_first_of("?&");
        out += "***";
        after = next == std::string_view::npos ? std::string_view() : after.substr(next);
      }
      append_redacted_rest(out, after);
      return out;
    }
  }
  append_redacted_rest(out, rest);
  return out;
}

result<std::chrono::milliseconds> parse_duration(std::string_view text) {
  std::int64_t n = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || p == text.data() || n < 0) {
    return fail(runtime_errc::invalid_argument,
                "bad duration '" + std::string(text) + "' (use e.g. 250ms, 5s, 1m)");
  }
  std::string_view unit(p, static_cast<std::size_t>(text.data() + text.size() - p));
  std::int64_t factor = 0;
  if (unit.empty() || unit == "ms") {
    factor = 1;
  } else if (unit == "s") {
    factor = 1000;
  } else if (unit == "m") {
    factor = 60000;
  } else {
    return fail(runtime_errc::invalid_argument,
                "bad duration unit in '" + std::string(text) + "' (use ms, s or m)");
  }
  if (n > std::numeric_limits<std::int64_t>::max() / factor) {
    return fail(runtime_errc::invalid_argument,
                "duration '" + std::string(text) + "' is too large");
  }
  return std::chrono::milliseconds(n * factor);
}

namespace {

// `key=value` for an error message, the value hidden when the option is a secret.
std::string shown(std::string_view key, std::string_view value) {
  return std::string(key) + "=" + (is_secret_option(key) ? std::string("***") : std::string(value));
}

}  // namespace

std::optional<std::string> query_options::take(std::string_view key) {
  auto it = remaining_.find(key);
  if (it == remaining_.end()) return std::nullopt;
  std::string v = std::move(it->second);
  remaining_.erase(it);
  return v;
}

result<void> query_options::get(std::string_view key, std::string& out) {
  if (auto v = take(key)) out = std::move(*v);
  return {};
}

result<void> query_options::get(std::string_view key, std::int64_t& out) {
  return get(key, out, std::numeric_limits<std::int64_t>::min(),
             std::numeric_limits<std::int64_t>::max());
}

result<void> query_options::get(std::string_view key, std::int64_t& out, std::int64_t min,
                                std::int64_t max) {
  auto v = take(key);
  if (!v) return {};
  std::int64_t n = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc{} || p != v->data() + v->size() || v->empty()) {
    return fail(runtime_errc::invalid_argument, "option " + shown(key, *v) + " is not an integer");
  }
  if (n < min || n > max) {
    return fail(runtime_errc::invalid_argument, "option " + shown(key, *v) + " is out of range " +
                                                    std::to_string(min) + ".." +
                                                    std::to_string(max));
  }
  out = n;
  return {};
}

result<void> query_options::get(std::string_view key, bool& out) {
  auto v = take(key);
  if (!v) return {};
  const std::string s = lower(*v);
  if (s == "1" || s == "true" || s == "yes" || s == "on") {
    out = true;
  } else if (s == "0" || s == "false" || s == "no" || s == "off") {
    out = false;
  } else {
    return fail(runtime_errc::invalid_argument,
                "option " + shown(key, *v) + " is not a boolean (true/false)");
  }
  return {};
}

result<void> query_options::get(std::string_view key, std::chrono::milliseconds& out) {
  auto v = take(key);
  if (!v) return {};
  auto d = parse_duration(*v);
  if (!d) {
    return fail(runtime_errc::invalid_argument,
                "option " + std::string(key) + ": " +
                    (is_secret_option(key) ? std::string("not a duration") : d.error().message));
  }
  out = *d;
  return {};
}

result<void> query_options::finish(std::string_view scheme) const {
  if (remaining_.empty()) return {};
  std::string names;
  for (const auto& [k, v] : remaining_) {
    if (!names.empty()) names += ", ";
    names += k;
  }
  return fail(runtime_errc::invalid_argument,
              "unknown option(s) for " + std::string(scheme) + "://: " + names);
}

}  // namespace v1
}  // namespace babelqueue
