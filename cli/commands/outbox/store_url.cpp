#include "commands/outbox/store_url.hpp"

#include <babelqueue/outbox/error.hpp>
#include <babelqueue/runtime/url.hpp>

#if BABELQUEUE_HAVE_OUTBOX_SQLITE
#include <babelqueue/outbox/sqlite_store.hpp>
#endif
#if BABELQUEUE_HAVE_OUTBOX_POSTGRES
#include <babelqueue/outbox/postgres_store.hpp>
#endif

#include <string_view>

namespace babelqueue::cli {

namespace {
bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

template <class Store>
result<std::shared_ptr<outbox::store>> migrated(result<std::unique_ptr<Store>> opened) {
  if (!opened) return fail(opened.error());
  if (auto m = (*opened)->migrate(); !m) return fail(m.error());
  return std::shared_ptr<outbox::store>(std::move(*opened));
}
}  // namespace

result<std::shared_ptr<outbox::store>> open_outbox_store(const std::string& url,
                                                         const outbox_db_options& options) {
  if (starts_with(url, "sqlite://")) {
#if BABELQUEUE_HAVE_OUTBOX_SQLITE
    outbox::sqlite_store_options o;
    o.table = options.table;
    o.park_after = options.park_after;
    return migrated(outbox::sqlite_store::open(url.substr(9), o));
#else
    return fail(outbox::errc::invalid_argument,
                "--db sqlite://: this binary was built without babelqueue::outbox_sqlite");
#endif
  }
  if (starts_with(url, "postgresql://") || starts_with(url, "postgres://")) {
#if BABELQUEUE_HAVE_OUTBOX_POSTGRES
    outbox::postgres_store_options o;
    o.table = options.table;
    o.park_after = options.park_after;
    return migrated(outbox::postgres_store::open(url, o));
#else
    return fail(outbox::errc::invalid_argument,
                "--db postgresql://: this binary was built without babelqueue::outbox_postgres");
#endif
  }
  return fail(outbox::errc::invalid_argument,
              "--db: expected sqlite://PATH or postgresql://USER@HOST:PORT/DB, got '" +
                  redact_url(url) + "'");
}

}  // namespace babelqueue::cli
