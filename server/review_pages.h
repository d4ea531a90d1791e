// The review in the browser (docs/review.md, "Review in the browser"): the
// member's dashboard, a round's page and an objection's page under /review/,
// and the plain HTML forms that act on them. Each page is made from the
// review API's own answers for the caller (review::Api::handle with their
// token), and each form becomes the API request the CLI would send (the
// typed values of review/objections.h and review/round_ops.h, encoded by
// their codecs): the same authorisation, validation and messages as the API,
// in one place. A form posted with the sign-in cookie must carry the
// session's anti-forgery value and come from this site.
#pragma once

#include <string>
#include <vector>

#include "server/routes.h"

namespace referee::server {

// GET /review: the caller's rounds under review, what they owe in each.
Reply review_home_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params);
// GET /review/{round}: deadlines, required reviews, findings to file, objections, forms.
Reply review_round_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params);
// GET /review/objections/{id}: the objection, its thread, ballot and decision, and the forms the caller may use.
Reply review_objection_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params);
// POST /review/objections/{id}/{action}: a form about one objection
// (comment, evidence, respond, vote, withdraw, decide, extend).
Reply review_objection_form_route(Context& ctx, const Call& call, const Caller& caller,
                                  const std::vector<std::string>& params);
// POST /review/{round}/objections: file an objection (from a finding or by hand).
Reply review_file_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params);
// POST /review/{round}/announcements: announce resubmitted results.
Reply review_announce_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params);
// POST /review/{round}/audit: audit one organisation's results (their findings appear on the round's page).
Reply review_audit_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params);
// POST /review/pairings/{id}: set a required review's status.
Reply review_pairing_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params);

// An API message or hint in the forms' words: "(--override REASON, API field
// `override`)" becomes "(the form's "Override reason" field)".
std::string form_words(const std::string& text);

}  // namespace referee::server
