#pragma once
// Opens an outbox store from a `--db` URL for the outbox commands:
//   sqlite://PATH                              outbox::sqlite_store (babelqueue::outbox_sqlite)
//   postgresql://… | postgres://…              outbox::postgres_store (babelqueue::outbox_postgres)
// Each when its component is compiled in; the table is created when missing (migrate()).
#include <babelqueue/outbox/store.hpp>
#include <babelqueue/result.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace babelqueue::cli {

struct outbox_db_options {
  std::string table = "babelqueue_outbox";
  std::int64_t park_after = 5;
};

result<std::shared_ptr<outbox::store>> open_outbox_store(const std::string& url,
                                                         const outbox_db_options& options);

}  // namespace babelqueue::cli
