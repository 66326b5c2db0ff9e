// UUIDv4 from OpenSSL's CSPRNG through a per-thread buffer: one RAND_bytes call serves
// 256 UUIDs, so the per-id cost is a copy, not a system call.
#include "uuid_text.hpp"

#include <babelqueue/uuid.hpp>

#include <openssl/rand.h>
#include <pthread.h>
#include <sys/random.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace babelqueue {
inline namespace v1 {
namespace {

// Bumped in every forked child: a child must never reuse random bytes its parent buffered.
std::atomic<unsigned> fork_generation{0};

void on_fork_child() { fork_generation.fetch_add(1, std::memory_order_relaxed); }

struct random_pool {
  unsigned char bytes[4096];
  std::size_t used = sizeof bytes;
  unsigned generation = ~0u;

  void refill() {
    if (RAND_bytes(bytes, static_cast<int>(sizeof bytes)) != 1) {
      // OpenSSL could not seed: fall back to the kernel directly.
      std::size_t got = 0;
      while (got < sizeof bytes) {
        ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
        if (n <= 0) {
          std::fputs("babelqueue: no cryptographic randomness available\n", stderr);
          std::abort();  // an id that might repeat is worse than no id
        }
        got += static_cast<std::size_t>(n);
      }
    }
    used = 0;
  }

  const unsigned char* take16() {
    unsigned gen = fork_generation.load(std::memory_order_relaxed);
    if (gen != generation) {
      generation = gen;
      used = sizeof bytes;
    }
    if (used + 16 > sizeof bytes) refill();
    const unsigned char* p = bytes + used;
    used += 16;
    return p;
  }
};

random_pool& pool() {
  static const int registered = [] { return pthread_atfork(nullptr, nullptr, on_fork_child); }();
  (void)registered;
  thread_local random_pool p;
  return p;
}

}  // namespace

void uuid_v4_into(char* out) {
  unsigned char b[16];
  std::memcpy(b, pool().take16(), 16);
  b[6] = static_cast<unsigned char>((b[6] & 0x0F) | 0x40);  // version 4
  b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80);  // variant 10xx
  detail::write_uuid_text(b, out);
}

std::string uuid_v4() {
  std::string s(36, '\0');
  uuid_v4_into(s.data());
  return s;
}

bool is_uuid(std::string_view text) noexcept {
  if (text.size() != 36) return false;
  for (std::size_t i = 0; i < 36; ++i) {
    char c = text[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
      return false;
    }
  }
  return true;
}

}  // namespace v1
}  // namespace babelqueue
