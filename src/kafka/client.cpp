// librdkafka configuration from kafka::options, client creation and the log callback (see
// client.hpp).
#include "kafka/client.hpp"

#include "core/propagate.hpp"

#include <array>
#include <cstdio>

namespace babelqueue::inline v1::kafka::detail {

namespace {

// syslog levels, as librdkafka reports them.
log_level level_of(int syslog_level) {
  if (syslog_level <= 3) return log_level::error;
  if (syslog_level == 4) return log_level::warn;
  if (syslog_level <= 6) return log_level::info;
  return log_level::debug;
}

// librdkafka reports connection trouble twice: a log line (facility FAIL) and an error
// event. Without this callback the event is logged again at error level; librdkafka retries
// these itself, so only a fatal error is an error here.
void on_error(rd_kafka_t* rk, int err, const char* reason, void* /*opaque*/) {
  const auto code = static_cast<rd_kafka_resp_err_t>(err);
  const bool fatal = code == RD_KAFKA_RESP_ERR__FATAL;
  const bool noise =
      code == RD_KAFKA_RESP_ERR__TRANSPORT || code == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN;
  log_line(rk, fatal ? 3 : noise ? 7 : 4, "ERROR", reason);
}

result<void> set_common(rd_kafka_conf_t* conf, const options& o, client_context* ctx) {
  std::string brokers;
  for (const auto& b : o.brokers) brokers += (brokers.empty() ? "" : ",") + b;
  rd_kafka_conf_set_opaque(conf, ctx);
  rd_kafka_conf_set_log_cb(conf, &log_line);
  rd_kafka_conf_set_error_cb(conf, &on_error);
  const std::array<std::pair<const char*, const std::string*>, 9> typed{{
      {"bootstrap.servers", &brokers},
      {"client.id", &o.client_id},
      {"security.protocol", &o.security_protocol},
      {"sasl.mechanism", &o.sasl_mechanism},
      {"sasl.username", &o.sasl_username},
      {"sasl.password", &o.sasl_password},
      {"ssl.ca.location", &o.ssl_ca_location},
      {"ssl.certificate.location", &o.ssl_certificate_location},
      {"ssl.key.location", &o.ssl_key_location},
  }};
  for (const auto& [name, value] : typed) {
    if (value->empty()) continue;
    if (auto r = set_property(conf, name, *value); !r) return r;
  }
  if (!o.ssl_key_password.empty()) {
    if (auto r = set_property(conf, "ssl.key.password", o.ssl_key_password); !r) return r;
  }
  return {};
}

result<void> set_passthrough(rd_kafka_conf_t* conf, const options& o) {
  for (const auto& [name, value] : o.rdkafka) {
    if (auto r = set_property(conf, name, value); !r) return r;
  }
  return {};
}

}  // namespace

void log_line(const rd_kafka_t* rk, int level, const char* facility, const char* text) {
  // Pass-through properties go to the producer and the consumers alike (kafka_transport.hpp),
  // so librdkafka's "is a consumer property and will be ignored by this producer" notes are
  // expected, not news.
  if (std::string_view(facility) == "CONFWARN" &&
      std::string_view(text).find("property and will be ignored by this") !=
          std::string_view::npos) {
    return;
  }
  const auto* ctx = static_cast<const client_context*>(rd_kafka_opaque(rk));
  std::string line = "kafka ";
  if (ctx != nullptr && !ctx->name.empty()) line += ctx->name + " ";
  line += std::string(facility) + ": " + text;
  const log_sink* sink = ctx != nullptr ? ctx->log.load() : nullptr;
  if (sink != nullptr && *sink) {
    try {
      (*sink)(level_of(level), line);
    } catch (...) {  // a sink must not throw; never let it unwind into librdkafka
    }
    return;
  }
  // Without a sink only warnings and errors reach stderr (as the CLI's default logger would
  // show them); librdkafka's informational lines need options::log.
  if (level > 4) return;
  std::fprintf(stderr, "babelqueue %s: %s\n", std::string(to_string(level_of(level))).c_str(),
               line.c_str());
}

result<void> set_property(rd_kafka_conf_t* conf, const std::string& name,
                          const std::string& value) {
  std::array<char, 512> err{};
  if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), err.data(), err.size()) !=
      RD_KAFKA_CONF_OK) {
    return fail(error_info(transport_errc::invalid_argument,
                           "kafka property " + name + ": " + err.data(), {},
                           native_error{"librdkafka", 0, err.data()}));
  }
  return {};
}

result<conf_ptr> producer_conf(const options& o, client_context* ctx) {
  conf_ptr conf(rd_kafka_conf_new());
  BABELQUEUE_TRY(set_common(conf.get(), o, ctx));
  const bool all = o.acks == "all" || o.acks == "-1";
  const std::pair<const char*, std::string> props[] = {
      {"acks", all ? std::string("all") : o.acks},
      // librdkafka's own retries never duplicate a record (needs acks=all).
      {"enable.idempotence", all ? "true" : "false"},
      {"linger.ms", std::to_string(o.linger.count())},
      {"batch.num.messages", std::to_string(o.batch)},
      {"compression.codec", o.compression},
      // A record not acknowledged within operation_timeout fails with _MSG_TIMED_OUT, so the
      // delivery report publish() waits for always arrives within its bound.
      {"message.timeout.ms", std::to_string(o.operation_timeout.count())},
  };
  for (const auto& [name, value] : props) {
    BABELQUEUE_TRY(set_property(conf.get(), name, value));
  }
  BABELQUEUE_TRY(set_passthrough(conf.get(), o));
  return conf;
}

result<conf_ptr> consumer_conf(const options& o, client_context* ctx) {
  conf_ptr conf(rd_kafka_conf_new());
  BABELQUEUE_TRY(set_common(conf.get(), o, ctx));
  const std::pair<const char*, std::string> props[] = {
      {"group.id", o.group},
      // Process-then-commit: offsets are stored and committed by the transport only.
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
      {"auto.offset.reset", "earliest"},
      // Subscribing creates a missing topic where the broker allows it (as producing does),
      // so a consumer started before its first publisher is assigned at once.
      {"allow.auto.create.topics", "true"},
      {"enable.partition.eof", "false"},
  };
  for (const auto& [name, value] : props) {
    BABELQUEUE_TRY(set_property(conf.get(), name, value));
  }
  BABELQUEUE_TRY(set_passthrough(conf.get(), o));
  return conf;
}

result<handle_ptr> create_client(rd_kafka_type_t type, conf_ptr conf) {
  std::array<char, 512> err{};
  rd_kafka_t* rk = rd_kafka_new(type, conf.get(), err.data(), err.size());
  if (rk == nullptr) {
    // The configuration is refused as a whole (e.g. an inconsistent property combination).
    return fail(error_info(transport_errc::invalid_argument,
                           std::string("kafka client: ") + err.data(), {},
                           native_error{"librdkafka", 0, err.data()}));
  }
  (void)conf.release();  // rd_kafka_new took it
  return handle_ptr(rk);
}

// Creates the topics that do not exist yet (broker defaults for partitions and
// replication), so the subscription is assigned them at once: a consumer learns of a topic
// created later only at its next metadata refresh (minutes). A refusal (e.g. no CREATE
// permission; the topics are provisioned) is not an error here.
void create_missing_topics(rd_kafka_t* rk, const std::vector<std::string>& topics,
                           std::chrono::milliseconds timeout) {
  std::vector<rd_kafka_NewTopic_t*> news;
  for (const auto& t : topics) {
    char err[256];
    if (auto* nt = rd_kafka_NewTopic_new(t.c_str(), -1, -1, err, sizeof err)) news.push_back(nt);
  }
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
  rd_kafka_CreateTopics(rk, news.data(), news.size(), nullptr, q);
  if (rd_kafka_event_t* ev = rd_kafka_queue_poll(q, static_cast<int>(timeout.count()))) {
    rd_kafka_event_destroy(ev);
  }
  rd_kafka_queue_destroy(q);
  rd_kafka_NewTopic_destroy_array(news.data(), news.size());
}

}  // namespace babelqueue::inline v1::kafka::detail
