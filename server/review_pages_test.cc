// The review pages' wording of the API's messages.
#include <doctest/doctest.h>

#include "server/review_pages.h"

TEST_SUITE("serve") {
  TEST_CASE("form_words: the API's flags and fields named as the forms name them") {
    using referee::server::form_words;
    CHECK(form_words("decide earlier with a reason (--override REASON, API field `override`)") ==
          "decide earlier with a reason (the form's \"Override reason\" field)");
    CHECK(form_words("name it (--remedy R [--factor F], API fields `remedy`, `factor`)") ==
          "name it (the form's \"Remedy\" and \"Factor\" fields)");
    CHECK(form_words("breaks the tie with --tie-break uphold|reject (API field `tie_break`)") ==
          "breaks the tie with --tie-break uphold|reject (the form's \"On a tie\" field)");
    CHECK(form_words("see API field `fix_due` and API field `zzz`") == "see the form's \"Fix due\" field and the form's \"zzz\" field");
    CHECK(form_words("nothing to change") == "nothing to change");
  }
}
