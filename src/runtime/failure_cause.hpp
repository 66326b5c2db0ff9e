#pragma once
// What a failing handler raised, as the dead_letter block's `error` and `exception`.
#include <string>

namespace babelqueue {
inline namespace v1 {
namespace detail {

struct failure_cause {
  std::string error;      // what(), or "unknown exception"
  std::string exception;  // the thrown object's demangled type name
};

/// Describes the exception currently being handled. Call only inside a catch block.
failure_cause current_failure_cause() noexcept;

/// Demangles a type name from typeid(...).name() (returned unchanged when that fails).
std::string demangle(const char* mangled);

}  // namespace detail
}  // namespace v1
}  // namespace babelqueue
