# FindProton — locates Qpid Proton's C++ binding and its C library and creates the imported
# target Proton::cpp (`#include <proton/container.hpp>`; links qpid-proton-cpp and
# qpid-proton).
#
# Why a find module: Debian bookworm's libqpid-proton-cpp12-dev (0.37) ships no CMake
# package, and its libqpid-proton-cpp.pc is broken (it Requires libqpid-proton-core and
# libqpid-proton-proactor .pc files that are not shipped), so pkg-config cannot be used.
# Upstream builds that install ProtonCppConfig.cmake are accepted too.
#
# Result variables: Proton_FOUND, Proton_INCLUDE_DIR, Proton_CPP_LIBRARY, Proton_C_LIBRARY.
include(FindPackageHandleStandardArgs)

if(NOT TARGET Proton::cpp)
  find_package(ProtonCpp CONFIG QUIET NO_MODULE)
  if(TARGET Proton::cpp)
    set(Proton_FOUND TRUE)
    return()
  endif()
endif()
if(TARGET Proton::cpp)
  set(Proton_FOUND TRUE)
  return()
endif()

find_path(Proton_INCLUDE_DIR NAMES proton/container.hpp)
find_library(Proton_CPP_LIBRARY NAMES qpid-proton-cpp)
find_library(Proton_C_LIBRARY NAMES qpid-proton)

find_package_handle_standard_args(Proton
  REQUIRED_VARS Proton_CPP_LIBRARY Proton_C_LIBRARY Proton_INCLUDE_DIR)

if(Proton_FOUND AND NOT TARGET Proton::cpp)
  add_library(Proton::cpp UNKNOWN IMPORTED)
  set_target_properties(Proton::cpp PROPERTIES
    IMPORTED_LOCATION "${Proton_CPP_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${Proton_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${Proton_C_LIBRARY}")
endif()
mark_as_advanced(Proton_INCLUDE_DIR Proton_CPP_LIBRARY Proton_C_LIBRARY)
