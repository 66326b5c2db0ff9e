// The libpq session of the PostgreSQL stores (src/postgres/session.hpp): the TLS rule (never
// libpq's silent plaintext fallback) and the bounds — connecting to a server that accepts
// and never answers, and a statement on a backend that stalls (SIGSTOP), each end with
// `unavailable` within their bound, and the session works again once the server does.
#include "postgres/session.hpp"

#include "support/postgres.hpp"

#include <babelqueue/idempotency/error.hpp>
#include <babelqueue/idempotency/postgres_store.hpp>
#include <babelqueue/outbox/error.hpp>
#include <babelqueue/outbox/postgres_store.hpp>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <string>

namespace {

using namespace babelqueue;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

const postgres::error_codes codes{make_error_code(outbox::errc::invalid_argument),
                                  make_error_code(outbox::errc::unavailable),
                                  make_error_code(outbox::errc::backend), "test postgres"};

std::string mode(const std::string& conninfo, std::string_view env_sslmode = "",
                 std::string_view env_host = "") {
  auto m = postgres::tls_mode(conninfo, env_sslmode, env_host, codes);
  return m ? *m : "error: " + m.error().message;
}

TEST(PostgresTls, ALoopbackOrUnixSocketServerIsReachedWithoutTls) {
  EXPECT_EQ(mode("postgresql://u@127.0.0.1:5432/db"), "disable");
  EXPECT_EQ(mode("postgresql://u@localhost/db"), "disable");
  EXPECT_EQ(mode("postgresql://u@[::1]:5432/db"), "disable");
  EXPECT_EQ(mode("host=/var/run/postgresql dbname=db"), "disable");
  EXPECT_EQ(mode("dbname=db"), "disable");  // libpq's default: the unix socket
  EXPECT_EQ(mode("postgresql:///db"), "disable");
  EXPECT_EQ(mode("host=localhost,127.0.0.2 dbname=db"), "disable");
}

TEST(PostgresTls, AnyOtherServerGetsVerifiedTls) {
  EXPECT_EQ(mode("postgresql://u:pw@db.example.com/db"), "verify-full");
  EXPECT_EQ(mode("postgresql://u@10.0.0.5:5432/db"), "verify-full");
  EXPECT_EQ(mode("host=localhost,db.example.com dbname=db"), "verify-full");  // one remote
  EXPECT_EQ(mode("hostaddr=10.1.2.3 dbname=db"), "verify-full");
  EXPECT_EQ(mode("dbname=db", "", "db.example.com"), "verify-full");  // PGHOST
  EXPECT_EQ(mode("dbname=db", "", "/tmp"), "disable");
}

TEST(PostgresTls, AnExplicitModeIsKeptAndTheFallbackModesAreRefused) {
  EXPECT_EQ(mode("postgresql://u@db.example.com/db?sslmode=disable"), "disable");
  EXPECT_EQ(mode("postgresql://u@db.example.com/db?sslmode=require"), "require");
  EXPECT_EQ(mode("postgresql://u@127.0.0.1/db?sslmode=verify-full"), "verify-full");
  EXPECT_EQ(mode("postgresql://u@db.example.com/db", "disable"), "disable");  // PGSSLMODE
  EXPECT_EQ(mode("postgresql://u@db.example.com/db?sslmode=require", "disable"), "require");
  for (const char* fallback : {"prefer", "allow"}) {
    auto m = postgres::tls_mode(
        std::string("postgresql://u:s3cret@db.example.com/db?sslmode=") + fallback, "", "", codes);
    ASSERT_FALSE(m) << fallback;
    EXPECT_EQ(m.error().code, outbox::errc::invalid_argument);
    EXPECT_NE(m.error().message.find("plaintext"), std::string::npos) << m.error().message;
    EXPECT_EQ(m.error().message.find("s3cret"), std::string::npos) << m.error().message;
    EXPECT_FALSE(postgres::tls_mode("dbname=db", fallback, "", codes)) << "PGSSLMODE=" << fallback;
  }
}

TEST(PostgresTls, AStoreRefusesAFallbackModeBeforeConnecting) {
  auto o = outbox::postgres_store::open("postgresql://u@127.0.0.1:1/db?sslmode=prefer");
  ASSERT_FALSE(o);
  EXPECT_EQ(o.error().code, outbox::errc::invalid_argument) << o.error().message;
  auto i = idempotency::postgres_store::open("postgresql://u@127.0.0.1:1/db?sslmode=allow");
  ASSERT_FALSE(i);
  EXPECT_EQ(i.error().code, idempotency::errc::invalid_argument) << i.error().message;
}

TEST(PostgresBounds, ANonPositiveBoundIsRefused) {
  auto o = outbox::postgres_store::open("postgresql://u@127.0.0.1:1/db", {.connect_timeout = 0ms});
  ASSERT_FALSE(o);
  EXPECT_EQ(o.error().code, outbox::errc::invalid_argument) << o.error().message;
  auto i =
      idempotency::postgres_store::open("postgresql://u@127.0.0.1:1/db", {.call_timeout = -1ms});
  ASSERT_FALSE(i);
  EXPECT_EQ(i.error().code, idempotency::errc::invalid_argument) << i.error().message;
}

// A TCP port that accepts connections (the kernel completes them from the backlog) and
// never answers: a server that hangs before it speaks.
class silent_listener {
 public:
  silent_listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 || ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      ADD_FAILURE() << "listen: " << errno;
    }
    port_ = ntohs(a.sin_port);
  }
  ~silent_listener() { ::close(fd_); }
  silent_listener(const silent_listener&) = delete;
  silent_listener& operator=(const silent_listener&) = delete;
  std::string url() const {
    return "postgresql://u:s3cret@127.0.0.1:" + std::to_string(port_) + "/db";
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST(PostgresBounds, AServerThatNeverAnswersEndsTheConnectWithinConnectTimeout) {
  silent_listener server;
  const auto t0 = clock_type::now();
  // libpq's connect_timeout is whole seconds, at least 2.
  auto o = outbox::postgres_store::open(server.url(), {.connect_timeout = 2s});
  const auto took = clock_type::now() - t0;
  ASSERT_FALSE(o);
  EXPECT_EQ(o.error().code, outbox::errc::unavailable) << o.error().message;
  EXPECT_EQ(o.error().message.find("s3cret"), std::string::npos) << o.error().message;
  EXPECT_GE(took, 1500ms);
  EXPECT_LT(took, 6s);
  // The URL's own connect_timeout wins over the option.
  const auto t1 = clock_type::now();
  auto i = idempotency::postgres_store::open(server.url() + "?connect_timeout=2",
                                             {.connect_timeout = 60s});
  ASSERT_FALSE(i);
  EXPECT_EQ(i.error().code, idempotency::errc::unavailable) << i.error().message;
  EXPECT_LT(clock_type::now() - t1, 6s);
}

// The pid of the backend serving the connection named `application_name`.
std::string backend_of(bqtest::pg_client& raw, const std::string& application_name) {
  return raw.scalar("SELECT pid FROM pg_stat_activity WHERE application_name = $1",
                    {application_name});
}

// SIGSTOPs a backend (a server process that hangs mid-session: its socket still takes
// bytes, nothing answers); SIGCONT on destruction whatever the test did.
class stopped_backend {
 public:
  explicit stopped_backend(const std::string& pid) : pid_(std::stoi(pid)) {
    EXPECT_EQ(::kill(pid_, SIGSTOP), 0) << "SIGSTOP " << pid_ << ": " << errno;
  }
  ~stopped_backend() { resume(); }
  stopped_backend(const stopped_backend&) = delete;
  stopped_backend& operator=(const stopped_backend&) = delete;
  void resume() {
    if (pid_ > 0) ::kill(pid_, SIGCONT);
    pid_ = -1;
  }

 private:
  pid_t pid_;
};

class PostgresStall : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = bqtest::postgres_url();
    BQ_REQUIRE_POSTGRES(url_);
    name_ = bqtest::unique_table("bq_stall");
  }
  // The server's URL with an application_name to find the store's backend by.
  std::string named_url() const {
    return url_ + (url_.find('?') == std::string::npos ? "?" : "&") + "application_name=" + name_;
  }
  std::string url_;
  std::string name_;
};

TEST_F(PostgresStall, AStatementOnAStalledBackendIsUnavailableWithinCallTimeoutThenWorksAgain) {
  auto store = outbox::postgres_store::open(named_url(), {.table = name_, .call_timeout = 1s});
  ASSERT_TRUE(store) << store.error().message;
  ASSERT_TRUE((*store)->migrate());
  ASSERT_TRUE((*store)->save("one", "q"));
  bqtest::pg_client raw(url_);
  const std::string pid = backend_of(raw, name_);
  ASSERT_FALSE(pid.empty());
  {
    stopped_backend stall(pid);
    const auto t0 = clock_type::now();
    auto listed = (*store)->list({});
    const auto took = clock_type::now() - t0;
    ASSERT_FALSE(listed);
    EXPECT_EQ(listed.error().code, outbox::errc::unavailable) << listed.error().message;
    EXPECT_NE(listed.error().message.find("call_timeout"), std::string::npos)
        << listed.error().message;
    EXPECT_GE(took, 900ms);
    EXPECT_LT(took, 4s);
  }
  // The next call reconnects (a new backend) and sees the row.
  auto listed = (*store)->list({});
  ASSERT_TRUE(listed) << listed.error().message;
  EXPECT_EQ(listed->size(), 1u);
  raw.exec("DROP TABLE " + name_);
}

TEST_F(PostgresStall, AWriteThatTimedOutIsNeverRepeatedOnTheNewConnection) {
  // A save whose answer never came may still commit (the stopped backend has the statement
  // in its socket, and runs it when it resumes): the store says `unavailable` and never
  // sends it again by itself — at most one row, never two.
  auto store = outbox::postgres_store::open(named_url(), {.table = name_, .call_timeout = 1s});
  ASSERT_TRUE(store) << store.error().message;
  ASSERT_TRUE((*store)->migrate());
  bqtest::pg_client raw(url_);
  const std::string pid = backend_of(raw, name_);
  ASSERT_FALSE(pid.empty());
  {
    stopped_backend stall(pid);
    auto saved = (*store)->save("body", "q");
    ASSERT_FALSE(saved);
    EXPECT_EQ(saved.error().code, outbox::errc::unavailable) << saved.error().message;
  }
  auto next = (*store)->save("next", "q");  // reconnects
  ASSERT_TRUE(next) << next.error().message;
  for (int i = 0;
       i < 50 && !raw.scalar("SELECT pid FROM pg_stat_activity WHERE pid = " + pid).empty(); ++i) {
    ::usleep(100'000);  // the resumed backend finishes (and finds its client gone)
  }
  const std::string bodies = raw.scalar("SELECT count(*) FROM " + name_ + " WHERE queue = 'q'");
  EXPECT_TRUE(bodies == "1" || bodies == "2") << bodies;  // "next", and "body" at most once
  const std::string timed_out =
      raw.scalar("SELECT count(*) FROM " + name_ + " WHERE body = 'body'::bytea");
  EXPECT_TRUE(timed_out == "0" || timed_out == "1") << timed_out;
  raw.exec("DROP TABLE " + name_);
}

TEST_F(PostgresStall, AnIdempotencyCheckOnAStalledBackendIsUnavailableWithinCallTimeout) {
  auto store = idempotency::postgres_store::open(named_url(), {.table = name_, .call_timeout = 1s});
  ASSERT_TRUE(store) << store.error().message;
  ASSERT_TRUE((*store)->migrate());
  bqtest::pg_client raw(url_);
  const std::string pid = backend_of(raw, name_);
  ASSERT_FALSE(pid.empty());
  {
    stopped_backend stall(pid);
    const auto t0 = clock_type::now();
    auto r = (*store)->seen("id-1");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, idempotency::errc::unavailable) << r.error().message;
    EXPECT_LT(clock_type::now() - t0, 4s);
  }
  auto seen = (*store)->seen("id-1");
  ASSERT_TRUE(seen) << seen.error().message;
  EXPECT_FALSE(*seen);
  raw.exec("DROP TABLE " + name_);
  raw.exec("DROP TABLE " + name_ + "_claims");
}

}  // namespace

namespace {

// Whether the store's own connection is encrypted: pg_stat_ssl of the backend that serves
// the connection named `application_name`.
std::string ssl_of(const std::string& url, const std::string& application_name) {
  bqtest::pg_client raw(url);
  return raw.scalar(
      "SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) "
      "WHERE a.application_name = $1",
      {application_name});
}

TEST_F(PostgresStall, TlsAskedForIsVerifiedTlsAndALoopbackDefaultIsPlain) {
  const std::string ca = bqtest::env_or_empty("BABELQUEUE_POSTGRES_TLS_CA");
  ASSERT_FALSE(ca.empty()) << "services.sh exports BABELQUEUE_POSTGRES_TLS_CA";
  // The server's URL on 127.0.0.1: no sslmode, loopback → disable.
  {
    auto plain = outbox::postgres_store::open(named_url());
    ASSERT_TRUE(plain) << plain.error().message;
    EXPECT_EQ(ssl_of(url_, name_), "f");
  }
  // verify-full with the CA: TLS, the certificate and the host name checked.
  const std::string verified_name = name_ + "_tls";
  auto tls = outbox::postgres_store::open(url_ + "?sslmode=verify-full&sslrootcert=" + ca +
                                          "&application_name=" + verified_name);
  ASSERT_TRUE(tls) << tls.error().message;
  EXPECT_EQ(ssl_of(url_, verified_name), "t");
  // verify-full without a CA the client trusts: refused, not a silent plaintext connection.
  auto untrusted = outbox::postgres_store::open(
      url_ + "?sslmode=verify-full&sslrootcert=" + "/nonexistent/ca.pem");
  ASSERT_FALSE(untrusted);
  EXPECT_EQ(untrusted.error().code, outbox::errc::unavailable) << untrusted.error().message;
}

}  // namespace
