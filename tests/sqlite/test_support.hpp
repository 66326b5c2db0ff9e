#pragma once
// Helpers for the sqlite transport tests: a private temporary directory per test, child
// processes running the bq_sqlite_worker helper, and reading the files they write.

#include <babelqueue/sqlite/sqlite_transport.hpp>

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace bq_sqlite_test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on scope exit.
class temp_dir {
 public:
  temp_dir() {
    const char* base = std::getenv("TMPDIR");
    std::string templ =
        std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/bq-sqlite-test-XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = templ;
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const fs::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

/// Opens a transport on `path` with short timeouts suited to tests, or fails the test.
inline std::unique_ptr<babelqueue::sqlite::sqlite_transport> open_at(
    const std::string& path, std::chrono::milliseconds visibility = 30s) {
  babelqueue::sqlite::options o;
  o.path = path;
  o.visibility_timeout = visibility;
  o.poll_interval = 20ms;
  auto t = babelqueue::sqlite::sqlite_transport::open(o);
  if (!t) {
    ADD_FAILURE() << "open " << path << ": " << t.error().message;
    return nullptr;
  }
  return std::move(*t);
}

/// A child process running the worker helper. Killed (SIGKILL) and reaped on destruction
/// if still running, so a failing test never leaves a process behind.
class child {
 public:
  explicit child(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(BQ_SQLITE_WORKER));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, BQ_SQLITE_WORKER, nullptr, nullptr, argv.data(), environ) != 0) {
      pid_ = -1;
      ADD_FAILURE() << "posix_spawn " << BQ_SQLITE_WORKER << " failed";
    }
  }
  ~child() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      int st = 0;
      waitpid(pid_, &st, 0);
    }
  }
  child(const child&) = delete;
  child& operator=(const child&) = delete;

  pid_t pid() const { return pid_; }
  void kill9() const { kill(pid_, SIGKILL); }

  /// Waits for exit up to `limit`; returns the raw wait status, or -1 on timeout.
  int wait(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      int st = 0;
      const pid_t r = waitpid(pid_, &st, WNOHANG);
      if (r == pid_) {
        reaped_ = true;
        return st;
      }
      std::this_thread::sleep_for(10ms);
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

/// The lines of a text file (empty when it does not exist).
inline std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// Waits until `path` has at least `n` lines, up to `limit`.
inline bool wait_for_lines(const std::string& path, std::size_t n,
                           std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (read_lines(path).size() >= n) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

}  // namespace bq_sqlite_test
