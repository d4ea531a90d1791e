# Each doctest suite is its own CTest entry so that ctest -j runs them side by side.
# A suite whose every test case skipped (no reference data, CI unset) exits with
# 77 (tests/reference_data.h: kSkipExitCode), which CTest reports as "Skipped".
set(REFEREE_TEST_SUITES mllog interp compliance rcp fetch reference mutations store fetchround writer harness slurm workloads)
foreach(suite ${REFEREE_TEST_SUITES})
  add_test(NAME ${suite} COMMAND referee_tests --test-suite=${suite} --no-intro=true
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(${suite} PROPERTIES SKIP_RETURN_CODE 77)
endforeach()

# The differential test: generated logs and packages of every round 3.0 to 5.1 through referee
# and through the consortium's tools from the reference data (tests/oracle/README.md).
add_test(NAME differential
         COMMAND ${CMAKE_SOURCE_DIR}/tests/oracle/run_differential.sh $<TARGET_FILE:referee>
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(differential PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)

# Without reference data a suite that needs it is reported as skipped, with the
# reason, and under CI it fails (tests/skip_check.cmake).
add_test(NAME reference_skip
         COMMAND ${CMAKE_COMMAND} -DTESTS=$<TARGET_FILE:referee_tests> -DCTEST=${CMAKE_CTEST_COMMAND}
                 -DBUILD_DIR=${CMAKE_BINARY_DIR} -P ${CMAKE_SOURCE_DIR}/tests/skip_check.cmake
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
