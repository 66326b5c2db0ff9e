# run(<command> <args>...): the install tests' way to run a step. Fails the test with the
# command, its exit code and its output when the command fails; sets run_output (stdout) in
# the caller. RUN_TIMEOUT (seconds, default 900) bounds one step.
if(NOT RUN_TIMEOUT)
  set(RUN_TIMEOUT 900)
endif()
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT ${RUN_TIMEOUT})
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "command failed (${rc}): ${cmd}\n--- stdout\n${out}\n--- stderr\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()
