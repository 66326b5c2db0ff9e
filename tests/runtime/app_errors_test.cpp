// Runtime failures carry runtime/transport codes: a worker thread the OS refuses is
// resource_exhausted (not invalid_argument), a second consume() is already_running, a bad
// URL is invalid_argument, an unregistered scheme unknown_scheme.
#include "runtime/test_util.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <future>
#include <thread>

using namespace babelqueue;
using namespace std::chrono_literals;

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool under_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool under_sanitizer = true;
#else
constexpr bool under_sanitizer = false;
#endif
#else
constexpr bool under_sanitizer = false;
#endif

std::size_t virtual_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  statm >> pages;
  return pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

TEST(AppErrors, WorkerThreadsTheOsRefusesAreResourceExhausted) {
  if (under_sanitizer) GTEST_SKIP() << "RLIMIT_AS cannot be used under ASan/TSan";
  memory::register_transport();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Child: 64 workers need 64 thread stacks (8 MiB each); address space for a few only.
    ::alarm(20);
    auto o = bqtest::fast_options();
    o.workers = 64;
    app a("memory://" + bqtest::unique_broker("threads"), o);
    std::thread stopper([&] {  // started before the limit; ends consume() if threads did start
      std::this_thread::sleep_for(3s);
      a.stop();
    });
    rlimit limit{virtual_bytes() + 48u * 1024u * 1024u, RLIM_INFINITY};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(4);
    auto r = a.consume();
    int status = 3;  // every thread started: the limit did not bite
    if (!r) status = r.code() == runtime_errc::resource_exhausted ? 0 : 1;
    stopper.join();
    ::_exit(status);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child died with signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1 = wrong code, 3 = threads started, 4 = setrlimit";
}

TEST(AppErrors, SecondConsumeIsAlreadyRunning) {
  memory::register_transport();
  auto o = bqtest::fast_options();
  app a("memory://" + bqtest::unique_broker("twice"), o);
  // Two consume() calls race; whichever comes second returns at once.
  auto first = std::async(std::launch::async, [&] { return a.consume(); });
  auto second = std::async(std::launch::async, [&] { return a.consume(); });
  for (int i = 0; i < 500; ++i) {
    if (first.wait_for(10ms) == std::future_status::ready ||
        second.wait_for(0ms) == std::future_status::ready) {
      break;
    }
  }
  a.stop();
  auto r1 = first.get();
  auto r2 = second.get();
  EXPECT_NE(static_cast<bool>(r1), static_cast<bool>(r2));
  EXPECT_EQ(r1 ? r2.code() : r1.code(), runtime_errc::already_running);
}

TEST(AppErrors, UrlAndSchemeFailuresAreRuntimeCodes) {
  auto bad = app::open("no-scheme-here");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.code(), runtime_errc::invalid_argument);
  EXPECT_EQ(bad.code(), condition::invalid_argument);
  auto unknown = app::open("nosuchbroker://x");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.code(), runtime_errc::unknown_scheme);
}
