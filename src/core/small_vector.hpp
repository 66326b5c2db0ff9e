#pragma once
// A vector that keeps its first N elements inline: the decoder's member lists (codec.cpp).
// Header-only so that the decoder's hot loops inline it exactly as they did when it was
// defined in codec.cpp. Private (`#include "core/small_vector.hpp"`).
//
// Thread-safety: a value type, used by one thread.

#include <cstddef>
#include <new>
#include <type_traits>
#include <vector>

namespace babelqueue::inline v1::detail {

// A vector that keeps its first N elements inline in raw storage (no construction cost): a
// normal envelope never allocates here. Only for trivially copyable T.
template <class T, std::size_t N>
class small_vector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  small_vector() = default;
  small_vector(const small_vector&) = delete;
  small_vector& operator=(const small_vector&) = delete;

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T* data() noexcept { return heap_.empty() ? reinterpret_cast<T*>(inline_) : heap_.data(); }
  const T* data() const noexcept {
    return heap_.empty() ? reinterpret_cast<const T*>(inline_) : heap_.data();
  }
  T& operator[](std::size_t i) noexcept { return data()[i]; }
  const T& operator[](std::size_t i) const noexcept { return data()[i]; }
  const T* begin() const noexcept { return data(); }
  const T* end() const noexcept { return data() + size_; }
  const T& front() const noexcept { return data()[0]; }
  const T& back() const noexcept { return data()[size_ - 1]; }
  void clear() noexcept {
    size_ = 0;
    heap_.clear();
  }
  /// Appends a default-initialised element (members without initialisers are left
  /// indeterminate: the caller sets what it reads) and returns it.
  T& emplace_back() {
    if (size_ < N && heap_.empty()) {
      T* slot = ::new (static_cast<void*>(reinterpret_cast<T*>(inline_) + size_)) T;
      ++size_;
      return *slot;
    }
    if (heap_.empty()) heap_.assign(data(), data() + size_);
    heap_.emplace_back();
    ++size_;
    return heap_.back();
  }

 private:
  alignas(T) unsigned char inline_[N * sizeof(T)];
  std::vector<T> heap_;
  std::size_t size_ = 0;
};

}  // namespace babelqueue::inline v1::detail
