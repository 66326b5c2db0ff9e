// Transport registration, the default broker URL and the signal watcher (broker.hpp).
#include "commands/runtime/broker.hpp"

#include "signals.hpp"

#ifdef BABELQUEUE_HAVE_MEMORY
#include <babelqueue/memory/memory_transport.hpp>
#endif
#ifdef BABELQUEUE_HAVE_SQLITE
#include <babelqueue/sqlite/sqlite_transport.hpp>
#endif
#ifdef BABELQUEUE_HAVE_REDIS
#include <babelqueue/redis/redis_transport.hpp>
#endif
#ifdef BABELQUEUE_HAVE_RABBITMQ
#include <babelqueue/rabbitmq/rabbitmq_transport.hpp>
#endif
#ifdef BABELQUEUE_HAVE_KAFKA
#include <babelqueue/kafka/kafka_transport.hpp>
#endif
#ifdef BABELQUEUE_HAVE_ARTEMIS
#include <babelqueue/artemis/artemis_transport.hpp>
#endif
#ifdef BABELQUEUE_HAVE_ASB
#include <babelqueue/asb/asb_transport.hpp>
#endif
#ifdef BABELQUEUE_HAVE_PULSAR
#include <babelqueue/pulsar/pulsar_transport.hpp>
#endif
#ifdef BABELQUEUE_HAVE_SQS
#include <babelqueue/sqs/sqs_transport.hpp>
#endif

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <mutex>

namespace babelqueue::cli {
namespace {

// Percent-encodes what url.hpp's parser would otherwise read as syntax.
[[maybe_unused]] std::string url_escape_path(const std::string& path) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if (c == '%' || c == '?' || c == '#' || c == ' ' || c == '@' || c < 0x20 || c == 0x7f) {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

void register_builtin_transports() {
  static std::once_flag once;
  std::call_once(once, [] {
#ifdef BABELQUEUE_HAVE_MEMORY
    babelqueue::memory::register_transport();
#endif
#ifdef BABELQUEUE_HAVE_SQLITE
    babelqueue::sqlite::register_transport();
#endif
#ifdef BABELQUEUE_HAVE_REDIS
    babelqueue::redis::register_transport();
#endif
#ifdef BABELQUEUE_HAVE_RABBITMQ
    babelqueue::rabbitmq::register_transport();
#endif
#ifdef BABELQUEUE_HAVE_KAFKA
    babelqueue::kafka::register_transport();
#endif
#ifdef BABELQUEUE_HAVE_ARTEMIS
    babelqueue::artemis::register_transport();
#endif
#ifdef BABELQUEUE_HAVE_ASB
    babelqueue::asb::register_transport();
#endif
#ifdef BABELQUEUE_HAVE_SQS
    babelqueue::sqs::register_transport();
#endif
#ifdef BABELQUEUE_HAVE_PULSAR
    babelqueue::pulsar::register_transport();
#endif
  });
}

std::string default_broker_url() {
  if (const char* env = std::getenv("BABELQUEUE_BROKER"); env != nullptr && *env != '\0') {
    return env;
  }
#ifdef BABELQUEUE_HAVE_SQLITE
  std::filesystem::path state;
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && *xdg == '/') {
    state = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
    state = std::filesystem::path(home) / ".local" / "state";
  } else {
    state = std::filesystem::temp_directory_path();
  }
  const auto dir = state / "babelqueue";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);  // a failure surfaces when sqlite opens it
  return "sqlite://" + url_escape_path((dir / "queue.db").string());
#else
  return "memory://";
#endif
}

CLI::Option* add_broker_option(CLI::App* cmd, std::string& url) {
  return cmd->add_option(
      "--broker", url,
      "Broker URL (memory://NAME, sqlite://PATH, redis://HOST:PORT, "
      "amqp://USER:PASS@HOST:PORT/VHOST, "
      "kafka://HOST:PORT, artemis://USER:PASS@HOST:PORT, sb://KEYNAME:KEY@NAMESPACE, "
      "sqs://REGION?endpoint=URL ...). Default: "
      "$BABELQUEUE_BROKER, else " +
#ifdef BABELQUEUE_HAVE_SQLITE
          std::string("sqlite://$XDG_STATE_HOME/babelqueue/queue.db "
                      "(~/.local/state/babelqueue/queue.db)")
#else
          std::string("memory:// (in-process only: it does not outlive the command)")
#endif
  );
}

void print_security_warnings(const transport& t) {
  for (const auto& w : t.security_warnings()) std::cerr << "babelqueue warn: " << w << "\n";
}

std::string resolve_broker(const std::string& url) {
  return url.empty() ? default_broker_url() : url;
}

signal_watch::signal_watch(std::function<void()> on_signal) : on_signal_(std::move(on_signal)) {
  id_ = register_signal_handler([this] {
    signalled_.store(true);
    if (on_signal_) on_signal_();
  });
}

signal_watch::~signal_watch() { unregister_signal_handler(id_); }

}  // namespace babelqueue::cli
