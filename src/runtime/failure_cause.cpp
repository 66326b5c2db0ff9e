// Exception → (error, exception) for the dead_letter block. The type name is the dynamic
// type, demangled (`std::runtime_error`, `shop::payment_timeout`), the C++ analogue of
// Java's getClass().getName() and Python's class name (wire-core §4.1).
#include "runtime/failure_cause.hpp"

#include <cstdlib>
#include <exception>
#include <memory>
#include <typeinfo>

#if __has_include(<cxxabi.h>)
#include <cxxabi.h>
#define BABELQUEUE_HAVE_CXXABI 1
#endif

namespace babelqueue {
inline namespace v1 {
namespace detail {

std::string demangle(const char* mangled) {
  if (mangled == nullptr) return "unknown";
#ifdef BABELQUEUE_HAVE_CXXABI
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  if (status == 0 && out) return out.get();
#endif
  return mangled;
}

failure_cause current_failure_cause() noexcept {
  failure_cause cause;
  try {
    try {
      throw;
    } catch (const std::exception& e) {
      cause.error = e.what();
      cause.exception = demangle(typeid(e).name());
    } catch (...) {
      cause.error = "unknown exception";
#ifdef BABELQUEUE_HAVE_CXXABI
      const std::type_info* type = abi::__cxa_current_exception_type();
      cause.exception = type != nullptr ? demangle(type->name()) : "unknown";
#else
      cause.exception = "unknown";
#endif
    }
  } catch (...) {
    // Allocation failed while describing the failure; keep what we have.
  }
  return cause;
}

}  // namespace detail
}  // namespace v1
}  // namespace babelqueue
