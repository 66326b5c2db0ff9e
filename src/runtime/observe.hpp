#pragma once
// The runtime's side of the observer seam (observer.hpp): the list of attached observers,
// the level gate in front of every log record, exception swallowing, and the per-span state
// of each observer. Every entry point first tests empty(): no observer, no work.
#include <babelqueue/result.hpp>
#include <babelqueue/runtime/observer.hpp>
#include <babelqueue/text.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace detail {

/// How many log messages the runtime has built (text formatted) in this process. Exists so
/// tests can prove that a record below every observer's min_level() is never formatted.
std::uint64_t formatted_log_records() noexcept;
void count_formatted_log_record() noexcept;

/// Context of a log record (everything but level and message).
struct log_context {
  std::string_view queue, urn, id, trace_id;
  std::optional<std::int64_t> attempts;
  const error_info* error = nullptr;

  /// A record about a queue only (receive errors, decode warnings).
  static log_context of_queue(std::string_view q, const error_info* e = nullptr) noexcept {
    log_context c;
    c.queue = q;
    c.error = e;
    return c;
  }
};

/// The states one span collected from the observers' start hooks, one slot per observer;
/// inline for up to four observers (no allocation).
class span_states {
 public:
  explicit span_states(std::size_t n) {
    if (n > inline_.size()) more_.resize(n - inline_.size());
  }
  std::unique_ptr<span_state>& operator[](std::size_t i) {
    return i < inline_.size() ? inline_[i] : more_[i - inline_.size()];
  }

 private:
  std::array<std::unique_ptr<span_state>, 4> inline_{};
  std::vector<std::unique_ptr<span_state>> more_;
};

class observer_hub {
 public:
  observer_hub() = default;
  explicit observer_hub(const std::vector<std::shared_ptr<observer>>& list) {
    for (const auto& o : list) {
      if (o) list_.push_back(o.get());
    }
  }

  bool empty() const noexcept { return list_.empty(); }
  std::size_t size() const noexcept { return list_.size(); }

  /// Some observer wants records of `level`.
  bool wants(log_level level) const noexcept {
    if (level == log_level::off) return false;
    for (auto* o : list_) {
      if (wants(*o, level)) return true;
    }
    return false;
  }

  /// Formats (calls `text()`, which returns the message as a std::string) and delivers a
  /// record only when some observer wants `level`; otherwise does nothing at all.
  template <class Text>
  void log(log_level level, const log_context& ctx, Text&& text) const noexcept {
    if (!wants(level)) return;
    try {
      const std::string message = std::forward<Text>(text)();
      count_formatted_log_record();
      log_record r;
      r.level = level;
      r.message = message;
      r.queue = ctx.queue;
      r.urn = ctx.urn;
      r.id = ctx.id;
      r.trace_id = ctx.trace_id;
      r.attempts = ctx.attempts;
      r.error = ctx.error;
      for (auto* o : list_) {
        if (!wants(*o, level)) continue;
        try {
          o->on_log(r);
        } catch (...) {
          // An observer must not throw; its record is lost, the runtime goes on.
        }
      }
    } catch (...) {
      // Formatting failed (allocation): the record is lost.
    }
  }

  /// Calls `f(observer&)` on every observer, swallowing what each throws.
  template <class F>
  void each(F&& f) const noexcept {
    for (auto* o : list_) {
      try {
        f(*o);
      } catch (...) {
      }
    }
  }

  void publish_start(publish_info& info, span_states& states) const noexcept {
    for (std::size_t i = 0; i < list_.size(); ++i) {
      try {
        states[i] = list_[i]->on_publish_start(info);
      } catch (...) {
      }
    }
  }
  /// Reverse order; destroys each state right after its end hook.
  void publish_end(const publish_info& info, const error_info* error,
                   span_states& states) const noexcept {
    for (std::size_t i = list_.size(); i-- > 0;) {
      try {
        list_[i]->on_publish_end(info, error, states[i].get());
      } catch (...) {
      }
      destroy(states[i]);
    }
  }
  void process_start(const process_info& info, span_states& states) const noexcept {
    for (std::size_t i = 0; i < list_.size(); ++i) {
      try {
        states[i] = list_[i]->on_process_start(info);
      } catch (...) {
      }
    }
  }
  void process_end(const process_info& info, const process_result& result,
                   span_states& states) const noexcept {
    for (std::size_t i = list_.size(); i-- > 0;) {
      try {
        list_[i]->on_process_end(info, result, states[i].get());
      } catch (...) {
      }
      destroy(states[i]);
    }
  }

 private:
  static bool wants(const observer& o, log_level level) noexcept {
    const log_level min = o.min_level();
    return min != log_level::off && level >= min;
  }
  static void destroy(std::unique_ptr<span_state>& s) noexcept {
    try {
      s.reset();
    } catch (...) {
      // A throwing destructor is terminate() anyway in C++ (noexcept by default).
    }
  }

  std::vector<observer*> list_;  // owned by app_options::observers
};

/// A fresh envelope whose trace_id the runtime minted (publish_info::adoptable_trace_id):
/// `rebuild(trace_id)` makes and encodes it again with the trace an observer chose, and
/// returns the new envelope and body (owned by the caller, alive until the publish ends).
struct trace_adoption {
  using rebuilt = std::pair<const envelope*, std::string_view>;
  std::function<result<rebuilt>(const std::string& trace_id)> rebuild;
};

/// Runs `send(const headers&)` inside a publish span: with no observer, straight through
/// (no copy); otherwise copies the headers, lets start hooks change them (dropping what
/// they added when the transport carries no headers) and, for `adoption`, the trace_id;
/// sends; runs the end hooks. `send` reads the body from where `body` points (a rebuilt
/// envelope replaces it in place).
template <class Send>
result<void> observed_publish(const observer_hub& hub, publish_kind kind, std::string_view queue,
                              const envelope* env, std::string_view body, const headers& hdrs,
                              bool carries_headers, const received_message* inbound, Send&& send,
                              const trace_adoption* adoption = nullptr) {
  if (hub.empty()) return send(hdrs);
  headers sent = hdrs;
  std::string adopted;
  publish_info info{kind,
                    queue,
                    env != nullptr ? env->urn() : std::string_view{},
                    env,
                    body,
                    sent,
                    carries_headers,
                    inbound,
                    adoption != nullptr ? &adopted : nullptr};
  span_states states(hub.size());
  hub.publish_start(info, states);
  if (!carries_headers) sent = hdrs;  // what observers added cannot travel here
  result<void> r;
  if (adoption != nullptr && env != nullptr && !is_blank(adopted) && adopted != env->trace_id()) {
    auto again = adoption->rebuild(adopted);
    if (again) {
      info.env = again->first;
      info.body = again->second;
    } else {
      r = fail(again.error());
    }
  }
  info.adoptable_trace_id = nullptr;
  if (r) r = send(static_cast<const headers&>(sent));
  hub.publish_end(info, r ? nullptr : &r.error(), states);
  return r;
}

}  // namespace detail
}  // namespace v1
}  // namespace babelqueue
