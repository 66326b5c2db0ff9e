#pragma once
// Error propagation for functions that return result<T>, without exceptions: the SDK's
// spelling of "if this failed, return its error" (Abseil's RETURN_IF_ERROR /
// ASSIGN_OR_RETURN in spirit), so the hundreds of
//
//     if (auto r = conn.declare(queue); !r) return fail(r.error());
//     auto rows = store.fetch(n);
//     if (!rows) return fail(rows.error());
//
// read as
//
//     BABELQUEUE_TRY(conn.declare(queue));
//     BABELQUEUE_TRY_LET(rows, store.fetch(n));   // rows: the result, holding a value
//
// Both move the error out (result<T>::error() && returns by value), where the hand-written
// form copied it. The enclosing function's return type must be constructible from a
// `babelqueue::failure` (any result<U>). Macros because only a macro can `return` from its
// caller; the expression is a variadic argument so commas in it (template arguments, braced
// initialisers) need no parentheses.
//
// Private and header-only (not installed): components include it through their private
// `-I src`, as core/shared_helpers.hpp. Macros would leak into users' code from a public
// header.

#include <babelqueue/result.hpp>

#include <utility>

/// Evaluates the expression (a result<T>); on failure returns its error from the enclosing
/// function. A single statement (safe under an unbraced if/else).
#define BABELQUEUE_TRY(...)                                                    \
  do {                                                                         \
    if (auto babelqueue_try_result_ = (__VA_ARGS__); !babelqueue_try_result_)  \
      return ::babelqueue::failure{std::move(babelqueue_try_result_).error()}; \
  } while (false)

/// Declares `auto name = expression;` (a result<T>) and, on failure, returns its error from
/// the enclosing function; after it, `name` holds a value (`*name`, `name->`). Two
/// statements, like the declaration it replaces: use it where a declaration may stand.
#define BABELQUEUE_TRY_LET(name, ...)       \
  auto name = (__VA_ARGS__);                \
  if (!name) return ::babelqueue::failure { \
      std::move(name).error()               \
    }
