#pragma once
// Test helper: a private, real `redis-server` on a free loopback port with its data in a
// temporary directory. It stops on every path: the destructor kills it, and the child is
// started with PR_SET_PDEATHSIG so it also dies when the test process crashes or is killed.
// (PDEATHSIG fires when the forking THREAD exits: start/restart from a long-lived thread.)
//
// Thread-safety: one thread at a time per object.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace bqtest {

#ifndef BABELQUEUE_REDIS_SERVER
#define BABELQUEUE_REDIS_SERVER ""
#endif

/// True when running under CI (a missing service is then a failure, not a skip).
inline bool under_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && (std::string(ci) == "true" || std::string(ci) == "1");
}

/// Starts `exe` with `args` (args[0] included) as a child that dies with the test process
/// (PR_SET_PDEATHSIG) and whose stdin/stdout are /dev/null. Its PID, or -1.
inline pid_t spawn_child(const std::string& exe, std::vector<std::string> args) {
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    // The server must not outlive the test process, whatever happens to it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    int devnull = ::open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      ::dup2(devnull, 0);
      ::dup2(devnull, 1);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

/// Sends one inline command and returns the first reply line ("" on failure).
inline std::string raw_command(int port, const std::string& line, int timeout_ms = 500) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return {};
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    std::string cmd = line + "\r\n";
    if (::send(fd, cmd.data(), cmd.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(cmd.size())) {
      char buf[512];
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n > 0) out.assign(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  auto eol = out.find("\r\n");
  return eol == std::string::npos ? out : out.substr(0, eol);
}

class redis_server {
 public:
  struct config {
    bool persistent = false;  ///< AOF with appendfsync always: survives a restart
    bool cluster = false;     ///< cluster-enabled single node owning every slot
    /// With `cluster`: false = the node owns no slot yet (the test builds a multi-node
    /// cluster with CLUSTER ADDSLOTSRANGE / MEET itself).
    bool cluster_owns_all = true;
    /// Non-empty: also serve TLS on tls_port() with <tls_dir>/{server.crt,server.key,ca.crt}
    /// (the plain port stays open for the test's own inline commands).
    std::string tls_dir;
    bool tls_auth_clients = false;  ///< require a client certificate signed by ca.crt
    /// Appended to the command line (e.g. `--replicaof 127.0.0.1 <port>`).
    std::vector<std::string> extra_args;
  };

  /// Starts a server; nullptr (and `why`) when redis-server is unavailable or fails.
  static std::unique_ptr<redis_server> start(config cfg, std::string& why) {
    std::string exe = BABELQUEUE_REDIS_SERVER;
    if (exe.empty()) {
      why = "redis-server was not found at configure time";
      return nullptr;
    }
    std::unique_ptr<redis_server> s(new redis_server(cfg, exe));
    char tmpl[] = "/tmp/bq-redis-test-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      why = "mkdtemp failed";
      return nullptr;
    }
    s->dir_ = tmpl;
    for (int attempt = 0; attempt < 5; ++attempt) {
      s->port_ = free_port();
      if (!cfg.tls_dir.empty()) s->tls_port_ = free_port();
      if (s->spawn() && s->wait_ready()) {
        if (!cfg.cluster || !cfg.cluster_owns_all || s->make_cluster()) return s;
      }
      s->kill_now();
    }
    why = "redis-server did not start (see " + s->dir_ + "/redis.log)";
    s->keep_dir_ = true;
    return nullptr;
  }

  ~redis_server() {
    kill_now();
    if (!keep_dir_ && !dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  int port() const { return port_; }
  int tls_port() const { return tls_port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  pid_t pid() const { return pid_; }

  /// Graceful stop (SIGTERM: the AOF is flushed), waiting for the process to exit.
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int st = 0;
    for (int i = 0; i < 500; ++i) {
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill_now();
  }

  /// Replaces config::extra_args for the next restart() (e.g. back as a replica).
  void set_extra_args(std::vector<std::string> args) { cfg_.extra_args = std::move(args); }

  /// Starts again on the same port and directory.
  bool restart() {
    stop();
    for (int i = 0; i < 50; ++i) {
      if (spawn() && wait_ready()) return true;
      kill_now();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  void kill_now() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
  }

  std::string command(const std::string& line) const { return raw_command(port_, line); }

 private:
  redis_server(config cfg, std::string exe) : cfg_(cfg), exe_(std::move(exe)) {}

  bool spawn() {
    std::vector<std::string> args = {
        exe_,    "--bind",    "127.0.0.1",        "--port", std::to_string(port_),
        "--dir", dir_,        "--save",           "",       "--daemonize",
        "no",    "--logfile", dir_ + "/redis.log"};
    if (cfg_.persistent) {
      args.insert(args.end(), {"--appendonly", "yes", "--appendfsync", "always"});
    } else {
      args.insert(args.end(), {"--appendonly", "no"});
    }
    if (!cfg_.tls_dir.empty()) {
      args.insert(
          args.end(),
          {"--tls-port", std::to_string(tls_port_), "--tls-cert-file", cfg_.tls_dir + "/server.crt",
           "--tls-key-file", cfg_.tls_dir + "/server.key", "--tls-ca-cert-file",
           cfg_.tls_dir + "/ca.crt", "--tls-auth-clients", cfg_.tls_auth_clients ? "yes" : "no"});
    }
    args.insert(args.end(), cfg_.extra_args.begin(), cfg_.extra_args.end());
    if (cfg_.cluster) {
      args.insert(args.end(),
                  {"--cluster-enabled", "yes", "--cluster-config-file", dir_ + "/nodes.conf"});
    }
    pid_ = spawn_child(exe_, args);
    return pid_ > 0;
  }

  bool wait_ready() {
    for (int i = 0; i < 300; ++i) {
      if (raw_command(port_, "PING", 200) == "+PONG") return true;
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  bool make_cluster() {
    if (command("CLUSTER ADDSLOTSRANGE 0 16383").rfind("+OK", 0) != 0) return false;
    for (int i = 0; i < 300; ++i) {
      // The node serves commands once it considers the cluster state ok.
      std::string r = command("SET probe 1");
      if (r == "+OK") return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  config cfg_;
  std::string exe_;
  std::string dir_;
  int port_ = 0;
  int tls_port_ = 0;
  pid_t pid_ = -1;
  bool keep_dir_ = false;
};

}  // namespace bqtest
