# Helpers every component folder uses, so that adding a transport or helper is one folder
# and never an edit to the top-level CMakeLists.txt.
include_guard(GLOBAL)

set_property(GLOBAL PROPERTY BABELQUEUE_COMPONENTS "")
set_property(GLOBAL PROPERTY BABELQUEUE_SUMMARY "")

# The default of every BABELQUEUE_WITH_<X> switch that is not set explicitly. OFF gives a
# partial build: core plus only the components switched ON (with the ones they need), e.g.
# -DBABELQUEUE_WITH_DEFAULT=OFF -DBABELQUEUE_WITH_SCHEMA=ON (tests/install builds such trees).
set(BABELQUEUE_WITH_DEFAULT AUTO CACHE STRING
    "Default of the BABELQUEUE_WITH_<X> switches not set explicitly (AUTO|ON|OFF)")
set_property(CACHE BABELQUEUE_WITH_DEFAULT PROPERTY STRINGS AUTO ON OFF)

# babelqueue_option(NAME "description" DEFAULT) -> cache variable BABELQUEUE_WITH_<NAME>
# with values AUTO|ON|OFF. AUTO builds the component when its dependencies are found; an AUTO
# default follows BABELQUEUE_WITH_DEFAULT.
function(babelqueue_option name description default)
  if(default STREQUAL "AUTO")
    set(default ${BABELQUEUE_WITH_DEFAULT})
  endif()
  set(BABELQUEUE_WITH_${name} ${default} CACHE STRING "Build ${description} (AUTO|ON|OFF)")
  set_property(CACHE BABELQUEUE_WITH_${name} PROPERTY STRINGS AUTO ON OFF)
endfunction()

function(babelqueue_summary name state)
  set_property(GLOBAL APPEND PROPERTY BABELQUEUE_SUMMARY "${name}=${state}")
endfunction()

function(babelqueue_print_summary)
  get_property(items GLOBAL PROPERTY BABELQUEUE_SUMMARY)
  message(STATUS "babelqueue ${PROJECT_VERSION} components:")
  foreach(item IN LISTS items)
    string(REPLACE "=" ";" kv "${item}")
    list(GET kv 0 k)
    list(GET kv 1 v)
    string(LENGTH "${k}" len)
    math(EXPR pad "14 - ${len}")
    if(pad LESS 1)
      set(pad 1)  # a name longer than the column (idempotency_sqlite)
    endif()
    string(REPEAT " " ${pad} spaces)
    message(STATUS "  ${k}${spaces}${v}")
  endforeach()
endfunction()

# babelqueue_component_gate(<name> "<description>"
#     [NEEDS <component>...] [FIND_PACKAGE <find_package arguments...>] [MISSING "<hint>"])
# Declares the BABELQUEUE_WITH_<NAME> switch and decides whether the component is built:
# sets BABELQUEUE_BUILD_<name> (TRUE/FALSE) in the caller's scope. OFF skips. A NEEDS
# component that is not built, or a FIND_PACKAGE that finds nothing, skips under AUTO and is
# a configure error under ON; the summary says why (MISSING replaces "<Package> not found",
# e.g. to name the Debian package). Imported targets found here are visible to the caller.
function(babelqueue_component_gate name description)
  cmake_parse_arguments(ARG "" "MISSING" "NEEDS;FIND_PACKAGE" ${ARGN})
  string(TOUPPER "${name}" upper)
  babelqueue_option(${upper} "${description}" AUTO)
  set(switch "${BABELQUEUE_WITH_${upper}}")
  set(BABELQUEUE_BUILD_${name} FALSE PARENT_SCOPE)
  if(switch STREQUAL "OFF")
    babelqueue_summary(${name} OFF)
    return()
  endif()
  set(why "")
  foreach(need IN LISTS ARG_NEEDS)
    if(NOT TARGET babelqueue_${need})
      set(why "${need} not built")
      break()
    endif()
  endforeach()
  if(NOT why AND ARG_FIND_PACKAGE)
    list(GET ARG_FIND_PACKAGE 0 package)
    find_package(${ARG_FIND_PACKAGE} QUIET)
    if(NOT ${package}_FOUND)
      set(why "${package} not found")
      if(ARG_MISSING)
        set(why "${ARG_MISSING}")
      endif()
    endif()
  endif()
  if(why)
    if(switch STREQUAL "ON")
      message(FATAL_ERROR "BABELQUEUE_WITH_${upper}=ON but ${why}")
    endif()
    babelqueue_summary(${name} "OFF (${why})")
    return()
  endif()
  set(BABELQUEUE_BUILD_${name} TRUE PARENT_SCOPE)
endfunction()

# Warning flags for code this project owns (never applied to dependencies).
function(babelqueue_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow)
  if(BABELQUEUE_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# Generated public headers (babelqueue/version.hpp) are written here and installed with core.
set(BABELQUEUE_GENERATED_INCLUDE_DIR ${PROJECT_BINARY_DIR}/generated/include)

# _babelqueue_component_headers(<name> PATTERNS <patterns...> GENERATED <files...>): the
# FILE_SET HEADERS of babelqueue_<name>, from paths or globs relative to include/babelqueue/
# (a pattern that matches nothing is a configure error: a typo must not silently drop
# headers from the install) plus headers generated under BABELQUEUE_GENERATED_INCLUDE_DIR.
function(_babelqueue_component_headers name)
  cmake_parse_arguments(ARG "" "" "PATTERNS;GENERATED" ${ARGN})
  set(files ${ARG_GENERATED})
  foreach(pattern IN LISTS ARG_PATTERNS)
    file(GLOB matched CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/babelqueue/${pattern})
    if(NOT matched)
      message(FATAL_ERROR "babelqueue_add_component(${name}): no header matches '${pattern}'")
    endif()
    list(APPEND files ${matched})
  endforeach()
  if(files)
    target_sources(babelqueue_${name} PUBLIC
      FILE_SET HEADERS
      BASE_DIRS ${PROJECT_SOURCE_DIR}/include ${BABELQUEUE_GENERATED_INCLUDE_DIR}
      FILES ${files})
  endif()
endfunction()

# _babelqueue_export_header(<name> <out-var>): writes <babelqueue/export/<name>.hpp>, which
# defines BABELQUEUE_<NAME>_EXPORT for this build of babelqueue_<name> (static or shared),
# and returns its path.
function(_babelqueue_export_header name out)
  string(TOUPPER "${name}" upper)
  get_target_property(type babelqueue_${name} TYPE)
  set(BABELQUEUE_EXPORT_COMPONENT ${name})
  set(BABELQUEUE_EXPORT_MACRO BABELQUEUE_${upper}_EXPORT)
  if(type STREQUAL "SHARED_LIBRARY")
    set(BABELQUEUE_EXPORT_SHARED 1)
    set(BABELQUEUE_EXPORT_TYPE shared)
  else()
    set(BABELQUEUE_EXPORT_SHARED 0)
    set(BABELQUEUE_EXPORT_TYPE static)
  endif()
  set(file ${BABELQUEUE_GENERATED_INCLUDE_DIR}/babelqueue/export/${name}.hpp)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/export.hpp.in ${file} @ONLY)
  set(${out} ${file} PARENT_SCOPE)
endfunction()

# babelqueue_add_component(<name>
#     SOURCES <files...>
#     [PUBLIC_DEPS <targets...>] [PRIVATE_DEPS <targets...>]
#     [PC_REQUIRES <pkg-config names>] [PC_REQUIRES_PRIVATE <...>]
#     [FIND_DEPENDENCIES <"Pkg args"...>]
#     [HEADERS <paths or globs relative to include/babelqueue/...>]
#     [GENERATED_HEADERS <files under BABELQUEUE_GENERATED_INCLUDE_DIR...>])
# Creates target babelqueue_<name>, alias babelqueue::<name>, export name <name>, and records
# it for install(). FIND_DEPENDENCIES are written into babelqueue-config.cmake so that
# find_package(babelqueue COMPONENTS <name>) finds what the component links.
# HEADERS are the component's public headers (e.g. `runtime/*.hpp`): its FILE_SET HEADERS,
# which is what `cmake --install` installs for it, so an install ships exactly the headers of
# the components it has. A header belongs to exactly one component.
function(babelqueue_add_component name)
  cmake_parse_arguments(ARG "" ""
    "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS;PC_REQUIRES;PC_REQUIRES_PRIVATE;FIND_DEPENDENCIES;PC_LIBS_PRIVATE;HEADERS;GENERATED_HEADERS"
    ${ARGN})
  set(target babelqueue_${name})
  add_library(${target} ${ARG_SOURCES})
  add_library(babelqueue::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES
    EXPORT_NAME ${name}
    OUTPUT_NAME babelqueue_${name}
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}
    POSITION_INDEPENDENT_CODE ON)
  # Hidden visibility: a shared library exports only its public API, the declarations marked
  # with BABELQUEUE_<NAME>_EXPORT from the generated <babelqueue/export/<name>.hpp>.
  set_target_properties(${target} PROPERTIES
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  _babelqueue_export_header(${name} export_header)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_include_directories(${target}
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
           $<BUILD_INTERFACE:${BABELQUEUE_GENERATED_INCLUDE_DIR}>
           $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${PROJECT_SOURCE_DIR}/src)
  _babelqueue_component_headers(${name} PATTERNS ${ARG_HEADERS}
                                GENERATED ${ARG_GENERATED_HEADERS} ${export_header})
  if(ARG_PUBLIC_DEPS)
    target_link_libraries(${target} PUBLIC ${ARG_PUBLIC_DEPS})
  endif()
  if(ARG_PRIVATE_DEPS)
    target_link_libraries(${target} PRIVATE ${ARG_PRIVATE_DEPS})
  endif()
  babelqueue_warnings(${target})
  babelqueue_precompiled_headers(${target} LIBRARY)
  babelqueue_unity_build(${target})
  if(BABELQUEUE_FUZZING)
    # libFuzzer's coverage of the code under test (see "libFuzzer" in CMakeLists.txt). Only
    # the libraries: the fuzz targets' own sources get -fsanitize=fuzzer (fuzz/), and the
    # test executables of the same tree are left uninstrumented, which keeps them as fast
    # to compile as before.
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
  set_property(GLOBAL APPEND PROPERTY BABELQUEUE_COMPONENTS ${name})
  set_property(GLOBAL PROPERTY BABELQUEUE_${name}_FIND_DEPENDENCIES "${ARG_FIND_DEPENDENCIES}")
  set_property(GLOBAL PROPERTY BABELQUEUE_${name}_PC_REQUIRES "${ARG_PC_REQUIRES}")
  set_property(GLOBAL PROPERTY BABELQUEUE_${name}_PC_REQUIRES_PRIVATE "${ARG_PC_REQUIRES_PRIVATE}")
  set_property(GLOBAL PROPERTY BABELQUEUE_${name}_PC_LIBS_PRIVATE "${ARG_PC_LIBS_PRIVATE}")
  babelqueue_summary(${name} ON)
endfunction()
