# cmake -P driver of the install tests (tests/install/CMakeLists.txt passes the -D values).
#   STEP=install    cmake --install into a staging prefix, move it to WORK_DIR/prefix, and
#                   check that no installed text file names the staging, build or source dir.
#   STEP=cmake      configure + build + run consumer/ with find_package(babelqueue CONFIG).
#   STEP=pkgconfig  compile consumer/main.cpp with the flags of `pkg-config babelqueue-core`.
#   STEP=typed      build + run examples/typed_orders.cpp through typed_consumer/ (generated
#                   message types from the installed CLI, babelqueue_generate_messages()).
# Everything happens under WORK_DIR (wiped first); nothing touches the network.
cmake_minimum_required(VERSION 3.25)

foreach(var IN ITEMS STEP BUILD_DIR SOURCE_DIR WORK_DIR CONSUMER_DIR CXX CMAKEDIR PKGCONFIGDIR)
  if("${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)

# Runs the consumer binary and checks what it printed.
function(run_consumer exe)
  run(${exe})
  string(FIND "${run_output}" "consumer-ok urn:babel:install:consumer-checked" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "consumer printed an unexpected result:\n${run_output}")
  endif()
  message(STATUS "consumer says: ${run_output}")
endfunction()

set(RUN_TIMEOUT 500)
include(${CMAKE_CURRENT_LIST_DIR}/run.cmake)

# Configures the consumer project in `source` into a fresh `build` against the moved tree
# only (never a registry or system copy); extra -D arguments follow.
function(configure_consumer source build)
  file(REMOVE_RECURSE ${build})
  set(generator_args "")
  if(CMAKE_GENERATOR_NAME)
    set(generator_args -G ${CMAKE_GENERATOR_NAME})
  endif()
  run(${CMAKE_COMMAND} -S ${source} -B ${build} ${generator_args}
      -DCMAKE_CXX_COMPILER=${CXX}
      -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
      -DCMAKE_PREFIX_PATH=${prefix}
      -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
      -DCMAKE_FIND_PACKAGE_NO_SYSTEM_PACKAGE_REGISTRY=ON
      ${ARGN})
  set(run_output "${run_output}" PARENT_SCOPE)
endfunction()

if(STEP STREQUAL "install")
  set(staging ${WORK_DIR}/staging-prefix)
  file(REMOVE_RECURSE ${WORK_DIR})
  file(MAKE_DIRECTORY ${WORK_DIR})
  set(config_args "")
  if(BUILD_TYPE)
    set(config_args --config ${BUILD_TYPE})
  endif()
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${staging} ${config_args})
  # Relocation: consumers only ever see the moved tree.
  file(RENAME ${staging} ${prefix})
  foreach(required IN ITEMS
          include/babelqueue/babelqueue.hpp
          ${CMAKEDIR}/babelqueue-config.cmake
          ${CMAKEDIR}/babelqueue-config-version.cmake
          ${CMAKEDIR}/babelqueue-core-targets.cmake
          ${PKGCONFIGDIR}/babelqueue-core.pc)
    if(NOT EXISTS ${prefix}/${required})
      message(FATAL_ERROR "install tree lacks ${required}")
    endif()
  endforeach()
  file(GLOB_RECURSE text_files ${prefix}/*.cmake ${prefix}/*.pc)
  foreach(file IN LISTS text_files)
    file(READ ${file} content)
    foreach(forbidden IN ITEMS ${staging} ${BUILD_DIR} ${SOURCE_DIR})
      string(FIND "${content}" "${forbidden}" at)
      if(NOT at EQUAL -1)
        message(FATAL_ERROR "${file} contains the absolute path ${forbidden}: not relocatable")
      endif()
    endforeach()
  endforeach()
  list(LENGTH text_files count)
  message(STATUS "install tree ok: ${prefix} (${count} package files checked)")

elseif(STEP STREQUAL "cmake")
  set(build ${WORK_DIR}/cmake-consumer)
  configure_consumer(${CONSUMER_DIR} ${build})
  # The package must come from the moved install tree, not from a system copy.
  string(REGEX MATCH "babelqueue_DIR=([^\n]*)" _ "${run_output}")
  set(found_dir "${CMAKE_MATCH_1}")
  string(FIND "${found_dir}" "${prefix}/" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "find_package(babelqueue) used '${found_dir}', not ${prefix}\n${run_output}")
  endif()
  run(${CMAKE_COMMAND} --build ${build})
  run_consumer(${build}/babelqueue_consumer)
  # A transport component installed beside core is usable through find_package too.
  foreach(component IN ITEMS rabbitmq kafka artemis asb sqs pulsar otel)
    if(EXISTS ${build}/babelqueue_consumer_${component})
      run(${build}/babelqueue_consumer_${component})
      message(STATUS "${component} consumer says: ${run_output}")
    elseif(EXISTS ${prefix}/${CMAKEDIR}/babelqueue-${component}-targets.cmake)
      message(FATAL_ERROR
              "the ${component} component is installed but the consumer did not build it")
    endif()
  endforeach()

elseif(STEP STREQUAL "typed")
  # examples/typed_orders.cpp with types generated at build time by the installed CLI.
  set(build ${WORK_DIR}/typed-consumer)
  configure_consumer(${CONSUMER_DIR}/../typed_consumer ${build} -DEXAMPLES_DIR=${SOURCE_DIR}/examples)
  # The generator must be the CLI of the moved install tree.
  string(REGEX MATCH "babelqueue CLI: ([^\n]*)" _ "${run_output}")
  string(FIND "${CMAKE_MATCH_1}" "${prefix}/" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "babelqueue_generate_messages used '${CMAKE_MATCH_1}', not ${prefix}\n${run_output}")
  endif()
  run(${CMAKE_COMMAND} --build ${build})
  run(${build}/typed_orders)
  string(FIND "${run_output}" "typed-orders-ok" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "typed_orders printed an unexpected result:\n${run_output}")
  endif()
  message(STATUS "typed_orders says: ${run_output}")

elseif(STEP STREQUAL "pkgconfig")
  find_program(PKG_CONFIG pkg-config REQUIRED)
  set(build ${WORK_DIR}/pkgconfig-consumer)
  file(REMOVE_RECURSE ${build})
  file(MAKE_DIRECTORY ${build})
  set(pc_path ${prefix}/${PKGCONFIGDIR})
  if(DEFINED ENV{PKG_CONFIG_PATH} AND NOT "$ENV{PKG_CONFIG_PATH}" STREQUAL "")
    set(pc_path "${pc_path}:$ENV{PKG_CONFIG_PATH}")
  endif()
  set(ENV{PKG_CONFIG_PATH} "${pc_path}")
  run(${PKG_CONFIG} --print-errors --exists babelqueue-core)
  run(${PKG_CONFIG} --cflags babelqueue-core)
  string(STRIP "${run_output}" cflags)
  run(${PKG_CONFIG} --libs babelqueue-core)
  string(STRIP "${run_output}" libs)
  message(STATUS "pkg-config babelqueue-core: ${cflags} ${libs}")
  separate_arguments(cflags UNIX_COMMAND "${cflags}")
  separate_arguments(libs UNIX_COMMAND "${libs}")
  run(${CXX} -std=c++20 ${cflags} ${CONSUMER_DIR}/main.cpp -o ${build}/babelqueue_consumer ${libs})
  # pkg-config gives no run path: a shared install is found the way a user's would be.
  run(${PKG_CONFIG} --variable=libdir babelqueue-core)
  string(STRIP "${run_output}" libdir)
  set(ENV{LD_LIBRARY_PATH} "${libdir}")
  run_consumer(${build}/babelqueue_consumer)

else()
  message(FATAL_ERROR "run_consumer.cmake: unknown STEP '${STEP}'")
endif()
