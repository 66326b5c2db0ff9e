#pragma once
// Test helper: a real Sentinel-managed Redis group on free loopback ports, in temporary
// directories — one primary, `replicas` replicas (`--replicaof`) and three Sentinels
// (`redis-server <conf> --sentinel`, quorum 2, short down-after/failover timeouts so a
// failover takes a few seconds). Every process is killed on every path: the destructors kill
// them, and each child is started with PR_SET_PDEATHSIG (like redis_server.hpp, whose
// caveat applies: start and restart from a long-lived thread).
//
// start() returns once every replica is linked and every Sentinel runs; with
// config::ready_for_failover also once the Sentinels agree (CKQUORUM: 3 usable) and know every
// replica, so a test can fail the primary at once.
//
// Debugging: with BQ_KEEP_SENTINEL_LOGS set, the Sentinels' directories (config rewritten by
// Sentinel, sentinel.log with every +sdown/+switch-master) are kept and their path printed.
//
// Thread-safety: one thread at a time per object; the query helpers open their own sockets
// and may be called from any thread.
#include "redis/redis_fixture.hpp"
#include "redis/redis_server.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace bqtest {

/// One `redis-server <conf> --sentinel` process.
class sentinel_process {
 public:
  sentinel_process(std::string exe, std::string dir) : exe_(std::move(exe)), dir_(std::move(dir)) {}
  ~sentinel_process() { kill_now(); }
  sentinel_process(const sentinel_process&) = delete;
  sentinel_process& operator=(const sentinel_process&) = delete;

  /// Writes the config (Sentinel rewrites it, so it lives in its own directory) and starts.
  /// A non-empty `tls_dir` also serves TLS on tls_port() and makes the Sentinel reach the
  /// data nodes (and the other Sentinels) over TLS.
  bool start(int port, const std::string& master, int primary_port, int down_after_ms,
             int failover_timeout_ms, const std::string& tls_dir = {},
             const std::string& password = {}) {
    port_ = port;
    tls_port_ = tls_dir.empty() ? 0 : free_port();
    std::filesystem::create_directories(dir_);
    const std::string conf = dir_ + "/sentinel.conf";
    {
      std::ofstream f(conf);
      f << "bind 127.0.0.1\nport " << port << "\ndir " << dir_ << "\nlogfile " << dir_
        << "/sentinel.log\ndaemonize no\n"
        << "sentinel monitor " << master << " 127.0.0.1 " << primary_port << " 2\n"
        << "sentinel down-after-milliseconds " << master << ' ' << down_after_ms << '\n'
        << "sentinel failover-timeout " << master << ' ' << failover_timeout_ms << '\n'
        << "sentinel parallel-syncs " << master << " 1\n";
      if (!password.empty()) f << "requirepass " << password << '\n';
      if (!tls_dir.empty()) {
        f << "tls-port " << tls_port_ << "\ntls-cert-file " << tls_dir
          << "/server.crt\ntls-key-file " << tls_dir << "/server.key\ntls-ca-cert-file " << tls_dir
          << "/ca.crt\ntls-auth-clients no\ntls-replication yes\n";
      }
      if (!f) return false;
    }
    pid_ = spawn_child(exe_, {exe_, conf, "--sentinel"});
    if (pid_ < 0) return false;
    for (int i = 0; i < 300; ++i) {
      const auto pong = raw_command(port_, "PING", 200);
      if (pong == "+PONG" || pong.rfind("-NOAUTH", 0) == 0) return true;
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
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

  /// SIGSTOP / SIGCONT: a hung Sentinel (its socket still accepts, it never answers).
  void pause() { ::kill(pid_, SIGSTOP); }
  void resume() { ::kill(pid_, SIGCONT); }

  int port() const { return port_; }
  int tls_port() const { return tls_port_; }

 private:
  std::string exe_;
  std::string dir_;
  int port_ = 0;
  int tls_port_ = 0;
  pid_t pid_ = -1;
};

class sentinel_group {
 public:
  struct config {
    int replicas = 1;
    std::string master = "bqmaster";
    // Short enough for a failover in ~2-3 s, long enough that a loaded 2-core CI machine does
    // not make a Sentinel think the freshly promoted primary is down too (seen at 400 ms: a
    // second failover promoting the restarted, empty old primary).
    int down_after_ms = 1000;
    int failover_timeout_ms = 3000;
    /// Non-empty: every node and Sentinel also serves TLS with <tls_dir>/{server.crt,
    /// server.key,ca.crt} (tls_certificates.hpp), replication and Sentinel links use TLS, and
    /// url() is `rediss+sentinel://` to the Sentinels' TLS ports. The plain ports stay open
    /// for the helper's own queries.
    std::string tls_dir;
    /// Wait in start() until the Sentinels can fail over (they found each other — hello
    /// messages every 2 s — and the replicas). Tests that never kill the primary skip it:
    /// a Sentinel answers get-master-addr-by-name as soon as it runs.
    bool ready_for_failover = false;
    /// Non-empty: the Sentinels require this password (`requirepass`); not with
    /// ready_for_failover (the helper's own Sentinel queries do not authenticate).
    std::string sentinel_password;
  };

  /// Starts the group; nullptr (and `why`) when redis-server is unavailable or it fails.
  static std::unique_ptr<sentinel_group> start(config cfg, std::string& why) {
    std::unique_ptr<sentinel_group> g(new sentinel_group(cfg));
    const bool tls = !cfg.tls_dir.empty();
    redis_server::config pc;
    pc.tls_dir = cfg.tls_dir;
    pc.extra_args = no_sync_delay(tls);
    auto primary = redis_server::start(pc, why);
    if (!primary) return nullptr;
    // The port the replicas and Sentinels use: the TLS one with TLS.
    const int primary_port = tls ? primary->tls_port() : primary->port();
    g->nodes_.push_back(std::move(primary));
    for (int i = 0; i < cfg.replicas; ++i) {
      redis_server::config rc;
      rc.tls_dir = cfg.tls_dir;
      rc.extra_args = replica_args(primary_port, tls);
      auto replica = redis_server::start(rc, why);
      if (!replica) return nullptr;
      g->nodes_.push_back(std::move(replica));
    }
    // Replicas linked before the Sentinels start: a Sentinel learns them from the primary's
    // first INFO instead of 10 s later.
    for (std::size_t i = 1; i < g->nodes_.size(); ++i) {
      if (!g->poll([&] {
            return g->info(g->nodes_[i]->port(), "replication").find("master_link_status:up") !=
                   std::string::npos;
          })) {
        why = "replica did not link to the primary";
        return nullptr;
      }
    }
    char tmpl[] = "/tmp/bq-sentinel-test-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      why = "mkdtemp failed";
      return nullptr;
    }
    g->dir_ = tmpl;
    for (int i = 0; i < 3; ++i) {
      auto s = std::make_unique<sentinel_process>(BABELQUEUE_REDIS_SERVER,
                                                  g->dir_ + "/s" + std::to_string(i));
      bool up = false;
      for (int attempt = 0; attempt < 5 && !up; ++attempt) {
        up = s->start(free_port(), cfg.master, primary_port, cfg.down_after_ms,
                      cfg.failover_timeout_ms, cfg.tls_dir, cfg.sentinel_password);
        if (!up) s->kill_now();
      }
      if (!up) {
        why = "redis-server --sentinel did not start (see " + g->dir_ + ")";
        g->keep_dir_ = true;
        return nullptr;
      }
      g->sentinels_.push_back(std::move(s));
    }
    if (cfg.ready_for_failover && !g->wait_agreed(std::chrono::seconds(20))) {
      why = "the Sentinels did not reach quorum / see the replicas (see " + g->dir_ + ")";
      g->keep_dir_ = true;
      return nullptr;
    }
    return g;
  }

  ~sentinel_group() {
    sentinels_.clear();
    nodes_.clear();
    if (std::getenv("BQ_KEEP_SENTINEL_LOGS") != nullptr) {
      std::printf("Sentinel logs kept in %s\n", dir_.c_str());
      keep_dir_ = true;
    }
    if (!keep_dir_ && !dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  const config& cfg() const { return cfg_; }
  /// Data nodes: [0] the first primary, then the replicas.
  redis_server& node(std::size_t i) { return *nodes_.at(i); }
  std::size_t node_count() const { return nodes_.size(); }
  sentinel_process& sentinel(std::size_t i) { return *sentinels_.at(i); }

  /// `redis+sentinel://127.0.0.1:a,127.0.0.1:b,127.0.0.1:c/<master>` + `suffix` (`?k=v`);
  /// `rediss+sentinel://` to the TLS ports with config::tls_dir.
  std::string url(const std::string& suffix = "") const {
    const bool tls = !cfg_.tls_dir.empty();
    std::string u = tls ? "rediss+sentinel://" : "redis+sentinel://";
    for (std::size_t i = 0; i < sentinels_.size(); ++i) {
      if (i > 0) u += ',';
      u += "127.0.0.1:" + std::to_string(tls ? sentinels_[i]->tls_port() : sentinels_[i]->port());
    }
    return u + "/" + cfg_.master + suffix;
  }

  /// Restarts data node `i` (after kill_now()) as a replica of `primary_port` — what an
  /// orchestrator does with a failed primary once Sentinel has moved on (left alone, it comes
  /// back as a stale, empty primary that Sentinel demotes only after 8-20 s).
  bool restart_as_replica(std::size_t i, int primary_port) {
    nodes_.at(i)->set_extra_args(replica_args(primary_port, !cfg_.tls_dir.empty()));
    return nodes_.at(i)->restart();
  }

  /// The primary's port as Sentinel `i` reports it (0 = no answer).
  int primary_port_of(std::size_t i) const {
    raw_client c(sentinels_.at(i)->port());
    if (!c.ok()) return 0;
    redisReply* r = c.run({"SENTINEL", "get-master-addr-by-name", cfg_.master});
    int port = 0;
    if (r != nullptr && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[1]->str != nullptr)
      port = std::atoi(r->element[1]->str);
    if (r != nullptr) freeReplyObject(r);
    return port;
  }

  /// The primary's port as the first answering Sentinel reports it (0 = none answered).
  int reported_primary_port() const {
    for (std::size_t i = 0; i < sentinels_.size(); ++i) {
      if (const int port = primary_port_of(i); port != 0) return port;
    }
    return 0;
  }

  /// The event lines (`+sdown`, `+odown`, `+switch-master`, `-role-change`, `+tilt`, …) of
  /// every Sentinel's log, for a failing test to print: which Sentinel saw what, and when.
  std::string sentinel_events() const {
    std::string out;
    for (std::size_t i = 0; i < sentinels_.size(); ++i) {
      std::ifstream log(dir_ + "/s" + std::to_string(i) + "/sentinel.log");
      for (std::string line; std::getline(log, line);) {
        const auto mark = line.find_first_of("#*");
        if (mark != std::string::npos && mark + 3 < line.size() && line[mark + 1] == ' ' &&
            (line[mark + 2] == '+' || line[mark + 2] == '-')) {
          out += "  sentinel " + std::to_string(i) + " (:" + std::to_string(sentinels_[i]->port()) +
                 ") " + line.substr(line.find(' ') + 1) + '\n';  // the time on
        }
      }
    }
    return out;
  }

  /// True when every Sentinel answers and reports the primary at `port`: the failover's
  /// new configuration has reached them all.
  bool all_report_primary(int port) const {
    for (std::size_t i = 0; i < sentinels_.size(); ++i) {
      if (primary_port_of(i) != port) return false;
    }
    return true;
  }

  /// The first element of `ROLE` on a data node ("master", "slave"; "" when unreachable).
  static std::string role(int port) {
    raw_client c(port);
    if (!c.ok()) return {};
    redisReply* r = c.run({"ROLE"});
    std::string out;
    if (r != nullptr && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
        r->element[0]->str != nullptr)
      out = r->element[0]->str;
    if (r != nullptr) freeReplyObject(r);
    return out;
  }

  /// `INFO <section>` of a node ("" when unreachable).
  static std::string info(int port, const std::string& section) {
    raw_client c(port);
    if (!c.ok()) return {};
    return c.str({"INFO", section});
  }

  /// Polls `cond` every 20 ms until it holds or `limit` passes.
  template <class Cond>
  static bool poll(Cond cond, std::chrono::milliseconds limit = std::chrono::seconds(15)) {
    auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      if (cond()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return cond();
  }

  /// Every Sentinel sees the other two (failover can be authorised) and every replica.
  bool wait_agreed(std::chrono::milliseconds limit) {
    return poll(
        [&] {
          for (const auto& s : sentinels_) {
            raw_client c(s->port());
            if (!c.ok()) return false;
            if (c.str({"SENTINEL", "CKQUORUM", cfg_.master}).rfind("OK 3 usable", 0) != 0)
              return false;
            if (known_replicas(c) < cfg_.replicas) return false;
          }
          return true;
        },
        limit);
  }

 private:
  explicit sentinel_group(config cfg) : cfg_(std::move(cfg)) {}

  // Any node may become the primary: none waits the default 5 s before a (diskless) full
  // sync to a new replica.
  static std::vector<std::string> no_sync_delay(bool tls) {
    std::vector<std::string> a = {"--repl-diskless-sync-delay", "0"};
    if (tls) a.insert(a.end(), {"--tls-replication", "yes"});
    return a;
  }
  static std::vector<std::string> replica_args(int primary_port, bool tls) {
    auto a = no_sync_delay(tls);
    a.insert(a.end(), {"--replicaof", "127.0.0.1", std::to_string(primary_port)});
    return a;
  }

  int known_replicas(raw_client& c) const {
    redisReply* r = c.run({"SENTINEL", "MASTER", cfg_.master});
    int n = -1;
    if (r != nullptr && r->type == REDIS_REPLY_ARRAY) {
      for (std::size_t i = 0; i + 1 < r->elements; i += 2) {
        if (std::string(r->element[i]->str) == "num-slaves") n = std::atoi(r->element[i + 1]->str);
      }
    }
    if (r != nullptr) freeReplyObject(r);
    return n;
  }

  config cfg_;
  std::vector<std::unique_ptr<redis_server>> nodes_;
  std::vector<std::unique_ptr<sentinel_process>> sentinels_;
  std::string dir_;
  bool keep_dir_ = false;
};

}  // namespace bqtest
