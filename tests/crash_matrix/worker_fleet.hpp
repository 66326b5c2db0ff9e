#pragma once
// The worker processes of the crash-and-restart matrix (crash_worker.cpp), supervised as
// systemd or Kubernetes would: a worker that exits — SIGKILLed, or gone because the broker
// was — is started again. Each slot appends its effects to one file; effects() reads what
// every slot wrote so far.
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace bqcrash {

/// How one worker process ended.
struct worker_exit {
  int slot = 0;
  bool signalled = false;
  int code = 0;  ///< the exit status, or the signal when `signalled`
};

class worker_fleet {
 public:
  worker_fleet(std::string exe, std::string url, std::string queue, std::string dir,
               std::chrono::milliseconds handler_time)
      : exe_(std::move(exe)),
        url_(std::move(url)),
        queue_(std::move(queue)),
        dir_(std::move(dir)),
        handler_ms_(std::to_string(handler_time.count())) {}
  ~worker_fleet() { kill_all(); }
  worker_fleet(const worker_fleet&) = delete;
  worker_fleet& operator=(const worker_fleet&) = delete;

  /// Starts slot `slot`; its first incarnation SIGKILLs itself mid-handler after
  /// `die_after` effects (-1: never). Call from the thread that lives as long as the fleet:
  /// the workers die with it (PR_SET_PDEATHSIG).
  void start(int slot, long die_after = -1) {
    const std::string effects = effects_file(slot);
    const std::string log = dir_ + "/worker-" + std::to_string(slot) + ".log";
    const std::string die = std::to_string(die_after);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
      const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
      if (fd >= 0) {
        ::dup2(fd, STDOUT_FILENO);
        ::dup2(fd, STDERR_FILENO);
      }
      ::execl(exe_.c_str(), exe_.c_str(), url_.c_str(), queue_.c_str(), effects.c_str(),
              die.c_str(), handler_ms_.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    if (pid > 0) pids_[slot] = pid;
  }

  /// Reaps the workers that ended since the last call and starts each slot again (never to
  /// die on purpose a second time); returns how they ended.
  std::vector<worker_exit> restart_exited(bool start_again = true) {
    std::vector<worker_exit> ended;
    for (auto& [slot, pid] : pids_) {
      if (pid <= 0) continue;
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) != pid) continue;
      pid = -1;
      ended.push_back({slot, WIFSIGNALED(status),
                       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status)});
    }
    if (start_again) {
      for (const auto& e : ended) {
        ++restarts_;
        start(e.slot);
      }
    }
    return ended;
  }

  /// SIGTERM to every worker, then waits up to `within` for each; returns how they ended
  /// (a worker still running then is SIGKILLed and reported as such).
  std::vector<worker_exit> terminate(std::chrono::seconds within) {
    for (auto& [slot, pid] : pids_) {
      if (pid > 0) ::kill(pid, SIGTERM);
    }
    std::vector<worker_exit> ended;
    const auto deadline = std::chrono::steady_clock::now() + within;
    for (auto& [slot, pid] : pids_) {
      if (pid <= 0) continue;
      int status = 0;
      while (::waitpid(pid, &status, WNOHANG) != pid) {
        if (std::chrono::steady_clock::now() > deadline) {
          ::kill(pid, SIGKILL);
          ::waitpid(pid, &status, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      ended.push_back({slot, WIFSIGNALED(status),
                       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status)});
      pid = -1;
    }
    return ended;
  }

  void kill_all() {
    for (auto& [slot, pid] : pids_) {
      if (pid <= 0) continue;
      ::kill(pid, SIGKILL);
      int status = 0;
      ::waitpid(pid, &status, 0);
      pid = -1;
    }
  }

  /// Every effect written so far.
  struct effect_log {
    std::map<long, long> times_handled;  ///< message number -> how many times its handler ran
    std::vector<std::int64_t> at_ms;     ///< when each effect was made (wall clock, ms)
  };
  effect_log effects() const {
    effect_log log;
    for (const auto& [slot, pid] : pids_) {
      std::ifstream in(effects_file(slot));
      long n = 0;
      std::int64_t at = 0;
      while (in >> n >> at) {
        ++log.times_handled[n];
        log.at_ms.push_back(at);
      }
    }
    return log;
  }

  /// Workers started again after they ended.
  long restarts() const { return restarts_; }

  /// The tail of a slot's log, for a failure message.
  std::string log_tail(int slot, std::size_t bytes = 2000) const {
    std::ifstream in(dir_ + "/worker-" + std::to_string(slot) + ".log");
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return all.size() > bytes ? all.substr(all.size() - bytes) : all;
  }

 private:
  std::string effects_file(int slot) const {
    return dir_ + "/effects-" + std::to_string(slot) + ".txt";
  }

  std::string exe_, url_, queue_, dir_, handler_ms_;
  std::map<int, pid_t> pids_;
  long restarts_ = 0;
};

}  // namespace bqcrash
