#pragma once
// A write cursor over a std::string, for the canonical writer's hot loop.
//
// std::string::append checks capacity, updates the size and terminates the string on every
// call, and for a variable length GCC emits an inline `rep movs` whose start-up cost dwarfs
// the 5–20 bytes of a JSON key or short value (it was 40 % of encoding a large envelope).
// The cursor instead exposes the string's whole capacity once, writes through a raw pointer
// after one `room()` check per token, and may store a few bytes past what it keeps (fixed
// 8/16-byte stores) as long as they are inside the room asked for. The string is given its
// true size back when the cursor is destroyed, also on an exception.
//
// Private to babelqueue::core.

#include <algorithm>
#include <cstddef>
#include <string>

namespace babelqueue::inline v1::detail {

class output_cursor {
 public:
  explicit output_cursor(std::string& out) : out_(out) { expose(out_.size()); }
  /// A cursor that continues where `outer` stands and hands its position back to it when
  /// destroyed; `outer` must not be used meanwhile. A hot loop that holds its own cursor
  /// reaches p_ through one pointer fewer than one holding a reference (measured: about
  /// 1 % of encoding a large envelope).
  struct continue_from_t {};
  output_cursor(output_cursor& outer, continue_from_t) noexcept
      : out_(outer.out_), p_(outer.p_), end_(outer.end_), outer_(&outer) {}
  output_cursor(const output_cursor&) = delete;
  output_cursor& operator=(const output_cursor&) = delete;
  ~output_cursor() {
    if (outer_ != nullptr) {
      outer_->p_ = p_, outer_->end_ = end_;
    } else {
      out_.resize(static_cast<std::size_t>(p_ - out_.data()));
    }
  }

  /// A pointer with at least `n` writable bytes behind it; commit() what was kept.
  char* room(std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n) grow(n);
    return p_;
  }
  /// Keeps everything written up to `to` (a pointer from room(), moved forward).
  void commit(char* to) noexcept { p_ = to; }

  /// How many bytes of the string are kept so far.
  std::size_t offset() const noexcept { return static_cast<std::size_t>(p_ - out_.data()); }

  /// Runs `f(string)` on the string as kept so far (its true size), for code that appends
  /// with std::string's own calls, then exposes the capacity again after what it appended.
  template <class F>
  auto with_string(F&& f) {
    out_.resize(offset());
    try {
      auto r = f(out_);
      expose(out_.size());
      return r;
    } catch (...) {
      p_ = end_ = out_.data() + out_.size();  // what `f` left is what is kept
      throw;
    }
  }

  void put(char c) { *room(1) = c, ++p_; }
  void put(const char* s, std::size_t n) {
    char* d = room(n);
    std::copy_n(s, n, d);
    p_ = d + n;
  }

 private:
  static constexpr std::size_t k_min_room = 256;
  static constexpr std::size_t k_max_initial_room = 64 * 1024;

  // Exposes the capacity already paid for after the first `used` bytes, but not an
  // unbounded one: resize() zero-fills.
  void expose(std::size_t used) {
    out_.resize(std::max(used + k_min_room, std::min(out_.capacity(), used + k_max_initial_room)));
    p_ = out_.data() + used;
    end_ = out_.data() + out_.size();
  }

  void grow(std::size_t n) {
    const std::size_t used = static_cast<std::size_t>(p_ - out_.data());
    out_.resize(std::max(used + n, out_.size() * 2));
    p_ = out_.data() + used;
    end_ = out_.data() + out_.size();
  }

  std::string& out_;
  char* p_ = nullptr;
  char* end_ = nullptr;
  output_cursor* outer_ = nullptr;
};

}  // namespace babelqueue::inline v1::detail
