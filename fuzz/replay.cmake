# The fuzz target table, and the plain (non-libFuzzer) replay executables of the fuzz
# targets, registered under CTest with label `fuzz-replay`. Included from
# tests/install/CMakeLists.txt whenever tests are built (with the tree's compiler: GCC in
# dev, clang in CI's asan tree, which builds the libFuzzer targets too), and from
# fuzz/CMakeLists.txt for fuzz builds (a no-op there when tests/install/ came first).
#
# The table below is the ONE list of fuzz targets: fuzz/CMakeLists.txt builds the enabled
# ones under libFuzzer and writes <tree>/fuzz/fuzz-targets.tsv (build/asan/... in CI,
# build/fuzz/... for the fuzz preset), which scripts/fuzz.sh reads (executables, seed
# directories, dictionaries, time shares). Nothing else lists them.
include_guard(GLOBAL)

if(NOT TARGET babelqueue_core)
  return()
endif()

set(BABELQUEUE_CONFORMANCE_DIR "${PROJECT_SOURCE_DIR}/../shared/conformance"
    CACHE PATH "The shared cross-SDK conformance suite")

# babelqueue_fuzz_target(<name>
#     REQUIRES <component...>   built (and linked) only when every babelqueue_<component> exists
#     [OPTIONAL <component...>] linked when built, with BABELQUEUE_FUZZ_WITH_<COMPONENT>=1
#     SEEDS <dir...>            seed corpora: relative to fuzz/, or absolute; fuzz/regressions/<name>
#                               is added automatically (a missing directory is skipped)
#     DICTS <file...>           libFuzzer dictionaries (relative to fuzz/), concatenated
#     [SHARE <percent>])        share of `scripts/fuzz.sh <seconds>` this target runs (default 100)
# The source is fuzz/fuzz_<name>.cpp. Records the target in global properties (the list
# BABELQUEUE_FUZZ_TARGETS holds the enabled ones) so that both includers see the same table.
function(babelqueue_fuzz_target name)
  cmake_parse_arguments(ARG "" "SHARE" "REQUIRES;OPTIONAL;SEEDS;DICTS" ${ARGN})
  foreach(component IN LISTS ARG_REQUIRES)
    if(NOT TARGET babelqueue_${component})
      message(STATUS "fuzz target ${name}: skipped (babelqueue::${component} is not built)")
      return()
    endif()
  endforeach()
  set(libs)
  set(defs)
  foreach(component IN LISTS ARG_REQUIRES)
    list(APPEND libs babelqueue::${component})
  endforeach()
  foreach(component IN LISTS ARG_OPTIONAL)
    if(TARGET babelqueue_${component})
      list(APPEND libs babelqueue::${component})
      string(TOUPPER ${component} upper)
      list(APPEND defs BABELQUEUE_FUZZ_WITH_${upper}=1)
    endif()
  endforeach()
  set(seeds)
  foreach(dir IN LISTS ARG_SEEDS ITEMS regressions/${name})
    cmake_path(ABSOLUTE_PATH dir BASE_DIRECTORY ${CMAKE_CURRENT_FUNCTION_LIST_DIR}
               NORMALIZE OUTPUT_VARIABLE dir)
    list(APPEND seeds ${dir})
  endforeach()
  set(dicts)
  foreach(file IN LISTS ARG_DICTS)
    list(APPEND dicts ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${file})
  endforeach()
  if(NOT ARG_SHARE)
    set(ARG_SHARE 100)
  endif()
  set_property(GLOBAL APPEND PROPERTY BABELQUEUE_FUZZ_TARGETS ${name})
  set_property(GLOBAL PROPERTY BABELQUEUE_FUZZ_${name}_LIBS ${libs})
  set_property(GLOBAL PROPERTY BABELQUEUE_FUZZ_${name}_DEFS ${defs})
  set_property(GLOBAL PROPERTY BABELQUEUE_FUZZ_${name}_SEEDS ${seeds})
  set_property(GLOBAL PROPERTY BABELQUEUE_FUZZ_${name}_DICTS ${dicts})
  set_property(GLOBAL PROPERTY BABELQUEUE_FUZZ_${name}_SHARE ${ARG_SHARE})
endfunction()

# Links a fuzz target's source into `exe` (libFuzzer or replay build alike).
function(babelqueue_fuzz_link exe name)
  get_property(libs GLOBAL PROPERTY BABELQUEUE_FUZZ_${name}_LIBS)
  get_property(defs GLOBAL PROPERTY BABELQUEUE_FUZZ_${name}_DEFS)
  target_link_libraries(${exe} PRIVATE ${libs})
  target_compile_definitions(${exe} PRIVATE ${defs})
  # Targets of a transport's private parsers include them as the component does.
  target_include_directories(${exe} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  babelqueue_warnings(${exe})
endfunction()

# -- the table ---------------------------------------------------------------------------
# The envelope codec and the JSON canonicalizer: the shared JSON envelope corpus plus the
# conformance fixtures. They run the full time; the other parsers' input spaces are smaller,
# so they get half of it, or a quarter (see scripts/fuzz.sh for the total).
babelqueue_fuzz_target(decode REQUIRES core
  SEEDS corpus ${BABELQUEUE_CONFORMANCE_DIR}/fixtures DICTS json.dict)
babelqueue_fuzz_target(canonicalize REQUIRES core
  SEEDS corpus ${BABELQUEUE_CONFORMANCE_DIR}/fixtures DICTS json.dict)
# The Redis binding (header-only bindings/redis.hpp, core only): stored value -> unframe().
babelqueue_fuzz_target(redis_unframe REQUIRES core
  SEEDS corpus-redis_unframe DICTS json.dict redis_unframe.dict SHARE 50)
# What a Redis server answers (src/redis/: CLUSTER SLOTS, the owned and Laravel reserving and
# recover scripts, LRANGE, LLEN, publish, redirects, Sentinel failover replies), as raw RESP
# through hiredis' reader and the operations' reply handling.
babelqueue_fuzz_target(redis_replies REQUIRES redis
  SEEDS corpus-redis_replies SHARE 50)
# The sqlite:// transport's headers column (src/sqlite/message.hpp): read side and round trip.
babelqueue_fuzz_target(sqlite_headers REQUIRES sqlite
  SEEDS corpus-sqlite_headers DICTS json.dict SHARE 25)
# Broker URLs, typed query options and the redis/sqlite option parsers (no connection made).
# (src/redis opens `babelqueue::inline v1::redis`: the plain `babelqueue::redis` form made
# clang < 18 (CWG 2061) define the option parser outside v1, where nothing linked to it.)
babelqueue_fuzz_target(url REQUIRES runtime OPTIONAL sqlite redis
  SEEDS corpus-url DICTS url.dict SHARE 50)
# The read side of an AMQP 0-9-1 headers table (src/rabbitmq/message.cpp) and its round trip.
babelqueue_fuzz_target(amqp_headers REQUIRES rabbitmq
  SEEDS corpus-amqp_headers SHARE 50)
# The broker's connection.close / channel.close / basic.return (rabbitmq-c's decoder) as the
# amqp:// transport turns them into errors (src/rabbitmq/errors.cpp).
babelqueue_fuzz_target(amqp_methods REQUIRES rabbitmq
  SEEDS corpus-amqp_methods SHARE 25)
# The read side of a Kafka record's headers (src/kafka/message.hpp) and its round trip.
babelqueue_fuzz_target(kafka_headers REQUIRES kafka
  SEEDS corpus-kafka_headers SHARE 50)
# The read side of a Pulsar message's properties (header-only bindings/pulsar.hpp, core only)
# and its round trip.
babelqueue_fuzz_target(pulsar_properties REQUIRES core
  SEEDS corpus-pulsar_properties SHARE 50)
# What the OpenTelemetry module reads from a message: `traceparent`, `tracestate` and the
# envelope's trace_id, through the tracing observer's parent selection and the bijection.
babelqueue_fuzz_target(otel_trace_context REQUIRES otel core
  SEEDS corpus-otel_trace_context SHARE 40)
# An AMQP 1.0 message as the Artemis (and Service Bus) transport reads it (src/artemis/message.cpp over Proton's
# decoder) and its round trip through the projection.
babelqueue_fuzz_target(artemis_message REQUIRES artemis amqp10 OPTIONAL asb
  SEEDS corpus-artemis_message SHARE 50)
# Payload schemas: `<schema> NUL <instance>` -> document::parse, validate, compat lint.
babelqueue_fuzz_target(schema REQUIRES schema
  SEEDS corpus-schema ${BABELQUEUE_CONFORMANCE_DIR}/schema DICTS json.dict schema.dict SHARE 50)
# GDPR field encryption: unprotect of hostile ciphertexts, protect/unprotect round trip.
babelqueue_fuzz_target(gdpr_unprotect REQUIRES gdpr
  SEEDS corpus-gdpr_unprotect DICTS json.dict gdpr_unprotect.dict SHARE 50)
# The Azure Service Bus connection-string parser and SAS token (src/amqp10/, in
# babelqueue::amqp10): a small input space, so a quarter of the time.
babelqueue_fuzz_target(asb_connection_string REQUIRES asb
  SEEDS corpus-asb_connection_string DICTS asb_connection_string.dict SHARE 25)
# What an SQS server answers (src/sqs/api.cpp: ReceiveMessage parser, error code) through
# the binding, and the request JSON string writer.
babelqueue_fuzz_target(sqs_response REQUIRES sqs
  SEEDS corpus-sqs_response DICTS json.dict SHARE 50)

# -- replay under CTest ------------------------------------------------------------------
get_property(BABELQUEUE_FUZZ_TARGETS GLOBAL PROPERTY BABELQUEUE_FUZZ_TARGETS)
set(fixtures ${BABELQUEUE_CONFORMANCE_DIR}/fixtures)
cmake_path(ABSOLUTE_PATH fixtures BASE_DIRECTORY ${CMAKE_CURRENT_LIST_DIR} NORMALIZE)
foreach(fuzz_target IN LISTS BABELQUEUE_FUZZ_TARGETS)
  set(exe babelqueue_fuzz_replay_${fuzz_target})
  add_executable(${exe}
    ${CMAKE_CURRENT_LIST_DIR}/fuzz_${fuzz_target}.cpp
    ${CMAKE_CURRENT_LIST_DIR}/replay_main.cpp)
  babelqueue_fuzz_link(${exe} ${fuzz_target})
  # Every seed and past crash, read in place. The conformance fixtures must be there (as
  # before); other directories are optional (a new fuzz/regressions/<target>/ needs a
  # re-configure to be picked up).
  get_property(seeds GLOBAL PROPERTY BABELQUEUE_FUZZ_${fuzz_target}_SEEDS)
  set(inputs)
  foreach(dir IN LISTS seeds)
    if(IS_DIRECTORY "${dir}" OR "${dir}" STREQUAL "${fixtures}")
      list(APPEND inputs ${dir})
    endif()
  endforeach()
  add_test(NAME fuzz_replay.${fuzz_target} COMMAND ${exe} ${inputs})
  set_tests_properties(fuzz_replay.${fuzz_target} PROPERTIES LABELS fuzz-replay TIMEOUT 300)
endforeach()
