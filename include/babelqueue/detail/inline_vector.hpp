#pragma once
// A vector of trivially copyable elements that keeps its first N inside the object: the
// envelope's member table, whose six members (seven with a dead_letter) then cost no heap
// allocation per decoded or built message. Past N it moves to the heap for good. Only what
// the envelope uses; an implementation detail, not part of the API.
//
// The inline slots are raw storage, not a `T[N]`: a T with default member initialisers (the
// envelope's spans) would make every construction and move of an envelope zero-fill all N
// slots first (a `rep stos` of 128 bytes, twice per decode()). Elements are created where
// they are stored (placement new, or memcpy, which creates trivially copyable objects).

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

namespace babelqueue::inline v1::detail {

template <class T, std::size_t N>
class inline_vector {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  // User-provided on purpose: with `= default`, value-initialisation (`inline_vector{}`)
  // would zero-fill the raw slots, the cost this class exists to avoid.
  inline_vector() noexcept {}  // NOLINT(modernize-use-equals-default)
  inline_vector(const inline_vector& other)
      : heap_(other.heap_), size_(other.size_), spilled_(other.spilled_) {
    if (!spilled_) copy_local(other);
  }
  inline_vector& operator=(const inline_vector& other) {
    if (this != &other) {
      heap_ = other.heap_;
      size_ = other.size_;
      spilled_ = other.spilled_;
      if (!spilled_) copy_local(other);
    }
    return *this;
  }
  // A moved-from vector is left empty (not spilled with its heap part gone).
  inline_vector(inline_vector&& other) noexcept
      : heap_(std::move(other.heap_)), size_(other.size_), spilled_(other.spilled_) {
    if (!spilled_) copy_local(other);
    other.reset();
  }
  inline_vector& operator=(inline_vector&& other) noexcept {
    if (this != &other) {
      heap_ = std::move(other.heap_);
      size_ = other.size_;
      spilled_ = other.spilled_;
      if (!spilled_) copy_local(other);
      other.reset();
    }
    return *this;
  }
  ~inline_vector() = default;

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T* data() noexcept { return spilled_ ? heap_.data() : local(); }
  const T* data() const noexcept { return spilled_ ? heap_.data() : local(); }
  T* begin() noexcept { return data(); }
  T* end() noexcept { return data() + size_; }
  const T* begin() const noexcept { return data(); }
  const T* end() const noexcept { return data() + size_; }
  T& operator[](std::size_t i) noexcept { return data()[i]; }
  const T& operator[](std::size_t i) const noexcept { return data()[i]; }
  T& back() noexcept { return data()[size_ - 1]; }

  void reserve(std::size_t n) {
    if (n <= N && !spilled_) return;
    if (!spilled_) spill();
    heap_.reserve(n);
  }
  void clear() noexcept {
    heap_.clear();
    size_ = 0;
  }
  void push_back(const T& value) {
    if (!spilled_ && size_ < N) {
      ::new (static_cast<void*>(local() + size_)) T(value);
      ++size_;
      return;
    }
    push_back_to_heap(value);
  }
  T* insert(const T* pos, const T& value) {
    const auto at = static_cast<std::size_t>(pos - data());
    push_back(value);
    std::rotate(data() + at, data() + size_ - 1, data() + size_);
    return data() + at;
  }
  T* erase(const T* pos) {
    const auto at = static_cast<std::size_t>(pos - data());
    std::copy(data() + at + 1, data() + size_, data() + at);
    if (spilled_) heap_.pop_back();
    --size_;
    return data() + at;
  }

  friend bool operator==(const inline_vector& a, const inline_vector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  void reset() noexcept {
    heap_.clear();
    size_ = 0;
    spilled_ = false;
  }
  // Out of line, so that push_back's inline case stays small enough to be inlined (it was
  // a call per member, five per make()).
  [[gnu::noinline]] void push_back_to_heap(const T& value) {
    if (!spilled_) spill();
    heap_.push_back(value);
    ++size_;
  }
  void spill() {
    heap_.assign(local(), local() + size_);
    spilled_ = true;
  }
  T* local() noexcept { return std::launder(reinterpret_cast<T*>(local_)); }
  const T* local() const noexcept { return std::launder(reinterpret_cast<const T*>(local_)); }
  // Only the live elements are copied (the rest of the slots were never written).
  void copy_local(const inline_vector& other) noexcept {
    if (size_ != 0) std::memcpy(local_, other.local_, size_ * sizeof(T));
  }

  alignas(T) unsigned char local_[N * sizeof(T)];
  std::vector<T> heap_;  // every element once spilled_, else empty
  std::size_t size_ = 0;
  bool spilled_ = false;
};

}  // namespace babelqueue::inline v1::detail
