// kafka:// URL → options (1:1 with the query keys; see kafka_transport.hpp), the checks of
// options built in code, and the `retry_topics` list.
#include "kafka/options.hpp"

#include "core/propagate.hpp"

#include <babelqueue/bindings/kafka.hpp>

#include <algorithm>

namespace babelqueue::inline v1::kafka {

namespace {

constexpr std::string_view passthrough_prefix = "rdkafka.";

error_info bad(std::string what) {
  return error_info(transport_errc::invalid_argument, "kafka option " + std::move(what));
}

std::string host_port(const std::string& host, std::optional<std::uint16_t> port) {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return h + ":" + std::to_string(port.value_or(9092));
}

}  // namespace

result<std::vector<std::chrono::milliseconds>> parse_retry_topics(std::string_view text) {
  std::vector<std::chrono::milliseconds> tiers;
  if (text.empty()) return tiers;
  for (;;) {
    const auto comma = text.find(',');
    const auto item = text.substr(0, comma);
    auto d = parse_duration(item);
    if (!d || d->count() <= 0) {
      return fail(bad("retry_topics: '" + std::string(item) +
                      "' is not a positive duration (e.g. retry_topics=5s,1m,10m)"));
    }
    tiers.push_back(*d);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  std::sort(tiers.begin(), tiers.end());
  if (std::adjacent_find(tiers.begin(), tiers.end()) != tiers.end()) {
    return fail(bad("retry_topics lists the same delay twice"));
  }
  return tiers;
}

namespace detail {

result<void> validate(const options& o) {
  if (o.brokers.empty() ||
      std::any_of(o.brokers.begin(), o.brokers.end(), [](const auto& b) { return b.empty(); })) {
    return fail(bad("brokers must list at least one host:port"));
  }
  if (o.group.empty()) return fail(bad("group must not be empty"));
  if (o.acks != "all" && o.acks != "-1" && o.acks != "0" && o.acks != "1") {
    return fail(bad("acks must be all, -1, 0 or 1 (got '" + o.acks + "')"));
  }
  if (o.operation_timeout.count() <= 0) return fail(bad("operation_timeout must be > 0"));
  if (o.linger.count() < 0) return fail(bad("linger must be >= 0"));
  if (o.batch < 1 || o.batch > 1000000) return fail(bad("batch must be 1..1000000"));
  if (o.commit_interval.count() < 0) return fail(bad("commit_interval must be >= 0"));
  if (o.commit_batch < 1) return fail(bad("commit_batch must be >= 1"));
  if (!std::is_sorted(o.retry_topics.begin(), o.retry_topics.end()) ||
      std::adjacent_find(o.retry_topics.begin(), o.retry_topics.end()) != o.retry_topics.end() ||
      std::any_of(o.retry_topics.begin(), o.retry_topics.end(),
                  [](auto d) { return d.count() <= 0; })) {
    return fail(bad("retry_topics must be positive, distinct and sorted ascending"));
  }
  return {};
}

}  // namespace detail

result<options> options_from_url(const broker_url& url) {
  options o;
  if (url.scheme != "kafka") {
    return fail(transport_errc::invalid_argument,
                "not a kafka:// URL (scheme '" + url.scheme + "')");
  }
  if (!url.user.empty() || url.has_password) {
    return fail(bad("credentials go in sasl_username/sasl_password, not in the URL authority"));
  }
  if (!url.path.empty() && url.path != "/") {
    return fail(bad("a kafka:// URL has no path (topics are the queue names)"));
  }
  if (!url.host.empty()) {
    o.brokers = {host_port(url.host, url.port)};
    for (const auto& [h, p] : url.more_hosts) o.brokers.push_back(host_port(h, p));
  }

  // The pass-through properties are taken out before the typed keys.
  broker_url typed = url;
  for (auto it = typed.query.begin(); it != typed.query.end();) {
    if (it->first.rfind(passthrough_prefix, 0) == 0) {
      const std::string property = it->first.substr(passthrough_prefix.size());
      if (property.empty()) return fail(bad("'rdkafka.' needs a librdkafka property name"));
      o.rdkafka[property] = it->second;
      it = typed.query.erase(it);
    } else {
      ++it;
    }
  }
  query_options q(typed);
  BABELQUEUE_TRY(q.get("group", o.group));
  BABELQUEUE_TRY(q.get("client_id", o.client_id));
  BABELQUEUE_TRY(q.get("acks", o.acks));
  BABELQUEUE_TRY(q.get("linger", o.linger));
  BABELQUEUE_TRY(q.get("batch", o.batch));
  BABELQUEUE_TRY(q.get("compression", o.compression));
  BABELQUEUE_TRY(q.get("security_protocol", o.security_protocol));
  BABELQUEUE_TRY(q.get("sasl_mechanism", o.sasl_mechanism));
  BABELQUEUE_TRY(q.get("sasl_username", o.sasl_username));
  BABELQUEUE_TRY(q.get("sasl_password", o.sasl_password));
  BABELQUEUE_TRY(q.get("ssl_ca_location", o.ssl_ca_location));
  BABELQUEUE_TRY(q.get("ssl_certificate_location", o.ssl_certificate_location));
  BABELQUEUE_TRY(q.get("ssl_key_location", o.ssl_key_location));
  BABELQUEUE_TRY(q.get("ssl_key_password", o.ssl_key_password));
  std::string tiers;
  BABELQUEUE_TRY(q.get("retry_topics", tiers));
  BABELQUEUE_TRY_LET(parsed, parse_retry_topics(tiers));
  o.retry_topics = std::move(*parsed);
  BABELQUEUE_TRY(q.get("operation_timeout", o.operation_timeout));
  BABELQUEUE_TRY(q.get("commit_interval", o.commit_interval));
  BABELQUEUE_TRY(q.get("commit_batch", o.commit_batch));
  BABELQUEUE_TRY(q.finish("kafka"));
  BABELQUEUE_TRY(detail::validate(o));
  return o;
}

}  // namespace babelqueue::inline v1::kafka
