# Precompiled headers for this project's own build trees (BABELQUEUE_PRECOMPILE_HEADERS,
# default ON when babelqueue is the top-level project).
#
# Why: nearly every translation unit includes the C++ standard library, nlohmann/json (the
# API's json type) and, in the tests, GoogleTest. Preprocessed, tests/runtime/app_errors_test.cpp
# is 160k lines of which its own code is 0.2%; GCC's -ftime-report spends 57% of its compile
# in parsing and 24% in instantiating those headers' templates. CI builds three trees (dev,
# asan, tsan) on two cores, so this was most of its time.
#
# One header is precompiled once per flag set and reused by every target of that set
# (target_precompile_headers(REUSE_FROM)); a donor carries exactly its users' code-generation
# flags, because GCC ignores a PCH made with other ones (-Winvalid-pch, an error under
# -Werror) and clang refuses it outright:
#   babelqueue_pch_library  the component libraries: PIC, hidden visibility, and libFuzzer's
#                           coverage flag in a fuzzing tree (babelqueue_add_component)
#   babelqueue_pch_program  the CLI: an executable's flags, CLI11 as well
#   babelqueue_pch_test     the test executables (babelqueue_add_test): GoogleTest as well
# A donor defines no macro of its own, so users may add theirs (clang refuses a PCH only when
# a macro it was built with is defined differently).
#
# Only headers every user can resolve go in: the standard library, nlohmann/json, and the
# library's core headers (core is always built). A source must not depend on a macro defined
# before its first #include (none does: the PCH comes first).

option(BABELQUEUE_PRECOMPILE_HEADERS "Precompile the common headers of the libraries and tests"
       ${BABELQUEUE_MASTER_PROJECT})

set(BABELQUEUE_PCH_STD_HEADERS
    <algorithm> <array> <atomic> <charconv> <chrono> <cmath> <condition_variable> <cstddef>
    <cstdint> <cstdio> <cstdlib> <cstring> <deque> <filesystem> <functional> <limits> <map>
    <memory> <mutex> <optional> <set> <span> <sstream> <string> <string_view> <system_error>
    <thread> <tuple> <type_traits> <unordered_map> <utility> <variant> <vector>
    <nlohmann/json.hpp>)

# _babelqueue_pch_donor(<donor> <PIC ON|OFF> [HEADERS <extra headers...>] [LIBS <targets...>]):
# creates the donor (an object library compiling one empty file) once.
function(_babelqueue_pch_donor donor pic)
  if(TARGET ${donor})
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "HEADERS;LIBS" ${ARGN})
  set(anchor ${PROJECT_BINARY_DIR}/pch/${donor}.cpp)
  file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/pch)
  if(NOT EXISTS ${anchor})
    file(WRITE ${anchor} "// The precompiled header's anchor (cmake/BabelqueuePrecompiledHeaders.cmake).\n")
  endif()
  add_library(${donor} OBJECT ${anchor})
  target_compile_features(${donor} PRIVATE cxx_std_20)
  target_include_directories(${donor} PRIVATE ${PROJECT_SOURCE_DIR}/include
                                              ${BABELQUEUE_GENERATED_INCLUDE_DIR})
  if(ARG_LIBS)
    target_link_libraries(${donor} PRIVATE ${ARG_LIBS})
  endif()
  if(pic)
    set_target_properties(${donor} PROPERTIES
      POSITION_INDEPENDENT_CODE ON
      CXX_VISIBILITY_PRESET hidden
      VISIBILITY_INLINES_HIDDEN ON)
    if(BABELQUEUE_FUZZING)
      target_compile_options(${donor} PRIVATE -fsanitize=fuzzer-no-link)
    endif()
  endif()
  babelqueue_warnings(${donor})
  target_precompile_headers(${donor} PRIVATE ${BABELQUEUE_PCH_STD_HEADERS} ${ARG_HEADERS})
endfunction()

# babelqueue_precompiled_headers(<target> LIBRARY|PROGRAM|TEST): <target> reuses the
# precompiled header of its kind (nothing when BABELQUEUE_PRECOMPILE_HEADERS is OFF).
function(babelqueue_precompiled_headers target kind)
  if(NOT BABELQUEUE_PRECOMPILE_HEADERS)
    return()
  endif()
  if(kind STREQUAL "LIBRARY")
    _babelqueue_pch_donor(babelqueue_pch_library ON)
    set(donor babelqueue_pch_library)
  elseif(kind STREQUAL "PROGRAM")
    _babelqueue_pch_donor(babelqueue_pch_program OFF HEADERS <CLI/CLI.hpp> LIBS CLI11::CLI11)
    set(donor babelqueue_pch_program)
  elseif(kind STREQUAL "TEST")
    _babelqueue_pch_donor(babelqueue_pch_test OFF
      HEADERS <gtest/gtest.h> <babelqueue/codec.hpp> <babelqueue/json.hpp>
      LIBS GTest::gtest)
    set(donor babelqueue_pch_test)
  else()
    message(FATAL_ERROR "babelqueue_precompiled_headers: unknown kind '${kind}'")
  endif()
  target_precompile_headers(${target} REUSE_FROM ${donor})
endfunction()

# Unity builds (BABELQUEUE_UNITY_BUILD, default OFF; CI's scripts/test.sh turns it ON for its
# three trees). A precompiled header spares each source the parsing of the common headers,
# not the instantiation and code generation of their templates (nlohmann's parser,
# GoogleTest's assertion helpers), which at -O0 is most of what is left: batching a target's
# sources into one translation unit does that once per batch. Measured on the dev tree with
# the PCH: the CLI's 25 sources 224 -> 47 CPU-s, the contract suites' 13 sources 81 -> 30.
# The whole dev tree: 2639 CPU-s before either, 1950 with the PCH, 1077 with both (CI's asan
# tree 2265 -> 893; docs/testing.md has the run's figures).
# Developers keep it OFF: an edit then recompiles one source, not its batch.
# What this asks of the sources: no two files of one target may define the same name in an
# anonymous namespace (shared helpers live in a header of the component instead).
option(BABELQUEUE_UNITY_BUILD "Batch each target's sources into unity translation units" OFF)
set(BABELQUEUE_UNITY_BATCH_SIZE 16 CACHE STRING "Sources per unity translation unit")

# babelqueue_unity_build(<target>): <target> is built in batches when BABELQUEUE_UNITY_BUILD.
function(babelqueue_unity_build target)
  if(NOT BABELQUEUE_UNITY_BUILD)
    return()
  endif()
  set_target_properties(${target} PROPERTIES
    UNITY_BUILD ON
    UNITY_BUILD_BATCH_SIZE ${BABELQUEUE_UNITY_BATCH_SIZE})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC reports a class that uses an anonymous-namespace type from a file other than the
    # main one, which every source is in a unity batch (a GoogleTest fixture in an anonymous
    # namespace, a pimpl holding a file-local type); meaningless for a .cpp file.
    target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
  endif()
endfunction()
