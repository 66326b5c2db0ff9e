# Install rules, CMake package config and pkg-config files (included by the top-level
# CMakeLists.txt when BABELQUEUE_INSTALL is ON, after every component has registered itself
# through babelqueue_add_component()).
#
# Layout of the install tree (every path is relative to the prefix, so the tree can be moved
# anywhere after `cmake --install`; tests/install proves it by moving it before use):
#   include/babelqueue/...                                      the built components' headers
#   <libdir>/libbabelqueue_<c>.{a,so}
#   <libdir>/cmake/babelqueue/babelqueue-config.cmake           find_package entry point
#   <libdir>/cmake/babelqueue/babelqueue-config-version.cmake   SameMajorVersion
#   <libdir>/cmake/babelqueue/babelqueue-<c>-targets.cmake      one export set per component
#   <libdir>/pkgconfig/babelqueue-<c>.pc                        one pkg-config file per component
include_guard(GLOBAL)
include(CMakePackageConfigHelpers)

include(${CMAKE_CURRENT_LIST_DIR}/BabelqueueInstallDirs.cmake)

# Public headers: each component's FILE_SET HEADERS (babelqueue_add_component(HEADERS),
# installed with that component's target below), so the installed headers never promise a
# library that is not there; tests/install compiles every header of partial installs.

# _babelqueue_internal_deps(<component> <out-var>): the other babelqueue components that
# <component> links (publicly or privately), so that the package config loads their targets
# first and the pkg-config file requires them.
function(_babelqueue_internal_deps component out)
  set(found "")
  get_property(all GLOBAL PROPERTY BABELQUEUE_COMPONENTS)
  foreach(property IN ITEMS LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
    get_target_property(libs babelqueue_${component} ${property})
    if(NOT libs)
      continue()
    endif()
    foreach(lib IN LISTS libs)
      # $<LINK_ONLY:babelqueue::core> and friends: keep the target name only.
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" lib "${lib}")
      foreach(other IN LISTS all)
        if(NOT other STREQUAL component
           AND (lib STREQUAL "babelqueue::${other}" OR lib STREQUAL "babelqueue_${other}"))
          list(APPEND found ${other})
        endif()
      endforeach()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES found)
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# The .pc files locate the prefix from their own directory (${pcfiledir}), never from an
# absolute path, which keeps the install tree relocatable.
if(IS_ABSOLUTE "${BABELQUEUE_INSTALL_PKGCONFIGDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}"
   OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  message(FATAL_ERROR "babelqueue: install directories must be relative to the prefix "
                      "(the package is relocatable)")
endif()
file(RELATIVE_PATH _babelqueue_pc_to_prefix "/prefix/${BABELQUEUE_INSTALL_PKGCONFIGDIR}" "/prefix")
string(REGEX REPLACE "/$" "" _babelqueue_pc_to_prefix "${_babelqueue_pc_to_prefix}")

get_property(_babelqueue_components GLOBAL PROPERTY BABELQUEUE_COMPONENTS)
set(BABELQUEUE_CONFIG_COMPONENT_BLOCKS "")
foreach(_c IN LISTS _babelqueue_components)
  set(_target babelqueue_${_c})
  install(TARGETS ${_target}
          EXPORT babelqueue-${_c}-targets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT babelqueue_development
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT babelqueue_runtime
                  NAMELINK_COMPONENT babelqueue_development
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT babelqueue_runtime
          FILE_SET HEADERS DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
                           COMPONENT babelqueue_development
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT babelqueue-${_c}-targets
          NAMESPACE babelqueue::
          FILE babelqueue-${_c}-targets.cmake
          DESTINATION ${BABELQUEUE_INSTALL_CMAKEDIR}
          COMPONENT babelqueue_development)

  get_property(_find_deps GLOBAL PROPERTY BABELQUEUE_${_c}_FIND_DEPENDENCIES)
  get_property(_pc_requires GLOBAL PROPERTY BABELQUEUE_${_c}_PC_REQUIRES)
  get_property(_pc_requires_private GLOBAL PROPERTY BABELQUEUE_${_c}_PC_REQUIRES_PRIVATE)
  get_property(_pc_libs_private GLOBAL PROPERTY BABELQUEUE_${_c}_PC_LIBS_PRIVATE)
  _babelqueue_internal_deps(${_c} _internal)

  # -- babelqueue-config.cmake: one block per component -----------------------------------
  string(APPEND BABELQUEUE_CONFIG_COMPONENT_BLOCKS
         "list(APPEND _babelqueue_available ${_c})\n"
         "set(_babelqueue_${_c}_components \"${_internal}\")\n"
         "set(_babelqueue_${_c}_find_dependencies \"\")\n")
  foreach(_dep IN LISTS _find_deps)
    # Bracket arguments keep spaces ("OpenSSL 3 COMPONENTS Crypto") as one list element.
    string(APPEND BABELQUEUE_CONFIG_COMPONENT_BLOCKS
           "list(APPEND _babelqueue_${_c}_find_dependencies [==[${_dep}]==])\n")
  endforeach()

  # -- babelqueue-<c>.pc --------------------------------------------------------------------
  set(_requires "")
  foreach(_other IN LISTS _internal)
    list(APPEND _requires babelqueue-${_other})
  endforeach()
  list(APPEND _requires ${_pc_requires})
  set(_requires_private ${_pc_requires_private})
  set(_libs_private ${_pc_libs_private})
  get_target_property(_type ${_target} TYPE)
  if(_type STREQUAL "STATIC_LIBRARY")
    # A static archive does not carry its own dependencies: a consumer running a plain
    # `pkg-config --libs` must get them, so the private requirements become public ones.
    list(APPEND _requires ${_requires_private})
    set(_requires_private "")
    set(_libs_public "${_libs_private}")
    set(_libs_private "")
  else()
    set(_libs_public "")
  endif()
  list(REMOVE_DUPLICATES _requires)
  # Empty fields are left out rather than written blank.
  set(BABELQUEUE_PC_OPTIONAL_LINES "")
  set(BABELQUEUE_PC_LIBS_EXTRA "")
  if(_requires)
    list(JOIN _requires ", " _line)
    string(APPEND BABELQUEUE_PC_OPTIONAL_LINES "Requires: ${_line}\n")
  endif()
  if(_requires_private)
    list(JOIN _requires_private ", " _line)
    string(APPEND BABELQUEUE_PC_OPTIONAL_LINES "Requires.private: ${_line}\n")
  endif()
  if(_libs_private)
    list(JOIN _libs_private " " _line)
    string(APPEND BABELQUEUE_PC_OPTIONAL_LINES "Libs.private: ${_line}\n")
  endif()
  if(_libs_public)
    list(JOIN _libs_public " " _line)
    set(BABELQUEUE_PC_LIBS_EXTRA " ${_line}")
  endif()
  set(BABELQUEUE_PC_NAME babelqueue-${_c})
  set(BABELQUEUE_PC_COMPONENT ${_c})
  set(BABELQUEUE_PC_LIB babelqueue_${_c})
  set(BABELQUEUE_PC_PREFIX "\${pcfiledir}/${_babelqueue_pc_to_prefix}")
  configure_file(${CMAKE_CURRENT_LIST_DIR}/babelqueue.pc.in
                 ${PROJECT_BINARY_DIR}/pkgconfig/babelqueue-${_c}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/babelqueue-${_c}.pc
          DESTINATION ${BABELQUEUE_INSTALL_PKGCONFIGDIR}
          COMPONENT babelqueue_development)
endforeach()

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/babelqueue-config.cmake.in
  ${PROJECT_BINARY_DIR}/babelqueue-config.cmake
  INSTALL_DESTINATION ${BABELQUEUE_INSTALL_CMAKEDIR}
  NO_SET_AND_CHECK_MACRO)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/babelqueue-config-version.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/babelqueue-config.cmake
              ${PROJECT_BINARY_DIR}/babelqueue-config-version.cmake
        DESTINATION ${BABELQUEUE_INSTALL_CMAKEDIR}
        COMPONENT babelqueue_development)
# babelqueue_generate_messages(), loaded by the package config (docs/typed.md).
install(FILES ${PROJECT_SOURCE_DIR}/cmake/BabelqueueGenerateMessages.cmake
        DESTINATION ${BABELQUEUE_INSTALL_CMAKEDIR}
        COMPONENT babelqueue_development)
# Find modules for dependencies that ship no CMake target of their own (Debian's hiredis
# config sets variables only); the package config puts this folder on CMAKE_MODULE_PATH.
if(TARGET babelqueue_redis)
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/FindHiredis.cmake
          DESTINATION ${BABELQUEUE_INSTALL_CMAKEDIR}
          COMPONENT babelqueue_development)
endif()
if(TARGET babelqueue_kafka)  # Debian's librdkafka ships pkg-config files only
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/FindRdKafka.cmake
          DESTINATION ${BABELQUEUE_INSTALL_CMAKEDIR}
          COMPONENT babelqueue_development)
endif()
if(TARGET babelqueue_amqp10)  # Debian's Proton C++ ships no CMake package, a broken .pc
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/FindProton.cmake
          DESTINATION ${BABELQUEUE_INSTALL_CMAKEDIR}
          COMPONENT babelqueue_development)
endif()
if(TARGET babelqueue_pulsar)  # the Pulsar C++ client installs no CMake package
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/FindPulsar.cmake
          DESTINATION ${BABELQUEUE_INSTALL_CMAKEDIR}
          COMPONENT babelqueue_development)
endif()

unset(_babelqueue_components)
unset(_babelqueue_pc_to_prefix)
