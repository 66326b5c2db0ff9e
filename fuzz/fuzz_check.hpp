#pragma once
// FUZZ_CHECK: an invariant of a fuzz target. Unlike assert() it stays on in every build type
// (the replay runs under CTest in Debug and in the release-like fuzz build alike) and it
// aborts, which libFuzzer reports as a crash and CTest as a failed test.

#include <cstdio>
#include <cstdlib>

namespace babelqueue_fuzz {

[[noreturn]] inline void check_failed(const char* condition, const char* why, const char* file,
                                      int line) {
  std::fprintf(stderr, "%s:%d: fuzz invariant violated: %s\n  (%s)\n", file, line, why, condition);
  std::abort();
}

}  // namespace babelqueue_fuzz

#define FUZZ_CHECK(condition, why)                                                          \
  do {                                                                                      \
    if (!(condition)) ::babelqueue_fuzz::check_failed(#condition, why, __FILE__, __LINE__); \
  } while (false)
