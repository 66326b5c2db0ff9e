// bq_sqlite_worker — a consumer process for the multi-process sqlite tests.
//
//   bq_sqlite_worker URL QUEUE OUTFILE [--idle-ms N] [--work-ms N] [--crash-after K] [--hang]
//
// Receives from QUEUE through the URL factory; for every message it appends the body and a
// newline to OUTFILE (before acking, as a handler's side effect would be), then acks.
// --crash-after K: after recording the K-th message, SIGKILLs itself before acking it.
// --hang: records the first message, then sleeps until killed (a stuck handler).
// Exits 0 after --idle-ms (default 2000) without a message; 2 on usage errors; 3 when a
// transport call fails (the message is printed on stderr).
#include <babelqueue/runtime/url.hpp>
#include <babelqueue/sqlite/sqlite_transport.hpp>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

int failed(const char* what, const babelqueue::error_info& e) {
  std::fprintf(stderr, "bq_sqlite_worker: %s: %s\n", what, e.message.c_str());
  return 3;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace std::chrono;
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s URL QUEUE OUTFILE [options]\n", argv[0]);
    return 2;
  }
  const std::string url = argv[1], queue = argv[2], outfile = argv[3];
  long idle_ms = 2000, work_ms = 0, crash_after = 0;
  bool hang = false;
  for (int i = 4; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--hang") {
      hang = true;
    } else if (i + 1 < argc && a == "--idle-ms") {
      idle_ms = std::atol(argv[++i]);
    } else if (i + 1 < argc && a == "--work-ms") {
      work_ms = std::atol(argv[++i]);
    } else if (i + 1 < argc && a == "--crash-after") {
      crash_after = std::atol(argv[++i]);
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }

  babelqueue::sqlite::register_transport();
  auto t = babelqueue::open_transport(url);
  if (!t) return failed("open", t.error());
  auto& transport = **t;

  const int fd = ::open(outfile.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) {
    std::perror("open outfile");
    return 2;
  }
  long count = 0;
  auto last = steady_clock::now();
  while (steady_clock::now() - last < milliseconds(idle_ms)) {
    auto m = transport.receive(queue, milliseconds(100));
    if (!m) return failed("receive", m.error());
    if (!*m) continue;
    last = steady_clock::now();
    ++count;
    // One write() per line with O_APPEND: lines of concurrent writers never interleave,
    // and a SIGKILL right after it cannot lose it (it is in the page cache).
    const std::string line = (*m)->body + "\n";
    if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
      std::perror("write");
      return 2;
    }
    if (hang) {
      for (;;) std::this_thread::sleep_for(seconds(1));
    }
    if (crash_after > 0 && count == crash_after) ::raise(SIGKILL);
    if (work_ms > 0) std::this_thread::sleep_for(milliseconds(work_ms));
    if (auto r = transport.ack(**m); !r) return failed("ack", r.error());
  }
  ::close(fd);
  return 0;
}
