// The library's own copy of the version: compiled into babelqueue::core, so a program can
// compare it with the version of the headers it was built against (version.hpp).
#include <babelqueue/version.hpp>

namespace babelqueue::inline v1 {

std::string_view library_version() noexcept { return BABELQUEUE_VERSION_STRING; }

}  // namespace babelqueue::inline v1
