#pragma once
// The one check of a table name that a store puts into SQL text (a table cannot be a bound
// parameter): `[A-Za-z_][A-Za-z0-9_]{0,62}` — ASCII only, at most 63 bytes (PostgreSQL's
// identifier limit, so a name valid for one SQL store is valid for all). Shared by the
// outbox and idempotency SQL stores so every store refuses the same names. Header-only and
// private (`#include "core/sql_identifier.hpp"`).
//
// Thread-safety: a pure function.

#include <string_view>

namespace babelqueue::inline v1::detail {

/// True when `name` can be put into SQL as a bare identifier without quoting.
constexpr bool safe_sql_identifier(std::string_view name) noexcept {
  if (name.empty() || name.size() > 63) return false;
  const auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); };
  if (!(letter(name[0]) || name[0] == '_')) return false;
  for (char c : name) {
    if (!(letter(c) || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

}  // namespace babelqueue::inline v1::detail
