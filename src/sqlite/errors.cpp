// SQLite result codes -> transport_errc (errors.hpp).
#include "sqlite/errors.hpp"

#include "core/sqlite_support.hpp"

#include <babelqueue/runtime/error.hpp>

#include <sqlite3.h>

#include <string>
#include <utility>

namespace babelqueue::inline v1::sqlite::detail {

error_info sqlite_error(sqlite3* db, int rc, std::string_view what) {
  std::string native_text = babelqueue::detail::sqlite_support::native_text(db, rc);
  std::string message(what);
  message += ": ";
  message += native_text;
  message += " (sqlite code ";
  message += std::to_string(rc);
  message += ")";
  native_error native{"sqlite", rc, std::move(native_text)};
  const auto mapped = [&](transport_errc code) {
    return error_info{code, std::move(message), {}, std::move(native)};
  };
  // docs/errors.md, table "sqlite".
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return mapped(transport_errc::timeout);
    case SQLITE_PERM:
    case SQLITE_AUTH:
    case SQLITE_READONLY:
      return mapped(transport_errc::permission);
    case SQLITE_TOOBIG:
      return mapped(transport_errc::too_large);
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_NOMEM:
      return mapped(transport_errc::unavailable);
    case SQLITE_CANTOPEN:
      return mapped(transport_errc::not_found);
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return mapped(transport_errc::refused);
    default:
      return mapped(transport_errc::unavailable);
  }
}

}  // namespace babelqueue::inline v1::sqlite::detail
