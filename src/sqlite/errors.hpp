#pragma once
// SQLite result codes -> transport_errc, in one place (docs/errors.md, table "sqlite").
//
// Thread-safety: pure (reads sqlite3_errmsg() of the caller's connection).
#include <babelqueue/error.hpp>
#include <babelqueue/runtime/error.hpp>

#include <string_view>

struct sqlite3;

namespace babelqueue::inline v1::sqlite::detail {

/// Turns a failed SQLite call into a typed error with SQLite's code and text kept in
/// error_info::native; the mapping is the "sqlite" table of docs/errors.md.
error_info sqlite_error(sqlite3* db, int rc, std::string_view what);

}  // namespace babelqueue::inline v1::sqlite::detail
