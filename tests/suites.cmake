# Each doctest suite is its own CTest entry so that ctest -j runs them side by side.
set(REFEREE_TEST_SUITES mllog interp rules compliance rcp package cli fetch reference mutations)
foreach(suite ${REFEREE_TEST_SUITES})
  add_test(NAME ${suite} COMMAND referee_tests --test-suite=${suite} --no-intro=true
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
endforeach()
