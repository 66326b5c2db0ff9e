// What the idempotency wrap costs per message on each persistent store, beside the bare
// operation of the same run on the same backend (issue #15's bars):
//   SQLite: an `INSERT … ON CONFLICT DO NOTHING` loop (autocommit, WAL, same file system);
//   Redis:  a `SET <key> 1 NX` loop on a plain hiredis connection;
//   PostgreSQL: Go's conditional `INSERT … ON CONFLICT … DO UPDATE … WHERE … RETURNING` loop
//           on a plain libpq connection (autocommit), when BABELQUEUE_POSTGRES_URL is set;
// then wrap() (seen + remember) and wrap_claiming() (seen + claim + remember) around a
// no-op handler, each message with a fresh meta.id. Redis rows report round trips per
// message from the store's own counter.
//
//   BABELQUEUE_REDIS_URL=redis://127.0.0.1:6379 idempotency_bench [--benchmark_…]
// Without BABELQUEUE_REDIS_URL the Redis rows are skipped. The SQLite file lives in
// $TMPDIR (else /tmp); say which file system it is when quoting figures.
#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/idempotency/redis_store.hpp>
#include <babelqueue/idempotency/sqlite_store.hpp>
#include <babelqueue/idempotency/wrap.hpp>
#include <babelqueue/runtime/url.hpp>

#if BABELQUEUE_BENCH_POSTGRES
#include <babelqueue/idempotency/postgres_store.hpp>

#include <libpq-fe.h>
#endif

#include <benchmark/benchmark.h>
#include <hiredis/hiredis.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace babelqueue;

constexpr int k_messages = 20000;  // fixed: every iteration gets a fresh id

std::string run_tag() { return std::to_string(::getpid()) + "-" + std::to_string(std::rand()); }

// k_messages decoded envelopes with distinct meta.ids (decoded before the timed loop).
std::vector<envelope> envelopes(const std::string& tag) {
  std::vector<envelope> out;
  out.reserve(k_messages);
  for (int i = 0; i < k_messages; ++i) {
    const std::string body =
        R"({"job":"urn:a:b:c","trace_id":"t","data":{},"meta":{"schema_version":1,"id":")" + tag +
        "-" + std::to_string(i) + R"("},"attempts":0})";
    out.push_back(decode(body).value());
  }
  return out;
}

std::string sqlite_path() {
  const char* dir = std::getenv("TMPDIR");
  return (std::filesystem::path(dir != nullptr ? dir : "/tmp") /
          ("bq-idem-bench-" + std::to_string(::getpid()) + ".db"))
      .string();
}

void run_wrap(benchmark::State& state, const handler& h, const std::vector<envelope>& envs) {
  received_message delivery;
  std::size_t i = 0;
  for (auto _ : state) {
    message m(delivery, envs[i++], nullptr);
    h(m);
  }
}

void sqlite_bare_insert(benchmark::State& state) {
  const std::string path = sqlite_path();
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_exec(db,
               "PRAGMA journal_mode=WAL; CREATE TABLE IF NOT EXISTS bare (message_id TEXT NOT "
               "NULL PRIMARY KEY, created_at INTEGER NOT NULL, expires_at INTEGER NULL)",
               nullptr, nullptr, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db,
                     "INSERT INTO bare (message_id, created_at, expires_at) VALUES (?1, ?2, NULL)"
                     " ON CONFLICT (message_id) DO NOTHING",
                     -1, &st, nullptr);
  const std::string tag = run_tag();
  int i = 0;
  for (auto _ : state) {
    const std::string id = tag + "-" + std::to_string(i++);
    sqlite3_bind_text(st, 1, id.data(), static_cast<int>(id.size()), SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, 1);
    if (sqlite3_step(st) != SQLITE_DONE) state.SkipWithError(sqlite3_errmsg(db));
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
}

void sqlite_wrap(benchmark::State& state, bool claiming) {
  const std::string path = sqlite_path();
  std::shared_ptr<idempotency::sqlite_store> store = idempotency::sqlite_store::open(path).value();
  store->migrate().value();
  const auto envs = envelopes(run_tag());
  auto noop = [](message&) {};
  const handler h =
      claiming ? idempotency::wrap_claiming(store, noop) : idempotency::wrap(store, noop);
  run_wrap(state, h, envs);
  store.reset();
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
}

const char* redis_url() { return std::getenv("BABELQUEUE_REDIS_URL"); }

void redis_bare_setnx(benchmark::State& state) {
  if (redis_url() == nullptr) return state.SkipWithError("BABELQUEUE_REDIS_URL is not set");
  auto url = broker_url::parse(redis_url()).value();
  redisContext* c = redisConnect(url.host.c_str(), url.port.value_or(6379));
  if (c == nullptr || c->err != 0) return state.SkipWithError("cannot connect");
  const std::string tag = "bq:bench-bare:" + run_tag() + "-";
  int i = 0;
  for (auto _ : state) {
    const std::string key = tag + std::to_string(i++);
    auto* r = static_cast<redisReply*>(
        redisCommand(c, "SET %b 1 NX", key.data(), static_cast<std::size_t>(key.size())));
    if (r == nullptr) {
      state.SkipWithError("SET NX failed");
      break;
    }
    freeReplyObject(r);
  }
  state.counters["round_trips/msg"] = 1;
  redisFree(c);
}

void redis_wrap(benchmark::State& state, bool claiming) {
  if (redis_url() == nullptr) return state.SkipWithError("BABELQUEUE_REDIS_URL is not set");
  std::shared_ptr<idempotency::redis_store> store =
      idempotency::redis_store::open(redis_url(), {.prefix = "bq:bench-idemp:"}).value();
  const auto envs = envelopes(run_tag());
  auto noop = [](message&) {};
  const handler h =
      claiming ? idempotency::wrap_claiming(store, noop) : idempotency::wrap(store, noop);
  const auto before = store->stats().round_trips;
  run_wrap(state, h, envs);
  state.counters["round_trips/msg"] = static_cast<double>(store->stats().round_trips - before) /
                                      static_cast<double>(state.iterations());
}

#if BABELQUEUE_BENCH_POSTGRES
const char* postgres_url() { return std::getenv("BABELQUEUE_POSTGRES_URL"); }

void postgres_bare_upsert(benchmark::State& state) {
  if (postgres_url() == nullptr) return state.SkipWithError("BABELQUEUE_POSTGRES_URL is not set");
  PGconn* c = PQconnectdb(postgres_url());
  if (PQstatus(c) != CONNECTION_OK) {
    PQfinish(c);
    return state.SkipWithError("cannot connect to PostgreSQL");
  }
  PQclear(PQexec(c,
                 "CREATE TABLE IF NOT EXISTS bq_bench_bare (message_id TEXT NOT NULL PRIMARY KEY, "
                 "created_at TIMESTAMPTZ NOT NULL DEFAULT now(), expires_at TIMESTAMPTZ NULL)"));
  PQclear(PQprepare(
      c, "upsert",
      "INSERT INTO bq_bench_bare (message_id, created_at, expires_at) VALUES ($1, now(), NULL) "
      "ON CONFLICT (message_id) DO UPDATE SET created_at = now(), expires_at = EXCLUDED.expires_at "
      "WHERE bq_bench_bare.expires_at IS NOT NULL AND bq_bench_bare.expires_at <= now() "
      "RETURNING message_id",
      1, nullptr));
  const std::string tag = run_tag();
  int i = 0;
  for (auto _ : state) {
    const std::string id = tag + "-" + std::to_string(i++);
    const char* values[] = {id.c_str()};
    PGresult* r = PQexecPrepared(c, "upsert", 1, values, nullptr, nullptr, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) state.SkipWithError(PQerrorMessage(c));
    PQclear(r);
  }
  state.counters["round_trips/msg"] = 1;
  PQclear(PQexec(c, "DROP TABLE IF EXISTS bq_bench_bare"));
  PQfinish(c);
}

void postgres_wrap(benchmark::State& state, bool claiming) {
  if (postgres_url() == nullptr) return state.SkipWithError("BABELQUEUE_POSTGRES_URL is not set");
  idempotency::postgres_store_options o;
  o.table = "bq_bench_idempotency";
  std::shared_ptr<idempotency::postgres_store> store =
      idempotency::postgres_store::open(postgres_url(), o).value();
  store->migrate().value();
  const auto envs = envelopes(run_tag());
  auto noop = [](message&) {};
  const handler h =
      claiming ? idempotency::wrap_claiming(store, noop) : idempotency::wrap(store, noop);
  run_wrap(state, h, envs);
}
#endif

}  // namespace

BENCHMARK(sqlite_bare_insert)->Name("sqlite/bare_insert_on_conflict")->Iterations(k_messages);
BENCHMARK_CAPTURE(sqlite_wrap, plain, false)->Name("sqlite/wrap")->Iterations(k_messages);
BENCHMARK_CAPTURE(sqlite_wrap, claiming, true)
    ->Name("sqlite/wrap_claiming")
    ->Iterations(k_messages);
BENCHMARK(redis_bare_setnx)->Name("redis/bare_set_nx")->Iterations(k_messages);
BENCHMARK_CAPTURE(redis_wrap, plain, false)->Name("redis/wrap")->Iterations(k_messages);
BENCHMARK_CAPTURE(redis_wrap, claiming, true)->Name("redis/wrap_claiming")->Iterations(k_messages);

#if BABELQUEUE_BENCH_POSTGRES
BENCHMARK(postgres_bare_upsert)->Name("postgres/bare_conditional_upsert")->Iterations(k_messages);
BENCHMARK_CAPTURE(postgres_wrap, plain, false)->Name("postgres/wrap")->Iterations(k_messages);
BENCHMARK_CAPTURE(postgres_wrap, claiming, true)
    ->Name("postgres/wrap_claiming")
    ->Iterations(k_messages);
#endif

BENCHMARK_MAIN();
