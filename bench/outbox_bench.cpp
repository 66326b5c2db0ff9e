// Outbox relay throughput (issue #15's bar: the relay >= 50 % of the bare loop), rows/s from
// the outbox table to a broker, batch 100, each case beside the same run's bare loop on the
// same database and broker:
//   bare  : hand-written SELECT of 100 pending rows, one publish per row, one UPDATE … SET
//           status = 'published' WHERE id IN (…) per batch — the least a relay must do;
//   relay : outbox::relay::drain() over outbox::sqlite_store / outbox::postgres_store (what
//           users run). PostgreSQL's bare loop takes its batch with the same
//           `FOR UPDATE SKIP LOCKED` inside one transaction per batch, as the store does.
// Each iteration fills the table with k_rows pending rows (untimed) and times the pass.
//
//   BABELQUEUE_REDIS_URL=redis://127.0.0.1:6379 BABELQUEUE_POSTGRES_URL=postgresql://…
//     outbox_bench [--benchmark_…]
// Without BABELQUEUE_POSTGRES_URL the PostgreSQL rows are skipped.
// Without BABELQUEUE_REDIS_URL the broker is memory:// (then the figure is the store's cost
// alone). The SQLite file lives in $TMPDIR (else /tmp).
#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/outbox/relay.hpp>
#include <babelqueue/outbox/sqlite_store.hpp>
#include <babelqueue/redis/redis_transport.hpp>
#include <babelqueue/runtime/url.hpp>

#if BABELQUEUE_BENCH_POSTGRES
#include <babelqueue/outbox/postgres_store.hpp>

#include <libpq-fe.h>
#endif

#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace babelqueue;

constexpr int k_rows = 5000;
constexpr int k_batch = 100;

std::string body_text() {
  make_options mo;
  mo.queue = "bench-outbox";
  return encode(
             make("urn:babel:bench:outbox", json{{"order_id", 1042}, {"sku", "A-1"}}, mo).value())
      .value();
}

std::string sqlite_path() {
  const char* dir = std::getenv("TMPDIR");
  return (std::filesystem::path(dir != nullptr ? dir : "/tmp") /
          ("bq-outbox-bench-" + std::to_string(::getpid()) + ".db"))
      .string();
}

void remove_db(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

std::unique_ptr<transport> broker() {
  memory::register_transport();
  redis::register_transport();
  const char* url = std::getenv("BABELQUEUE_REDIS_URL");
  return open_transport(url != nullptr ? url : "memory://outbox-bench").value();
}

// k_rows pending rows, saved in one transaction.
void fill(outbox::sqlite_store& store, sqlite3* db, const std::string& body) {
  sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
  for (int i = 0; i < k_rows; ++i) (void)store.save(body, "bench-outbox");
  sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
}

void drain_queue(transport& t) {
  // Keeps the broker from growing across iterations (untimed).
  for (;;) {
    auto m = t.receive("bench-outbox", std::chrono::milliseconds(0));
    if (!m || !*m) break;
    (void)t.ack(**m);
  }
}

// Times `pass()` (returns the rows it moved) once per iteration, each after an untimed
// `fill()` and before an untimed drain of the broker, and reports rows/s.
template <class Fill, class Pass>
void timed_passes(benchmark::State& state, transport& t, Fill&& fill_rows, Pass&& pass) {
  std::int64_t rows = 0;
  for (auto _ : state) {
    state.PauseTiming();
    fill_rows();
    state.ResumeTiming();
    rows += pass();
    state.PauseTiming();
    drain_queue(t);
    state.ResumeTiming();
  }
  state.counters["rows/s"] =
      benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsRate);
}

// One relay drain as a timed pass.
std::int64_t relay_pass(benchmark::State& state, outbox::relay& relay) {
  auto r = relay.drain();
  if (!r) {
    state.SkipWithError(r.error().message.c_str());
    return 0;
  }
  return static_cast<std::int64_t>(r->published);
}

void sqlite_bare(benchmark::State& state) {
  const std::string path = sqlite_path();
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  auto store = outbox::sqlite_store::adopt(db).value();
  store->migrate().value();
  auto t = broker();
  const std::string body = body_text();
  sqlite3_stmt* select = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT id, queue, body FROM babelqueue_outbox WHERE status = 'pending' "
                     "ORDER BY id LIMIT 100",
                     -1, &select, nullptr);
  timed_passes(
      state, *t, [&] { fill(*store, db, body); },
      [&] {
        std::int64_t rows = 0;
        for (;;) {
          std::vector<std::int64_t> ids;
          while (sqlite3_step(select) == SQLITE_ROW) {
            const auto* q = reinterpret_cast<const char*>(sqlite3_column_text(select, 1));
            const auto* b = static_cast<const char*>(sqlite3_column_blob(select, 2));
            const std::string_view bytes(b,
                                         static_cast<std::size_t>(sqlite3_column_bytes(select, 2)));
            if (!t->publish(q, bytes)) state.SkipWithError("publish failed");
            ids.push_back(sqlite3_column_int64(select, 0));
          }
          sqlite3_reset(select);
          if (ids.empty()) break;
          std::string sql = "UPDATE babelqueue_outbox SET status = 'published' WHERE id IN (";
          for (std::size_t i = 0; i < ids.size(); ++i) {
            if (i > 0)
              sql += ',';  // (not `"," + …`: GCC 12's -Wrestrict false positive, PR 105329)
            sql += std::to_string(ids[i]);
          }
          sql += ")";
          sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
          rows += static_cast<std::int64_t>(ids.size());
        }
        return rows;
      });
  sqlite3_finalize(select);
  store.reset();
  sqlite3_close(db);
  remove_db(path);
}

void sqlite_relay(benchmark::State& state) {
  const std::string path = sqlite_path();
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  std::shared_ptr<outbox::sqlite_store> store = outbox::sqlite_store::adopt(db).value();
  store->migrate().value();
  auto t = broker();
  const std::string body = body_text();
  outbox::relay_options o;
  o.batch = k_batch;
  outbox::relay relay(store, *t, o);
  timed_passes(
      state, *t, [&] { fill(*store, db, body); }, [&] { return relay_pass(state, relay); });
  store.reset();
  sqlite3_close(db);
  remove_db(path);
}

#if BABELQUEUE_BENCH_POSTGRES
const char* postgres_url() { return std::getenv("BABELQUEUE_POSTGRES_URL"); }

bool exec_ok(PGconn* c, const char* sql) {
  PGresult* r = PQexec(c, sql);
  const auto st = PQresultStatus(r);
  PQclear(r);
  return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
}

// k_rows pending rows in one statement (untimed), on a raw connection.
bool pg_fill(PGconn* c, const std::string& body) {
  const char* values[] = {body.data()};
  const int lengths[] = {static_cast<int>(body.size())};
  const int formats[] = {1};
  PGresult* r =
      PQexecParams(c,
                   "INSERT INTO bq_bench_outbox (queue, body) SELECT 'bench-outbox', $1::bytea "
                   "FROM generate_series(1, 5000)",
                   1, nullptr, values, lengths, formats, 0);
  const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  PQclear(r);
  return ok;
}

PGconn* pg_setup(benchmark::State& state) {
  if (postgres_url() == nullptr) {
    state.SkipWithError("BABELQUEUE_POSTGRES_URL is not set");
    return nullptr;
  }
  PGconn* c = PQconnectdb(postgres_url());
  if (PQstatus(c) != CONNECTION_OK) {
    state.SkipWithError("cannot connect to PostgreSQL");
    PQfinish(c);
    return nullptr;
  }
  exec_ok(c, "DROP TABLE IF EXISTS bq_bench_outbox");
  outbox::postgres_store_options o;
  o.table = "bq_bench_outbox";
  (void)outbox::postgres_store::adopt(c, o).value()->migrate();
  return c;
}

void postgres_bare(benchmark::State& state) {
  PGconn* c = pg_setup(state);
  if (c == nullptr) return;
  auto t = broker();
  const std::string body = body_text();
  const auto fill_rows = [&] {
    if (!pg_fill(c, body)) state.SkipWithError(PQerrorMessage(c));
  };
  timed_passes(state, *t, fill_rows, [&] {
    std::int64_t rows = 0;
    for (;;) {
      exec_ok(c, "BEGIN");
      PGresult* r =
          PQexecParams(c,
                       "SELECT id, queue, body FROM bq_bench_outbox WHERE status = 'pending' "
                       "ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED",
                       0, nullptr, nullptr, nullptr, nullptr, 1);
      const int n = PQntuples(r);
      std::string ids = "{";
      for (int i = 0; i < n; ++i) {
        std::int64_t id = 0;
        for (int b = 0; b < 8; ++b)
          id = (id << 8) | static_cast<unsigned char>(PQgetvalue(r, i, 0)[b]);
        const std::string_view q(PQgetvalue(r, i, 1),
                                 static_cast<std::size_t>(PQgetlength(r, i, 1)));
        const std::string_view bytes(PQgetvalue(r, i, 2),
                                     static_cast<std::size_t>(PQgetlength(r, i, 2)));
        if (!t->publish(q, bytes)) state.SkipWithError("publish failed");
        if (i > 0) ids += ',';
        ids += std::to_string(id);
      }
      PQclear(r);
      if (n == 0) {
        exec_ok(c, "COMMIT");
        break;
      }
      ids += "}";
      const char* values[] = {ids.c_str()};
      PGresult* u =
          PQexecParams(c,
                       "UPDATE bq_bench_outbox SET status = 'published', published_at = now() "
                       "WHERE id = ANY($1::bigint[])",
                       1, nullptr, values, nullptr, nullptr, 0);
      PQclear(u);
      exec_ok(c, "COMMIT");
      rows += n;
    }
    return rows;
  });
  exec_ok(c, "DROP TABLE IF EXISTS bq_bench_outbox");
  PQfinish(c);
}

void postgres_relay(benchmark::State& state) {
  PGconn* c = pg_setup(state);
  if (c == nullptr) return;
  outbox::postgres_store_options o;
  o.table = "bq_bench_outbox";
  std::shared_ptr<outbox::postgres_store> store =
      outbox::postgres_store::open(postgres_url(), o).value();
  auto t = broker();
  const std::string body = body_text();
  outbox::relay_options ro;
  ro.batch = k_batch;
  outbox::relay relay(store, *t, ro);
  timed_passes(
      state, *t,
      [&] {
        if (!pg_fill(c, body)) state.SkipWithError(PQerrorMessage(c));
      },
      [&] { return relay_pass(state, relay); });
  store.reset();
  exec_ok(c, "DROP TABLE IF EXISTS bq_bench_outbox");
  PQfinish(c);
}
#endif

}  // namespace

BENCHMARK(sqlite_bare)
    ->Name("outbox/sqlite/bare_select_publish_update")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5)
    ->UseRealTime();
BENCHMARK(sqlite_relay)
    ->Name("outbox/sqlite/relay_drain")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5)
    ->UseRealTime();

#if BABELQUEUE_BENCH_POSTGRES
BENCHMARK(postgres_bare)
    ->Name("outbox/postgres/bare_select_publish_update")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5)
    ->UseRealTime();
BENCHMARK(postgres_relay)
    ->Name("outbox/postgres/relay_drain")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5)
    ->UseRealTime();
#endif

BENCHMARK_MAIN();
