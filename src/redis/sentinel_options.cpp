#include "redis/sentinel_options.hpp"

#include <charconv>

namespace babelqueue::inline v1::redis::detail {

namespace {

constexpr std::uint16_t k_sentinel_port = 26379;
constexpr std::int64_t k_max_wait_replicas = 64;

result<void> invalid(std::string why) {
  return fail(transport_errc::invalid_argument, "redis option " + std::move(why));
}

}  // namespace

bool is_sentinel_scheme(std::string_view scheme) noexcept {
  return scheme == "redis+sentinel" || scheme == "rediss+sentinel";
}

result<void> read_sentinel_location(const broker_url& url, options& o) {
  o.sentinels.clear();
  if (!url.host.empty()) o.sentinels.push_back({url.host, url.port.value_or(k_sentinel_port)});
  for (const auto& [host, port] : url.more_hosts)
    o.sentinels.push_back({host, port.value_or(k_sentinel_port)});
  // Path: /<master-name>[/db]. Master names are Sentinel config words: no '/'.
  std::string_view path = url.path;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  const auto slash = path.find('/');
  o.master_name.assign(path.substr(0, slash));
  if (o.master_name.empty()) {
    return fail(transport_errc::invalid_argument, url.scheme +
                                                      ":// needs the master name as its path (" +
                                                      url.scheme + "://host:26379/mymaster[/db])");
  }
  if (slash != std::string_view::npos) {
    std::string_view db = path.substr(slash + 1);
    std::int64_t n = -1;
    auto [p, ec] = std::from_chars(db.data(), db.data() + db.size(), n);
    if (db.empty() || ec != std::errc() || p != db.data() + db.size()) {
      return fail(transport_errc::invalid_argument,
                  url.scheme +
                      ":// path must be /<master-name>[/db] with a database number, got '" +
                      url.path + "'");
    }
    o.db = n;
  }
  return {};
}

result<void> read_sentinel_query(query_options& q, options& o, bool sentinel_scheme) {
  if (sentinel_scheme) {
    if (auto r = q.get("sentinel_username", o.sentinel_username); !r) return r;
    if (auto r = q.get("sentinel_password", o.sentinel_password); !r) return r;
  }
  if (auto r = q.get("wait_replicas", o.wait_replicas); !r) return r;
  return q.get("wait_timeout", o.wait_timeout);
}

result<void> validate_sentinel(const options& o) {
  if (o.sentinels.empty()) {
    if (!o.master_name.empty() || !o.sentinel_username.empty() || !o.sentinel_password.empty())
      return invalid("master_name / sentinel_* need sentinels (a redis+sentinel:// URL)");
  } else {
    if (o.master_name.empty()) return invalid("master_name must not be empty with sentinels");
    for (const auto& s : o.sentinels) {
      if (s.host.empty()) return invalid("sentinels: a host must not be empty");
      if (s.port == 0) return invalid("sentinels: port must be 1..65535 (" + s.host + ")");
    }
  }
  if (o.wait_replicas < 0 || o.wait_replicas > k_max_wait_replicas) {
    return invalid("wait_replicas must be 0.." + std::to_string(k_max_wait_replicas) + " (got " +
                   std::to_string(o.wait_replicas) + ")");
  }
  if (o.wait_timeout.count() <= 0) return invalid("wait_timeout must be > 0");
  if (o.wait_replicas > 0 && o.wait_timeout >= o.command_timeout) {
    // The publish's socket timeout is command_timeout: WAIT must answer well within it.
    return invalid("wait_timeout must be below command_timeout");
  }
  return {};
}

}  // namespace babelqueue::inline v1::redis::detail
