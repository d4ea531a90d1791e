# Each doctest suite is its own CTest entry so that ctest -j runs them side by side.
set(REFEREE_TEST_SUITES mllog interp compliance rcp fetch reference mutations store fetchround writer harness slurm workloads)
foreach(suite ${REFEREE_TEST_SUITES})
  add_test(NAME ${suite} COMMAND referee_tests --test-suite=${suite} --no-intro=true
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
endforeach()
