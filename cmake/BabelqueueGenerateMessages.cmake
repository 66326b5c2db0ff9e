# babelqueue_generate_messages(<target> REGISTRY <dir|registry.json>
#                              [HEADER <name.hpp>] [NAMESPACE <c++ namespace>] [OUTPUT_DIR <dir>])
#
# Generates C++ message types from a schema registry at build time (`babelqueue schema
# codegen --lang cpp --single <HEADER>`, docs/typed.md) and adds them to <target>: the header
# is regenerated whenever registry.json or a schema file under the registry directory
# changes, and its directory is put on the target's include path, so `#include "<HEADER>"`
# just works. Defaults: HEADER messages.hpp, NAMESPACE messages, OUTPUT_DIR
# ${CMAKE_CURRENT_BINARY_DIR}/babelqueue_generated/<target>.
#
# The generator is the `babelqueue` CLI: BABELQUEUE_CLI when set, else the babelqueue_cli
# target when babelqueue itself is being built, else the one installed with this package.
include_guard(GLOBAL)
set(_babelqueue_generate_messages_dir "${CMAKE_CURRENT_LIST_DIR}")

function(babelqueue_generate_messages target)
  cmake_parse_arguments(ARG "" "REGISTRY;HEADER;NAMESPACE;OUTPUT_DIR" "" ${ARGN})
  if(NOT TARGET ${target})
    message(FATAL_ERROR "babelqueue_generate_messages: ${target} is not a target")
  endif()
  if(NOT ARG_REGISTRY)
    message(FATAL_ERROR "babelqueue_generate_messages(${target}): REGISTRY is required")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "babelqueue_generate_messages(${target}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  set(header messages.hpp)
  if(ARG_HEADER)
    set(header ${ARG_HEADER})
  endif()
  set(namespace messages)
  if(ARG_NAMESPACE)
    set(namespace ${ARG_NAMESPACE})
  endif()
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/babelqueue_generated/${target})
  if(ARG_OUTPUT_DIR)
    get_filename_component(out_dir "${ARG_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  endif()

  get_filename_component(manifest "${ARG_REGISTRY}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(IS_DIRECTORY "${manifest}")
    set(manifest "${manifest}/registry.json")
  endif()
  if(NOT EXISTS "${manifest}")
    message(FATAL_ERROR "babelqueue_generate_messages(${target}): no registry at ${manifest}")
  endif()
  get_filename_component(registry_dir "${manifest}" DIRECTORY)
  # Every JSON file under the registry directory: the manifest and the schemas it names.
  file(GLOB_RECURSE schema_files CONFIGURE_DEPENDS "${registry_dir}/*.json")

  if(TARGET babelqueue_cli AND NOT BABELQUEUE_CLI)
    set(cli $<TARGET_FILE:babelqueue_cli>)
    set(cli_dependency babelqueue_cli)
  else()
    if(NOT BABELQUEUE_CLI)
      find_program(BABELQUEUE_CLI babelqueue
                   HINTS "${babelqueue_BINDIR}" "${_babelqueue_generate_messages_dir}/../../../bin"
                   NO_DEFAULT_PATH)
      find_program(BABELQUEUE_CLI babelqueue)
    endif()
    if(NOT BABELQUEUE_CLI)
      message(FATAL_ERROR "babelqueue_generate_messages: the `babelqueue` CLI was not found "
                          "(install it with babelqueue, or set BABELQUEUE_CLI)")
    endif()
    set(cli ${BABELQUEUE_CLI})
    set(cli_dependency ${BABELQUEUE_CLI})
  endif()

  add_custom_command(
    OUTPUT ${out_dir}/${header}
    COMMAND ${cli} schema codegen --lang cpp --registry ${manifest} --out ${out_dir}
            --namespace ${namespace} --single ${header}
    DEPENDS ${schema_files} ${cli_dependency}
    COMMENT "babelqueue: C++ message types ${header} from ${manifest}"
    VERBATIM)
  target_sources(${target} PRIVATE ${out_dir}/${header})
  target_include_directories(${target} PRIVATE ${out_dir})
endfunction()
