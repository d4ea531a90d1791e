# CTest-level check that suites needing the reference data tell the truth
# without it: "Skipped" in CTest's summary (exit 77, SKIP_RETURN_CODE) with the
# reason printed; a failure when CI is set. Run by the reference_skip test.
#   cmake -DTESTS=<referee_tests> -DCTEST=<ctest> -DBUILD_DIR=<build> -P skip_check.cmake
set(missing /nonexistent/referee-reference-data)

# expect(MESSAGE CONDITION...): fails with MESSAGE unless CONDITION holds.
macro(expect what)
  if(NOT (${ARGN}))
    message(FATAL_ERROR "${what}")
  endif()
endmacro()

# 1. The test binary: exit 77 and the reason.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env --unset=CI REFEREE_REFERENCE_DATA=${missing}
          ${TESTS} --test-suite=reference --no-intro=true
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(FIND "${out}${err}" "SKIPPED: all " at)
expect("referee_tests without reference data exited ${rc}, expected 77:\n${out}${err}" rc EQUAL 77)
expect("no SKIPPED line in:\n${out}${err}" NOT at EQUAL -1)
string(FIND "${out}${err}" "reference data not found at ${missing}" at)
expect("the reason does not name ${missing}:\n${out}${err}" NOT at EQUAL -1)

# 2. Under CI the same run fails (any non-zero status but the skip code).
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env CI=1 REFEREE_REFERENCE_DATA=${missing}
          ${TESTS} --test-suite=reference --no-intro=true
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect("with CI set and no reference data the suite passed:\n${out}${err}" NOT rc EQUAL 0)
expect("with CI set and no reference data the suite skipped:\n${out}${err}" NOT rc EQUAL 77)

# 3. A suite with other test cases besides those (writer) still passes without it.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env --unset=CI REFEREE_REFERENCE_DATA=${missing}
          ${TESTS} --test-suite=writer --no-intro=true
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect("the writer suite without reference data exited ${rc}, expected 0 (it has other tests):\n${out}${err}" rc EQUAL 0)

# 4. CTest itself: the reference entry is reported as skipped, not passed.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env --unset=CI REFEREE_REFERENCE_DATA=${missing}
          ${CTEST} --test-dir ${BUILD_DIR} -R "^reference$" --output-on-failure
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(FIND "${out}" "***Skipped" at)
expect("ctest did not report reference as skipped:\n${out}${err}" NOT at EQUAL -1)
string(FIND "${out}" "(Skipped)" at)
expect("ctest's summary does not list reference as not run (Skipped):\n${out}${err}" NOT at EQUAL -1)
expect("ctest exited ${rc} on a skipped test:\n${out}${err}" rc EQUAL 0)
