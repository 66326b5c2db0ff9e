# FindRdKafka — locates librdkafka's C client and creates the imported target RdKafka::rdkafka.
#
# Why a find module: Debian's librdkafka-dev (2.0.2) ships pkg-config files (rdkafka,
# rdkafka++) but no CMake package; newer librdkafka builds install RdKafkaConfig.cmake with
# the target RdKafka::rdkafka. This module accepts both and always yields RdKafka::rdkafka
# (`#include <librdkafka/rdkafka.h>`).
#
# Result variables: RdKafka_FOUND, RdKafka_VERSION, RdKafka_INCLUDE_DIR, RdKafka_LIBRARY.
include(FindPackageHandleStandardArgs)

if(NOT TARGET RdKafka::rdkafka)
  find_package(RdKafka CONFIG QUIET NO_MODULE)
endif()
if(TARGET RdKafka::rdkafka)
  set(RdKafka_FOUND TRUE)
  return()
endif()

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_RDKAFKA QUIET rdkafka)
endif()
find_path(RdKafka_INCLUDE_DIR NAMES librdkafka/rdkafka.h HINTS ${PC_RDKAFKA_INCLUDEDIR} ${PC_RDKAFKA_INCLUDE_DIRS})
find_library(RdKafka_LIBRARY NAMES rdkafka HINTS ${PC_RDKAFKA_LIBDIR} ${PC_RDKAFKA_LIBRARY_DIRS})
if(PC_RDKAFKA_VERSION)
  set(RdKafka_VERSION "${PC_RDKAFKA_VERSION}")
endif()

find_package_handle_standard_args(RdKafka
  REQUIRED_VARS RdKafka_LIBRARY RdKafka_INCLUDE_DIR
  VERSION_VAR RdKafka_VERSION)

if(RdKafka_FOUND AND NOT TARGET RdKafka::rdkafka)
  add_library(RdKafka::rdkafka UNKNOWN IMPORTED)
  set_target_properties(RdKafka::rdkafka PROPERTIES
    IMPORTED_LOCATION "${RdKafka_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${RdKafka_INCLUDE_DIR}")
endif()
mark_as_advanced(RdKafka_INCLUDE_DIR RdKafka_LIBRARY)
