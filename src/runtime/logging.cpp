// The observer seam's spellings and formatting (observer.hpp) and the ready-made logging
// observers (logging.hpp).
#include <babelqueue/runtime/logging.hpp>

#include <cstdio>
#include <mutex>
#include <string>

namespace babelqueue {
inline namespace v1 {

std::string_view to_string(log_level level) noexcept {
  switch (level) {
    case log_level::debug:
      return "debug";
    case log_level::info:
      return "info";
    case log_level::warn:
      return "warn";
    case log_level::error:
      return "error";
    case log_level::off:
      return "off";
  }
  return "unknown";
}

std::string_view to_string(publish_kind kind) noexcept {
  switch (kind) {
    case publish_kind::app:
      return "app";
    case publish_kind::message:
      return "message";
    case publish_kind::retry:
      return "retry";
    case publish_kind::dead_letter:
      return "dead_letter";
  }
  return "unknown";
}

std::string_view to_string(process_outcome outcome) noexcept {
  switch (outcome) {
    case process_outcome::acked:
      return "acked";
    case process_outcome::retried:
      return "retried";
    case process_outcome::dead_lettered:
      return "dead_lettered";
    case process_outcome::dropped:
      return "dropped";
    case process_outcome::released:
      return "released";
    case process_outcome::rejected:
      return "rejected";
    case process_outcome::unsettled:
      return "unsettled";
  }
  return "unknown";
}

std::string format(const log_record& record) {
  std::string out(record.message);
  bool open = false;
  auto field = [&](std::string_view key, std::string_view value) {
    if (value.empty()) return;
    out += open ? " " : " [";
    open = true;
    out += key;
    out += '=';
    out += value;
  };
  field("queue", record.queue);
  field("urn", record.urn);
  field("id", record.id);
  field("trace_id", record.trace_id);
  if (record.attempts) field("attempts", std::to_string(*record.attempts));
  if (open) out += ']';
  return out;
}

void stderr_logger::on_log(const log_record& record) {
  if (record.level < min_level()) return;
  std::string line = "babelqueue ";
  line += to_string(record.level);
  line += ": ";
  line += format(record);
  line += '\n';
  // One mutex for all stderr loggers: lines from concurrent workers never interleave.
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

namespace {

class sink_observer final : public observer {
 public:
  sink_observer(log_sink sink, log_level level) : sink_(std::move(sink)), level_(level) {}
  log_level min_level() const noexcept override { return sink_ ? level_ : log_level::off; }
  void on_log(const log_record& record) override {
    if (sink_ && record.level >= level_) sink_(record.level, format(record));
  }

 private:
  log_sink sink_;
  log_level level_;
};

}  // namespace

std::shared_ptr<observer> observer_from_log_sink(log_sink sink, log_level min_level) {
  return std::make_shared<sink_observer>(std::move(sink), min_level);
}

}  // namespace v1
}  // namespace babelqueue
