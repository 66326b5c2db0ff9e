#pragma once
// What the producer and the consumers share: librdkafka handles owned by unique_ptr, the
// configuration built from kafka::options (librdkafka validates each property: a typo fails
// with its own message) and the log callback into options::log; the one mapping of a
// librdkafka error code to an error_info is errors.hpp (docs/errors.md "kafka://").
//
// Thread-safety: pure functions; the log callback runs on librdkafka's threads and only
// calls options::log (which must be thread-safe) or writes one line to stderr.
#include "kafka/errors.hpp"

#include <babelqueue/error.hpp>
#include <babelqueue/kafka/kafka_transport.hpp>
#include <babelqueue/runtime/error.hpp>

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::inline v1::kafka::detail {

struct conf_deleter {
  void operator()(rd_kafka_conf_t* c) const noexcept { rd_kafka_conf_destroy(c); }
};
using conf_ptr = std::unique_ptr<rd_kafka_conf_t, conf_deleter>;

struct handle_deleter {
  void operator()(rd_kafka_t* k) const noexcept { rd_kafka_destroy(k); }
};
using handle_ptr = std::unique_ptr<rd_kafka_t, handle_deleter>;

struct partition_list_deleter {
  void operator()(rd_kafka_topic_partition_list_t* l) const noexcept {
    rd_kafka_topic_partition_list_destroy(l);
  }
};
using partition_list_ptr = std::unique_ptr<rd_kafka_topic_partition_list_t, partition_list_deleter>;

struct message_deleter {
  void operator()(rd_kafka_message_t* m) const noexcept { rd_kafka_message_destroy(m); }
};
using message_ptr = std::unique_ptr<rd_kafka_message_t, message_deleter>;

/// The opaque every client of this binding registers (rd_kafka_conf_set_opaque): its log
/// destination. Producer and consumer state derive from it.
struct client_context {
  /// options::log, or nullptr for stderr. Atomic: a consumer whose close ran out of time is
  /// destroyed on a thread of its own after its transport is gone, and silenced first.
  std::atomic<const log_sink*> log{nullptr};
  std::string name;  ///< `producer` or `consumer <topic>`, for log lines
};

/// The properties every client gets (bootstrap, client id, security, logging, pass-through
/// last), then `role`'s own. `ctx` must outlive the client.
result<conf_ptr> producer_conf(const options& o, client_context* ctx);
result<conf_ptr> consumer_conf(const options& o, client_context* ctx);

/// One line from librdkafka (or about it): to the client's options::log, else — warnings and
/// errors only (syslog `level` <= 4) — to stderr. Runs on librdkafka's threads too.
void log_line(const rd_kafka_t* rk, int level, const char* facility, const char* text);

/// Sets one property; transport_errc::invalid_argument with librdkafka's message.
result<void> set_property(rd_kafka_conf_t* conf, const std::string& name, const std::string& value);

/// Creates the client (taking `conf` on success).
result<handle_ptr> create_client(rd_kafka_type_t type, conf_ptr conf);

/// Creates those of `topics` that do not exist (broker-default partitions and replication),
/// so that a new subscription is assigned them at once; refusals are ignored.
void create_missing_topics(rd_kafka_t* rk, const std::vector<std::string>& topics,
                           std::chrono::milliseconds timeout);

}  // namespace babelqueue::inline v1::kafka::detail
