#pragma once
// The on-disk layout of the sqlite transport and its one-time setup per connection.
// Private to babelqueue::sqlite; documented for operators in docs/transports/sqlite.md.

#include "sqlite/db.hpp"

#include <babelqueue/sqlite/sqlite_transport.hpp>

namespace babelqueue::inline v1::sqlite::detail {

/// `PRAGMA application_id` of a babelqueue queue file ("BQ" + schema family 1), so that a
/// file belonging to another application is refused instead of being written into.
inline constexpr int application_id = 0x42510001;
/// `PRAGMA user_version` of the current table layout. A file with a larger value was
/// written by a newer babelqueue and is refused (transport_errc::refused) rather than misread.
inline constexpr int schema_version = 1;

/// Sets the connection's pragmas (busy_timeout, WAL, synchronous), checks the file's
/// identity and creates the table and index when missing — in one IMMEDIATE transaction so
/// that processes opening a new file at the same moment do not race.
result<void> prepare_database(connection& db, const sqlite::options& opts);

}  // namespace babelqueue::inline v1::sqlite::detail
