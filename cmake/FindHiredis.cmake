# FindHiredis — locates the hiredis C client and creates the imported target Hiredis::Hiredis.
#
# Why a find module: Debian's hiredis 0.14 ships a HiredisConfig.cmake that only sets
# variables (HIREDIS_INCLUDE_DIRS, HIREDIS_LIBRARIES; no imported target), and a hiredis.pc
# whose include dir is `<prefix>/include/hiredis`. Newer hiredis (≥ 1.0) ships a config with
# the target `hiredis::hiredis`. This module accepts all three and always yields
# Hiredis::Hiredis, with the include dir set so that `#include <hiredis/hiredis.h>` works.
#
# Result variables: Hiredis_FOUND, Hiredis_VERSION, Hiredis_INCLUDE_DIR, Hiredis_LIBRARY.
include(FindPackageHandleStandardArgs)

# 1. A modern hiredis config that already provides a target.
if(NOT TARGET Hiredis::Hiredis)
  find_package(hiredis CONFIG QUIET)
  if(TARGET hiredis::hiredis)
    add_library(Hiredis::Hiredis INTERFACE IMPORTED)
    set_target_properties(Hiredis::Hiredis PROPERTIES INTERFACE_LINK_LIBRARIES hiredis::hiredis)
    set(Hiredis_VERSION "${hiredis_VERSION}")
    set(Hiredis_LIBRARY hiredis::hiredis)
    get_target_property(Hiredis_INCLUDE_DIR hiredis::hiredis INTERFACE_INCLUDE_DIRECTORIES)
  endif()
endif()

# 2. pkg-config hints (hiredis.pc), then a plain search.
if(NOT TARGET Hiredis::Hiredis)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(PC_HIREDIS QUIET hiredis)
  endif()
  # hiredis.pc's includedir is .../include/hiredis; the parent holds hiredis/hiredis.h.
  set(_bq_hiredis_hints)
  foreach(dir IN LISTS PC_HIREDIS_INCLUDEDIR PC_HIREDIS_INCLUDE_DIRS)
    get_filename_component(parent "${dir}" DIRECTORY)
    list(APPEND _bq_hiredis_hints "${parent}" "${dir}")
  endforeach()
  # Debian's variable-only config (HIREDIS_INCLUDE_DIRS / HIREDIS_LIBRARIES) as a hint too.
  if(HIREDIS_INCLUDE_DIRS)
    list(APPEND _bq_hiredis_hints ${HIREDIS_INCLUDE_DIRS})
  endif()
  find_path(Hiredis_INCLUDE_DIR NAMES hiredis/hiredis.h HINTS ${_bq_hiredis_hints})
  find_library(Hiredis_LIBRARY NAMES hiredis
    HINTS ${PC_HIREDIS_LIBDIR} ${PC_HIREDIS_LIBRARY_DIRS} ${HIREDIS_LIBRARIES})
  unset(_bq_hiredis_hints)

  if(PC_HIREDIS_VERSION)
    set(Hiredis_VERSION "${PC_HIREDIS_VERSION}")
  elseif(Hiredis_INCLUDE_DIR AND EXISTS "${Hiredis_INCLUDE_DIR}/hiredis/hiredis.h")
    file(STRINGS "${Hiredis_INCLUDE_DIR}/hiredis/hiredis.h" _bq_ver REGEX "^#define HIREDIS_(MAJOR|MINOR|PATCH) ")
    foreach(part MAJOR MINOR PATCH)
      string(REGEX REPLACE ".*HIREDIS_${part} ([0-9]+).*" "\\1" _bq_${part} "${_bq_ver}")
    endforeach()
    set(Hiredis_VERSION "${_bq_MAJOR}.${_bq_MINOR}.${_bq_PATCH}")
    unset(_bq_ver)
  endif()
endif()

find_package_handle_standard_args(Hiredis
  REQUIRED_VARS Hiredis_LIBRARY Hiredis_INCLUDE_DIR
  VERSION_VAR Hiredis_VERSION)

if(Hiredis_FOUND AND NOT TARGET Hiredis::Hiredis)
  add_library(Hiredis::Hiredis UNKNOWN IMPORTED)
  set_target_properties(Hiredis::Hiredis PROPERTIES
    IMPORTED_LOCATION "${Hiredis_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${Hiredis_INCLUDE_DIR}")
endif()
mark_as_advanced(Hiredis_INCLUDE_DIR Hiredis_LIBRARY)
