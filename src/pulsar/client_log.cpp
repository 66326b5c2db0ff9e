// The Pulsar client's log lines → the process-wide sink of set_client_log_sink(), or, without
// one, its warnings and errors to stderr. The client logs through one process-wide factory
// and caches a logger per source file and thread, so the loggers hold no state of their own:
// each line reads the current sink.
#include "pulsar/client_log.hpp"

#include <babelqueue/pulsar/pulsar_transport.hpp>

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

namespace babelqueue::inline v1::pulsar {

namespace {

struct sink_state {
  log_sink sink;
  log_level min_level = log_level::warn;
};

std::mutex& sink_mutex() {
  static std::mutex m;
  return m;
}

std::shared_ptr<const sink_state>& current() {
  static std::shared_ptr<const sink_state> state = std::make_shared<const sink_state>();
  return state;
}

// The level, read on every isEnabled() (the client asks before each line, also on hot
// paths): an atomic, not the mutex.
std::atomic<int> enabled_from{static_cast<int>(log_level::warn)};

std::shared_ptr<const sink_state> load() {
  std::lock_guard lock(sink_mutex());
  return current();
}

log_level level_of(::pulsar::Logger::Level level) {
  switch (level) {
    case ::pulsar::Logger::LEVEL_DEBUG:
      return log_level::debug;
    case ::pulsar::Logger::LEVEL_INFO:
      return log_level::info;
    case ::pulsar::Logger::LEVEL_WARN:
      return log_level::warn;
    case ::pulsar::Logger::LEVEL_ERROR:
      break;
  }
  return log_level::error;
}

class forwarding_logger final : public ::pulsar::Logger {
 public:
  explicit forwarding_logger(std::string file) : file_(std::move(file)) {}

  bool isEnabled(Level level) override {
    return static_cast<int>(level_of(level)) >= enabled_from.load(std::memory_order_relaxed);
  }

  void log(Level level, int line, const std::string& message) override {
    const auto state = load();
    const log_level lv = level_of(level);
    if (lv < state->min_level) return;
    std::string text = "pulsar " + file_ + ":" + std::to_string(line) + " " + message;
    if (state->sink) {
      try {
        state->sink(lv, text);
      } catch (...) {  // a sink must not throw; never let it unwind into the client
      }
      return;
    }
    std::fprintf(stderr, "babelqueue %s: %s\n", std::string(to_string(lv)).c_str(), text.c_str());
  }

 private:
  std::string file_;
};

class forwarding_factory final : public ::pulsar::LoggerFactory {
 public:
  ::pulsar::Logger* getLogger(const std::string& file) override {
    return new forwarding_logger(file);
  }
};

}  // namespace

void set_client_log_sink(log_sink sink, log_level min_level) {
  auto state = std::make_shared<sink_state>();
  if (sink) {
    state->sink = std::move(sink);
    state->min_level = min_level;
  }
  std::lock_guard lock(sink_mutex());
  enabled_from.store(static_cast<int>(state->min_level), std::memory_order_relaxed);
  current() = std::move(state);
}

namespace detail {

::pulsar::LoggerFactory* new_logger_factory() { return new forwarding_factory(); }

}  // namespace detail

}  // namespace babelqueue::inline v1::pulsar
