# FindPulsar — locates the Apache Pulsar C++ client and creates the imported target
# Pulsar::pulsar.
#
# Why a find module: the client's release build (scripts/vendor.sh builds it from
# <shared>/vendor; Debian has no package) installs headers and libpulsar.so but no CMake
# package and no pkg-config file (only the vcpkg port has `unofficial-pulsar`). Point CMake
# at its prefix with CMAKE_PREFIX_PATH or Pulsar_ROOT. libpulsar.so is built with hidden
# visibility and links its own dependencies (protobuf, Boost.Asio, curl, ...), so users need
# only -lpulsar; its public headers need neither Boost nor protobuf.
#
# Result variables: Pulsar_FOUND, Pulsar_VERSION, Pulsar_INCLUDE_DIR, Pulsar_LIBRARY.
include(FindPackageHandleStandardArgs)

if(NOT TARGET Pulsar::pulsar)
  find_package(unofficial-pulsar CONFIG QUIET)
  if(TARGET unofficial::pulsar::pulsar)
    add_library(Pulsar::pulsar INTERFACE IMPORTED)
    set_target_properties(Pulsar::pulsar PROPERTIES INTERFACE_LINK_LIBRARIES unofficial::pulsar::pulsar)
  endif()
endif()
if(TARGET Pulsar::pulsar)
  set(Pulsar_FOUND TRUE)
  return()
endif()

find_path(Pulsar_INCLUDE_DIR NAMES pulsar/Client.h)
find_library(Pulsar_LIBRARY NAMES pulsar)
if(Pulsar_INCLUDE_DIR AND EXISTS "${Pulsar_INCLUDE_DIR}/pulsar/Version.h")
  file(STRINGS "${Pulsar_INCLUDE_DIR}/pulsar/Version.h" _pulsar_version_line
       REGEX "^#define PULSAR_VERSION_STR ")
  string(REGEX MATCH "\"([0-9.]+)" _pulsar_version_match "${_pulsar_version_line}")
  set(Pulsar_VERSION "${CMAKE_MATCH_1}")
  unset(_pulsar_version_line)
  unset(_pulsar_version_match)
endif()

find_package_handle_standard_args(Pulsar
  REQUIRED_VARS Pulsar_LIBRARY Pulsar_INCLUDE_DIR
  VERSION_VAR Pulsar_VERSION)

if(Pulsar_FOUND AND NOT TARGET Pulsar::pulsar)
  add_library(Pulsar::pulsar SHARED IMPORTED)
  set_target_properties(Pulsar::pulsar PROPERTIES
    IMPORTED_LOCATION "${Pulsar_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${Pulsar_INCLUDE_DIR}")
endif()
mark_as_advanced(Pulsar_INCLUDE_DIR Pulsar_LIBRARY)
