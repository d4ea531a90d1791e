# Each doctest suite is its own CTest entry so that ctest -j runs them side by side.
# A suite whose every test case skipped (no reference data, CI unset) exits with
# 77 (tests/reference_data.h: kSkipExitCode), which CTest reports as "Skipped".
set(REFEREE_TEST_SUITES base mllog interp compliance rcp scoring fetch reference mutations store fetchround writer harness manifest progress signals slurm workloads torch power rounds audit serve review review_e2e reports)
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

# Differential tests: every mutation class of the mutations suite, applied to
# copies of real logs, checked by referee and by the consortium's own tools
# (Debian's Python; tests/differential/differential.py), and a self-test that
# the comparison catches a referee that accepts everything. Skipped (77)
# without the reference data or the Python packages, unless CI is set.
foreach(mode mutations selftest)
  if(EXISTS /usr/bin/python3)
    add_test(NAME differential_${mode}
             COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/differential/differential.py ${mode}
                     --referee $<TARGET_FILE:referee> --keep ${CMAKE_BINARY_DIR}/differential-findings
             WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  else()
    add_test(NAME differential_${mode}
             COMMAND sh -c "if [ -n \"$CI\" ]; then echo 'FAIL: /usr/bin/python3 is missing'; exit 1; fi; echo 'SKIPPED: /usr/bin/python3 is missing (Debian: python3)'; exit 77")
  endif()
  set_tests_properties(differential_${mode} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 1200)
endforeach()

# The dashboards in a browser (docs/reports.md, "browser tests"): headless
# Chromium loads every page of a report of the reference data's rounds 3.0 and
# 3.1 (report_browser), served (report_browser_served), the review pages played
# by a committee (report_browser_review), and the hand-made pages of tests/browser/fixture with
# the checker's self-tests (report_browser_fixture). Skipped (77) without
# Node.js, Chromium, reports/web/node_modules or the reference data, unless CI
# is set. Screenshots: build/test-artifacts/report-browser/.
add_test(NAME report_browser
         COMMAND ${CMAKE_SOURCE_DIR}/tests/browser/run_report_browser.sh report $<TARGET_FILE:referee>
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
add_test(NAME report_browser_served
         COMMAND ${CMAKE_SOURCE_DIR}/tests/browser/run_report_browser.sh served $<TARGET_FILE:referee>
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
add_test(NAME report_browser_review
         COMMAND ${CMAKE_SOURCE_DIR}/tests/browser/run_report_browser.sh review $<TARGET_FILE:referee>
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
add_test(NAME report_browser_fixture
         COMMAND ${CMAKE_SOURCE_DIR}/tests/browser/run_report_browser.sh fixture
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(report_browser report_browser_served report_browser_review report_browser_fixture PROPERTIES SKIP_RETURN_CODE 77
                     ENVIRONMENT "REPORT_BROWSER_ARTIFACTS_ROOT=${CMAKE_BINARY_DIR}/test-artifacts/report-browser")
# About 150 pages at about 1.5 s each on a busy 2-core machine.
set_tests_properties(report_browser PROPERTIES TIMEOUT 1500)
set_tests_properties(report_browser_fixture report_browser_served report_browser_review PROPERTIES TIMEOUT 600)

# The floors of docs/architecture.md: each folder includes only the folders
# below it (tests/check_floors.sh names every include that breaks this).
add_test(NAME floors COMMAND ${CMAKE_SOURCE_DIR}/tests/check_floors.sh WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})

# CTest starts the tests of higher COST first; on a fresh machine (no
# Testing/Temporary/CTestCostData.txt yet) this keeps the longest tests from
# starting last and running alone. Seconds measured on a 2-core machine.
set_tests_properties(report_browser PROPERTIES COST 350)
set_tests_properties(differential PROPERTIES COST 300)
set_tests_properties(slurm PROPERTIES COST 140)
set_tests_properties(harness report_browser_fixture report_browser_served report_browser_review PROPERTIES COST 80)
set_tests_properties(power torch differential_mutations PROPERTIES COST 50)
set_tests_properties(manifest store reports serve review audit reference signals writer PROPERTIES COST 20)
