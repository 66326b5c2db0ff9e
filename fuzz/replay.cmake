# Plain (non-libFuzzer) replay executables of the fuzz targets, registered under CTest with
# label `fuzz-replay`. Included from tests/install/CMakeLists.txt whenever tests are built
# (with the project's usual compiler, GCC in CI), and from fuzz/CMakeLists.txt for fuzz builds.
include_guard(GLOBAL)

if(NOT TARGET babelqueue_core)
  return()
endif()

set(BABELQUEUE_CONFORMANCE_DIR "${PROJECT_SOURCE_DIR}/../shared/conformance"
    CACHE PATH "The shared cross-SDK conformance suite")
set(BABELQUEUE_FUZZ_TARGETS decode canonicalize)

foreach(fuzz_target IN LISTS BABELQUEUE_FUZZ_TARGETS)
  set(exe babelqueue_fuzz_replay_${fuzz_target})
  add_executable(${exe}
    ${CMAKE_CURRENT_LIST_DIR}/fuzz_${fuzz_target}.cpp
    ${CMAKE_CURRENT_LIST_DIR}/replay_main.cpp)
  target_link_libraries(${exe} PRIVATE babelqueue::core)
  babelqueue_warnings(${exe})
  # Seeds of our own plus the shared conformance fixtures, read in place.
  add_test(NAME fuzz_replay.${fuzz_target}
           COMMAND ${exe} ${CMAKE_CURRENT_LIST_DIR}/corpus ${BABELQUEUE_CONFORMANCE_DIR}/fixtures)
  set_tests_properties(fuzz_replay.${fuzz_target} PROPERTIES LABELS fuzz-replay TIMEOUT 300)
endforeach()
