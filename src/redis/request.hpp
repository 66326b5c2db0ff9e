#pragma once
// A pipelined Redis request, sans-I/O: the commands of one round trip encoded as RESP, ready
// to be written in one go, and per command what its reply means to the operation that
// wrote it (command_meta). No socket, no hiredis: a request can be built and inspected
// anywhere (tests/redis/engine_test.cpp does).
//
// It is reused from round trip to round trip (clear() keeps its capacity), so composing a
// command allocates nothing once the buffer has grown to the usual size.
//
// Thread-safety: a value type; one thread at a time.

#include <cassert>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::inline v1::redis::detail {

/// What the operation that wrote a command needs to read its reply.
struct command_meta {
  std::uint8_t kind = 0;      ///< operation-defined: which of its commands this is
  bool report_errors = true;  ///< an error reply to it becomes the round trip's error
  std::uint32_t count = 0;    ///< operation-defined (e.g. how many acks it settles)
};

class request {
 public:
  /// Forgets the commands; keeps the buffer unless it grew past `k_keep_bytes` (one huge
  /// batch should not pin its size for the transport's lifetime).
  void clear() {
    assert(open_args_ == 0);
    if (buf_.capacity() > k_keep_bytes) {
      std::string().swap(buf_);
    } else {
      buf_.clear();
    }
    cmds_.clear();
  }

  /// Appends one command (argv[0] is its name).
  void push(std::initializer_list<std::string_view> argv, command_meta meta = {}) {
    begin(argv.size(), meta);
    for (auto a : argv) add(a);
  }
  void push(std::span<const std::string_view> argv, command_meta meta = {}) {
    begin(argv.size(), meta);
    for (auto a : argv) add(a);
  }

  /// Starts a command of exactly `argc` arguments, each given by add() — for variadic
  /// commands built in a loop without an argv array.
  void begin(std::size_t argc, command_meta meta = {}) {
    assert(open_args_ == 0 && argc > 0);
    buf_ += '*';
    append_number(argc);
    buf_ += "\r\n";
    cmds_.push_back(meta);
    open_args_ = argc;
  }
  void add(std::string_view arg) {
    assert(open_args_ > 0);
    --open_args_;
    buf_ += '$';
    append_number(arg.size());
    buf_ += "\r\n";
    buf_.append(arg);
    buf_ += "\r\n";
  }

  /// Commands written = replies expected.
  std::size_t size() const noexcept { return cmds_.size(); }
  bool empty() const noexcept { return cmds_.empty(); }
  const command_meta& meta(std::size_t i) const { return cmds_.at(i); }
  /// The RESP bytes of every command, in order.
  std::string_view payload() const noexcept {
    assert(open_args_ == 0);
    return buf_;
  }

  static constexpr std::size_t k_keep_bytes = std::size_t{4} << 20;

 private:
  void append_number(std::size_t n) {
    char digits[24];
    auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
    // (pointer, length), not an iterator pair: GCC 12 at -O3 warns on the latter's inlined
    // replace path (-Wrestrict, a false positive).
    buf_.append(digits, static_cast<std::size_t>(end - digits));
  }

  std::string buf_;
  std::vector<command_meta> cmds_;
  std::size_t open_args_ = 0;
};

}  // namespace babelqueue::inline v1::redis::detail
