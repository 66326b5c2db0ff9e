#pragma once
/// @file settlement_handle.hpp
/// @brief The one way a transport makes and takes back `received_message::handle`.
///
/// A handle is a `shared_ptr<void>`: opaque to callers, and a caller may hand any message
/// to any transport. So a transport must know that a handle is its own — made by this
/// instance, for its own state type — before it touches what the handle points to. Reading
/// the pointee to find out (an `owner` field behind a `static_cast`) reads an object of
/// another type when the handle is foreign, and a `this` address as the owner mark is
/// reused once an instance is destroyed.
///
/// Here the mark lives in the shared_ptr's control block, not in the pointee: issue() makes
/// the handle with a deleter of type handle_tag<State> that carries the owner's id (a
/// process-wide counter, never reused), the address it manages, and whether the message is
/// settled. claim() finds that deleter with std::get_deleter — a type check on the control
/// block, valid for any non-empty shared_ptr — and compares id and address before it hands
/// out the state. No cast of a handle happens anywhere.
///
/// The settled flag is shared by every copy of a received_message (they share the control
/// block), so a second ack through a copy is refused too.
///
/// Thread-safety: as the transport that owns it (one thread at a time per instance).

#include <babelqueue/export/runtime.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/runtime/transport.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace babelqueue {
inline namespace v1 {

/// The deleter of a handle made by settlement_owner::issue(); it doubles as the handle's
/// owner mark. Its type names the state type, so a handle of another transport type does
/// not match.
template <class State>
struct handle_tag {
  std::uint64_t owner = 0;
  State* object = nullptr;  ///< what the handle managed when it was made
  bool settled = false;
  void operator()(State* p) const noexcept { delete p; }
};

/// A state this owner issued, found unsettled by claim().
template <class State>
class claimed_handle {
 public:
  explicit claimed_handle(handle_tag<State>& tag) noexcept : tag_(&tag) {}
  State& operator*() const noexcept { return *tag_->object; }
  State* operator->() const noexcept { return tag_->object; }
  /// Marks the message settled: every later claim() of it (of any copy) is refused.
  void settle() const noexcept { tag_->settled = true; }

 private:
  handle_tag<State>* tag_;
};

/// The identity of one transport instance as the owner of the handles it hands out. One
/// member per instance; ids are never reused within the process.
class BABELQUEUE_RUNTIME_EXPORT settlement_owner {
 public:
  /// `who` prefixes refusals (the scheme: "sqs", "kafka", ...).
  explicit settlement_owner(std::string_view who) : who_(who), id_(next_id()) {}
  settlement_owner(const settlement_owner&) = delete;
  settlement_owner& operator=(const settlement_owner&) = delete;

  std::uint64_t id() const noexcept { return id_; }

  /// A handle holding `state`, marked as this owner's and unsettled.
  template <class State>
  std::shared_ptr<void> issue(State state) const {
    auto* p = new State(std::move(state));
    // If the control block cannot be allocated, shared_ptr calls the deleter on p.
    return std::shared_ptr<void>(p, handle_tag<State>{id_, p, false});
  }

  /// The state of `m` when this owner issued its handle and it is not settled yet; else
  /// transport_errc::invalid_argument. Nothing behind the handle is read before it passes.
  template <class State>
  result<claimed_handle<State>> claim(const received_message& m) const {
    auto* tag = std::get_deleter<handle_tag<State>>(m.handle);
    if (tag == nullptr || tag->owner != id_ || tag->object != m.handle.get()) {
      return fail(transport_errc::invalid_argument,
                  who_ + ": this message was not received by this transport instance");
    }
    if (tag->settled) {
      return fail(transport_errc::invalid_argument,
                  who_ + ": this message was already settled (acked or released)");
    }
    return claimed_handle<State>(*tag);
  }

 private:
  // Out of line (src/runtime/settlement_handle.cpp): one counter for the whole process, also
  // when the transports are shared libraries with hidden inline symbols.
  static std::uint64_t next_id() noexcept;

  std::string who_;
  std::uint64_t id_;
};

}  // namespace v1
}  // namespace babelqueue
