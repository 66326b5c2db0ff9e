// The in-process reference outbox store (memory_store.hpp).
#include <babelqueue/outbox/error.hpp>
#include <babelqueue/outbox/memory_store.hpp>

namespace babelqueue {
inline namespace v1 {
namespace outbox {

// Ids are "ob-<N>" with N the 1-based insertion number, so a row's index is derived from
// its id instead of searched for (mark_* run once per row of every pass).
record* memory_store::find(std::string_view id) {
  constexpr std::string_view prefix = "ob-";
  if (id.size() <= prefix.size() || id.substr(0, prefix.size()) != prefix) return nullptr;
  std::size_t n = 0;
  for (char c : id.substr(prefix.size())) {
    if (c < '0' || c > '9' || n > rows_.size()) return nullptr;
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  return n >= 1 && n <= rows_.size() ? &rows_[n - 1] : nullptr;
}

result<std::string> memory_store::insert(std::string_view body, std::string_view queue,
                                         std::optional<due_time> deliver_at) {
  if (queue.empty()) return fail(errc::invalid_argument, "outbox: save needs a queue");
  std::lock_guard lock(mutex_);
  record r;
  r.id = "ob-" + std::to_string(next_++);
  r.queue = std::string(queue);
  r.body = std::string(body);
  r.deliver_at = deliver_at;
  rows_.push_back(r);
  return r.id;
}

result<std::string> memory_store::save(std::string_view body, std::string_view queue) {
  return insert(body, queue, std::nullopt);
}

result<std::string> memory_store::save_at(std::string_view body, std::string_view queue,
                                          due_time deliver_at) {
  return insert(body, queue, deliver_at);
}

result<std::vector<record>> memory_store::fetch_unpublished(std::size_t limit) {
  return fetch_due(limit, due_now());
}

result<std::vector<record>> memory_store::fetch_due(std::size_t limit, due_time until) {
  std::lock_guard lock(mutex_);
  std::vector<record> out;
  for (const auto& r : rows_) {
    if (out.size() >= limit) break;  // limit 0 fetches nothing (Go), not one row (Python/PHP)
    if (r.status == row_status::pending && (!r.deliver_at || *r.deliver_at <= until)) {
      out.push_back(r);
    }
  }
  return out;
}

result<void> memory_store::mark_published(std::span<const std::string> ids) {
  std::lock_guard lock(mutex_);
  for (const auto& id : ids) {
    if (record* r = find(id); r != nullptr && r->status == row_status::pending) {
      r->status = row_status::published;
    }
  }
  return {};
}

result<void> memory_store::mark_failed(std::string_view id, std::string_view reason) {
  std::lock_guard lock(mutex_);
  record* r = find(id);
  if (r == nullptr) return {};  // unknown ids are ignored, as every peer does
  ++r->attempts;
  r->last_error = std::string(reason.substr(0, 500));
  if (options_.park_after > 0 && r->attempts >= options_.park_after &&
      r->status == row_status::pending) {
    r->status = row_status::parked;
  }
  return {};
}

result<std::vector<record>> memory_store::list(const list_options& options) {
  std::lock_guard lock(mutex_);
  std::vector<record> out;
  for (const auto& r : rows_) {
    if (out.size() >= options.limit) break;
    if (!options.status || r.status == *options.status) out.push_back(r);
  }
  return out;
}

result<std::size_t> memory_store::retry(std::span<const std::string> ids) {
  std::lock_guard lock(mutex_);
  std::size_t changed = 0;
  for (const auto& id : ids) {
    if (record* r = find(id); r != nullptr && r->status == row_status::parked) {
      r->status = row_status::pending;
      r->attempts = 0;
      ++changed;
    }
  }
  return changed;
}

}  // namespace outbox
}  // namespace v1
}  // namespace babelqueue
