// The test binary's main: doctest's, plus an honest exit status for suites
// that need the reference data. When every test case of the run skipped for
// want of it, the run exits with kSkipExitCode (CTest: "Skipped") and says why.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "tests/reference_data.h"
#include "review/events.h"
#include "submissions/store.h"

namespace {

int g_cases_run = 0;

// Counts test cases run and those that skipped (SkipLog::current).
struct SkipCounter : doctest::IReporter {
  explicit SkipCounter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override { referee::testing::skip_log().current = false; }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {
    ++g_cases_run;
    if (referee::testing::skip_log().current) ++referee::testing::skip_log().cases;
  }
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

DOCTEST_REGISTER_LISTENER("referee_skip_counter", 1, SkipCounter);

int main(int argc, char** argv) {
  // As the product does (cli/main.cc): a store taken to schema 9 has its packages recorded.
  referee::submissions::Store::set_upgrade_hook(referee::review::adopt_packages);
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (context.shouldExit()) return rc;
  const auto& skips = referee::testing::skip_log();
  if (rc == 0 && g_cases_run > 0 && skips.cases == g_cases_run) {
    std::printf("SKIPPED: all %d test cases of this run skipped: %s\n", g_cases_run, skips.reason.c_str());
    std::fflush(stdout);
    return referee::testing::kSkipExitCode;
  }
  if (skips.cases > 0)
    std::printf("note: %d of %d test cases skipped: %s\n", skips.cases, g_cases_run, skips.reason.c_str());
  return rc;
}
