// The publication of a round at the end of its review (docs/review.md, "The
// publication"): what the consortium publishes, made from the store and the
// committee's decisions. For every organisation of the round a package
// (`<org>/systems/<system>.json`, `<org>/results/<system>/<benchmark>/` with
// the result files as imported, byte for byte, and a `scaling.json` where
// the result is normalised), the results table in the result summarizer's
// CSV (results.csv, the summarizer's own columns, from these packages), and
// the decisions (decisions.md and decisions.json: the committee's report).
//
// A result the committee withdrew is left out; one moved to the open division
// is published under `<system>-open` with a copy of its system description
// whose division is "open" (the summarizer reads the division there); a
// normalised one carries the decision's factor in scaling.json; a fixed one
// is the corrected package the store holds now; the others as submitted
// (their own scaling.json kept).
#pragma once

#include <string>
#include <vector>

#include "review/actor.h"
#include "review/api.h"
#include "review/result.h"
#include "submissions/store.h"

namespace referee::review {

struct PublishRequest {
  std::string round;      // training-3.1.0 or 3.1.0
  std::string out;        // the folder written (replaced whole when it holds an earlier publication)
  std::string rules_dir;  // where the round's rule set is looked for ("" = the search path)
};

struct PublishedResult {
  std::string organisation, system, benchmark;  // system: the folder it is published under
  std::string scaling;                          // MLPerf HPC: "strong" or "weak"; "" for Training
  std::string status;                           // as submitted | normalised | moved-to-open | fixed | withdrawn
  double factor = 0;                            // normalised: the decision's factor
  long long decision = 0;                       // the decision that made it so (0: none)
};

struct Publication {
  std::string round;
  std::vector<PublishedResult> results;  // withdrawn ones too (not written)
  int organisations = 0;
  int files = 0;
};

// Writes the publication of `req.round` to `req.out`. Only a chair or an
// administrator publishes, and only a round whose review is over (final or
// published) with no objection still open. The folder is made aside and
// installed whole: on any error nothing of it is left and `req.out` is as it
// was. A result file that changed since it was imported (its SHA-256 is not
// the stored one) stops the publication (422).
Result<Publication> publish_round(submissions::Store& s, const Actor& who, const PublishRequest& req);

// 200 with {"round", "out", "organisations", "files", "results": [{organisation, system, benchmark,
// status, factor, decision}]}, or the error.
Response publication_answer(const Result<Publication>& r, const std::string& out);

}  // namespace referee::review
