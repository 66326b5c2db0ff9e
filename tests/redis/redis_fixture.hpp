#pragma once
// GoogleTest fixture: one private redis-server per test process, flushed before each test,
// plus a raw hiredis client to look at keys directly.
#include "redis/redis_server.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/redis/redis_transport.hpp>

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <memory>
#include <string>
#include <vector>

namespace bqtest {

/// Minimal synchronous client for assertions (not the code under test).
class raw_client {
 public:
  explicit raw_client(int port) {
    timeval tv{5, 0};
    ctx_ = redisConnectWithTimeout("127.0.0.1", port, tv);
  }
  ~raw_client() {
    if (ctx_ != nullptr) redisFree(ctx_);
  }
  raw_client(const raw_client&) = delete;
  raw_client& operator=(const raw_client&) = delete;

  bool ok() const { return ctx_ != nullptr && ctx_->err == 0; }

  redisReply* run(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lens;
    for (const auto& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    return static_cast<redisReply*>(
        redisCommandArgv(ctx_, static_cast<int>(argv.size()), argv.data(), lens.data()));
  }
  long long integer(const std::vector<std::string>& args) {
    redisReply* r = run(args);
    long long v = (r != nullptr && r->type == REDIS_REPLY_INTEGER) ? r->integer : -1;
    if (r != nullptr) freeReplyObject(r);
    return v;
  }
  std::string str(const std::vector<std::string>& args) {
    redisReply* r = run(args);
    std::string v =
        (r != nullptr && r->str != nullptr) ? std::string(r->str, r->len) : std::string();
    if (r != nullptr) freeReplyObject(r);
    return v;
  }
  std::vector<std::string> list(const std::string& key) {
    redisReply* r = run({"LRANGE", key, "0", "-1"});
    std::vector<std::string> out;
    if (r != nullptr && r->type == REDIS_REPLY_ARRAY) {
      for (std::size_t i = 0; i < r->elements; ++i)
        out.emplace_back(r->element[i]->str, r->element[i]->len);
    }
    if (r != nullptr) freeReplyObject(r);
    return out;
  }
  long long llen(const std::string& key) { return integer({"LLEN", key}); }

 private:
  redisContext* ctx_ = nullptr;
};

/// A valid canonical envelope whose data carries `n` (and optional padding).
inline std::string padded_envelope_text(long n, std::size_t pad = 0,
                                        const std::string& urn = "urn:babel:test:item") {
  babelqueue::json data = babelqueue::json::object();
  data["n"] = n;
  if (pad > 0) data["pad"] = std::string(pad, 'x');
  auto env = babelqueue::make(urn, data);
  return babelqueue::encode(env.value()).value();
}

inline long envelope_n(const std::string& body) {
  auto env = babelqueue::decode(body);
  if (!env) return -1;
  auto d = env->data();
  if (!d) return -1;
  return d->value("n", -1L);
}

class RedisTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { start({}); }
  static void TearDownTestSuite() { server_.reset(); }

  static void start(redis_server::config cfg) { server_ = redis_server::start(cfg, why_); }

  void SetUp() override {
    if (!server_) {
      if (under_ci()) FAIL() << "CI=true and no redis-server: " << why_;
      GTEST_SKIP() << "no redis-server: " << why_;
    }
    raw_ = std::make_unique<raw_client>(server_->port());
    ASSERT_TRUE(raw_->ok());
    raw_->str({"FLUSHALL"});
  }

  babelqueue::redis::options opts() const {
    babelqueue::redis::options o;
    o.port = static_cast<std::uint16_t>(server_->port());
    o.connect_timeout = std::chrono::milliseconds(1000);
    o.command_timeout = std::chrono::milliseconds(2000);
    o.reconnect_backoff_min = std::chrono::milliseconds(20);
    o.reconnect_backoff_max = std::chrono::milliseconds(200);
    return o;
  }

  std::unique_ptr<babelqueue::redis::redis_transport> open(babelqueue::redis::options o) {
    auto t = babelqueue::redis::redis_transport::open(std::move(o));
    EXPECT_TRUE(t) << t.error().message;
    return t ? std::move(*t) : nullptr;
  }
  std::unique_ptr<babelqueue::redis::redis_transport> open() { return open(opts()); }

  static inline std::unique_ptr<redis_server> server_;
  static inline std::string why_;
  std::unique_ptr<raw_client> raw_;
};

}  // namespace bqtest
