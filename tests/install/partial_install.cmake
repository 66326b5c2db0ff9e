# cmake -P driver of the partial-install tests (tests/install/CMakeLists.txt passes the -D
# values). For one set of components it:
#   1. configures a separate small tree of this source with every BABELQUEUE_WITH_<X> switch
#      OFF except WITH (core is always built), no tests or examples, and builds it;
#   2. installs it into WORK_DIR/prefix and checks that exactly the EXPECT components are
#      installed and that every installed header lives in one of their folders;
#   3. compiles every installed header of the CHECK components on its own, -Werror
#      (tests/install/headers), and runs a program that checks the library's run-time version
#      against VERSION.
# The tree under WORK_DIR/build is kept between runs (an unchanged re-run rebuilds nothing);
# ccache is used when LAUNCHER names it, never required. Nothing touches the network.
cmake_minimum_required(VERSION 3.25)

foreach(var IN ITEMS SOURCE_DIR WORK_DIR HEADER_CHECK_DIR CXX CMAKEDIR VERSION EXPECT)
  if("${${var}}" STREQUAL "")
    message(FATAL_ERROR "partial_install.cmake: -D${var}=... is required")
  endif()
endforeach()

# WITH and EXPECT come comma-separated (a list does not survive add_test's command line).
string(REPLACE "," ";" WITH "${WITH}")
string(REPLACE "," ";" EXPECT "${EXPECT}")
# CHECK stays comma-separated: it is passed on as one -D value (default: every EXPECT one).
if("${CHECK}" STREQUAL "")
  string(REPLACE ";" "," CHECK "${EXPECT}")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/run.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/header_owner.cmake)

set(build ${WORK_DIR}/build)
set(prefix ${WORK_DIR}/prefix)
set(check ${WORK_DIR}/header-check)
set(common "")
if(GENERATOR)
  list(APPEND common -G ${GENERATOR})
endif()
list(APPEND common -DCMAKE_CXX_COMPILER=${CXX})
if(LAUNCHER)
  list(APPEND common -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()

# 1. The partial tree (a kept tree of another source checkout is started afresh).
if(EXISTS ${build}/CMakeCache.txt)
  file(STRINGS ${build}/CMakeCache.txt home REGEX "^CMAKE_HOME_DIRECTORY:")
  if(NOT home STREQUAL "CMAKE_HOME_DIRECTORY:INTERNAL=${SOURCE_DIR}")
    file(REMOVE_RECURSE ${build} ${check})
  endif()
endif()
set(switches -DBABELQUEUE_WITH_DEFAULT=OFF)
foreach(component IN LISTS WITH)
  string(TOUPPER ${component} upper)
  list(APPEND switches -DBABELQUEUE_WITH_${upper}=ON)
endforeach()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${build} ${common} ${switches}
    -DCMAKE_BUILD_TYPE= -DBABELQUEUE_WARNINGS_AS_ERRORS=ON -DBABELQUEUE_INSTALL=ON
    -DBABELQUEUE_BUILD_TESTS=OFF -DBABELQUEUE_BUILD_EXAMPLES=OFF -DBABELQUEUE_BUILD_BENCH=OFF
    -DBABELQUEUE_BUILD_FUZZ=OFF)
run(${CMAKE_COMMAND} --build ${build} --parallel 2)

# 2. The install and what it holds.
file(REMOVE_RECURSE ${prefix})
run(${CMAKE_COMMAND} --install ${build} --prefix ${prefix})
file(GLOB targets_files RELATIVE ${prefix}/${CMAKEDIR} ${prefix}/${CMAKEDIR}/babelqueue-*-targets*.cmake)
set(installed "")
foreach(file IN LISTS targets_files)
  if(file MATCHES "^babelqueue-(.+)-targets\\.cmake$")
    list(APPEND installed ${CMAKE_MATCH_1})
  endif()
endforeach()
list(SORT installed)
set(expected ${EXPECT})
list(SORT expected)
if(NOT installed STREQUAL expected)
  message(FATAL_ERROR "installed components '${installed}', expected '${expected}'")
endif()
# Every installed header belongs to an installed component (header_owner.cmake says whose).
file(GLOB_RECURSE headers RELATIVE ${prefix}/include ${prefix}/include/*)
foreach(header IN LISTS headers)
  babelqueue_header_owner(${header} owner exact)
  if(owner STREQUAL "")
    message(FATAL_ERROR "unexpected file under include/: ${header}")
  endif()
  set(owner_installed FALSE)
  foreach(component IN LISTS installed)
    if(component STREQUAL owner OR (NOT exact AND component MATCHES "^${owner}_"))
      set(owner_installed TRUE)
    endif()
  endforeach()
  if(NOT owner_installed)
    message(FATAL_ERROR "${header} is installed without its component (${installed})")
  endif()
endforeach()
list(LENGTH headers header_count)

# 3. Every header on its own, and the run-time version.
run(${CMAKE_COMMAND} -S ${HEADER_CHECK_DIR} -B ${check} ${common}
    -DCMAKE_BUILD_TYPE= -DCMAKE_PREFIX_PATH=${prefix} -DBABELQUEUE_INCLUDE_DIR=${prefix}/include
    -DBABELQUEUE_CHECK_COMPONENTS=${CHECK}
    -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON -DCMAKE_FIND_PACKAGE_NO_SYSTEM_PACKAGE_REGISTRY=ON)
run(${CMAKE_COMMAND} --build ${check} --parallel 2)
run(${check}/version_check ${VERSION})
message(STATUS "partial install ok: components ${installed} (${header_count} headers), the "
               "headers of ${CHECK} compiled one by one; ${run_output}")
