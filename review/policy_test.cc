// The review's authorisation as a table: review::authorize is a pure
// function of (actor, action, standing, round state), so every row here is
// one literal question and its literal answer, no store involved.
#include <doctest/doctest.h>

#include <string>

#include "review/policy.h"

namespace {

using referee::review::Access;
using referee::review::Action;
using referee::review::Actor;
using referee::review::Role;
using referee::review::Standing;

Actor actor(Role role, const std::string& org, bool local_admin = false) {
  return Actor{0, std::string("u"), org, role, local_admin};
}

Standing standing(const std::string& s) {
  Standing st;
  st.objecting = s.find("objecting") != std::string::npos;
  st.accused = s.find("accused") != std::string::npos;
  st.submitted = s.find("submitted") != std::string::npos;
  st.reviewer = s.find("reviewer") != std::string::npos;
  st.owns_result = s.find("owner") != std::string::npos;
  st.partner = s.find("partner") != std::string::npos;
  return st;
}

}  // namespace

TEST_SUITE("review") {
  TEST_CASE("authorisation table: role x action x standing x round state") {
    const Actor member = actor(Role::Member, "Google"), chair = actor(Role::Chair, ""),
                chair_org = actor(Role::Chair, "Dell"), admin = actor(Role::Admin, ""),
                local = actor(Role::Admin, "", true), orgless = actor(Role::Member, "");
    const auto A = Access::Allowed, F = Access::Forbidden, C = Access::Closed;
    struct Row {
      const Actor* who;
      Action action;
      const char* standing;
      const char* state;
      Access want;
    };
    const Row rows[] = {
        // Filing: any organisation, not against itself.
        {&member, Action::FileObjection, "objecting", "review", A},
        {&member, Action::FileObjection, "objecting accused", "review", F},
        {&orgless, Action::FileObjection, "", "review", F},
        {&admin, Action::FileObjection, "", "review", F},
        {&chair_org, Action::FileObjection, "objecting", "review", A},
        {&member, Action::FileObjection, "objecting", "published", C},
        // Evidence: either party or a chair.
        {&member, Action::AddEvidence, "objecting", "review", A},
        {&member, Action::AddEvidence, "accused", "final", A},
        {&member, Action::AddEvidence, "submitted", "review", F},
        {&chair, Action::AddEvidence, "", "review", A},
        {&admin, Action::AddEvidence, "", "review", F},
        {&chair, Action::AddEvidence, "", "published", C},
        // Responses: the accused only.
        {&member, Action::Respond, "accused", "review", A},
        {&member, Action::Respond, "objecting", "review", F},
        {&chair, Action::Respond, "", "review", F},
        {&local, Action::Respond, "", "review", F},
        // The discussion: either party and the chairs, in any state but published.
        {&member, Action::Comment, "objecting", "review", A},
        {&member, Action::Comment, "accused", "final", A},
        {&member, Action::Comment, "submitted", "review", F},
        {&chair, Action::Comment, "", "review", A},
        {&admin, Action::Comment, "", "review", F},
        {&member, Action::Comment, "objecting", "published", C},
        // Votes: every organisation that submitted, parties included.
        {&member, Action::Vote, "submitted", "review", A},
        {&member, Action::Vote, "submitted accused", "review", A},
        {&member, Action::Vote, "", "review", F},
        {&chair, Action::Vote, "", "review", F},
        // Decisions: a chair not party to the case.
        {&chair, Action::Decide, "", "review", A},
        {&chair_org, Action::Decide, "submitted", "review", A},
        {&chair_org, Action::Decide, "accused", "review", F},
        {&chair_org, Action::Decide, "objecting", "review", F},
        {&member, Action::Decide, "submitted", "review", F},
        {&admin, Action::Decide, "", "review", F},
        {&chair, Action::Decide, "", "published", C},
        // Withdrawal: the objecting organisation.
        {&member, Action::Withdraw, "objecting", "review", A},
        {&member, Action::Withdraw, "accused", "review", F},
        {&chair, Action::Withdraw, "", "review", F},
        // Overrides: chairs only.
        {&chair, Action::OverrideDeadline, "", "review", A},
        // ... but not for a case their own organisation is a party to.
        {&chair, Action::OverrideDeadline, "objecting", "review", F},
        {&chair, Action::OverrideDeadline, "accused", "review", F},
        // A joint submission's partner is a party too (NVIDIA's chair on a case against Azure+NVIDIA).
        {&chair, Action::OverrideDeadline, "partner", "review", F},
        {&chair, Action::Decide, "partner", "review", F},
        {&member, Action::Respond, "partner", "review", F},
        {&member, Action::OverrideDeadline, "objecting", "review", F},
        {&admin, Action::OverrideDeadline, "", "review", F},
        // Round administration: chairs and administrators, in any state.
        {&chair, Action::SetSchedule, "", "published", A},
        {&admin, Action::ChangeRoundState, "", "final", A},
        {&member, Action::SetSchedule, "submitted", "review", F},
        {&admin, Action::AssignPairings, "", "review", A},
        {&member, Action::AssignPairings, "submitted", "review", F},
        // Pairing status: the reviewer's members, chairs and the local administrator.
        {&member, Action::SetPairingStatus, "reviewer", "review", A},
        {&member, Action::SetPairingStatus, "", "review", F},
        {&chair, Action::SetPairingStatus, "", "review", A},
        {&admin, Action::SetPairingStatus, "", "review", F},
        {&local, Action::SetPairingStatus, "", "review", A},
        {&member, Action::SetPairingStatus, "reviewer", "published", C},
        // Announcements: a member for their own results, chairs, the local administrator.
        {&member, Action::Announce, "owner", "review", A},
        {&member, Action::Announce, "", "review", F},
        {&admin, Action::Announce, "", "review", F},
        {&chair, Action::Announce, "", "review", A},
        {&local, Action::Announce, "", "review", A},
        // Users: administrators manage them; chairs and administrators list them.
        {&admin, Action::ManageUsers, "", "", A},
        {&local, Action::ManageUsers, "", "", A},
        {&chair, Action::ManageUsers, "", "", F},
        {&member, Action::ManageUsers, "", "", F},
        {&chair, Action::ListUsers, "", "", A},
        {&admin, Action::ListUsers, "", "", A},
        {&member, Action::ListUsers, "", "", F},
        // The publication: chairs and administrators (the local one too), a published round included.
        {&chair, Action::Publish, "", "published", A},
        {&admin, Action::Publish, "", "final", A},
        {&local, Action::Publish, "", "final", A},
        {&member, Action::Publish, "submitted", "final", F},
        // Meetings: chairs and the local administrator, until the round is published.
        {&chair, Action::RecordMeeting, "", "review", A},
        {&local, Action::RecordMeeting, "", "final", A},
        {&admin, Action::RecordMeeting, "", "review", F},
        {&member, Action::RecordMeeting, "submitted", "review", F},
        {&chair, Action::RecordMeeting, "", "published", C},
    };
    int n = 0;
    for (const auto& r : rows) {
      CAPTURE(n);
      CHECK(referee::review::authorize(*r.who, r.action, standing(r.standing), r.state) == r.want);
      ++n;
    }
  }

  TEST_CASE("the one 409 body names the version read, the current one and how to read it again") {
    auto e = referee::review::stale("objection 3", 1, 2, "referee objection show 3");
    CHECK(e.status == 409);
    CHECK(e.code == "stale");
    CHECK(e.version == 2);
    CHECK(e.message == "objection 3 changed since you read it (version 1, now 2)");
    CHECK(e.hint == "read it again (referee objection show 3) and retry with --version 2 (API: `version`)");
    // A version it never reached was not read from it.
    auto ahead = referee::review::stale("objection 3", 7, 2, "referee objection show 3");
    CHECK(ahead.status == 409);
    CHECK(ahead.message == "objection 3 is at version 2: version 7 was never one of it");
    CHECK(ahead.version == 2);
    referee::review::Error err;
    CHECK(referee::review::check_version({false, 0}, 5, "x", "y", &err));
    CHECK(referee::review::check_version({true, 5}, 5, "x", "y", &err));
    CHECK_FALSE(referee::review::check_version({true, 4}, 5, "x", "y", &err));
    CHECK(err.version == 5);
  }

  TEST_CASE("the decision follows the vote: the remedy and factor recorded are those the required majority voted for") {
    using referee::review::Proposal;
    using referee::review::carried_remedy;
    const Proposal fix{"fix"}, withdraw{"withdraw"}, open{"open"}, none{""}, n101{"normalise", true, 1.01},
        n35{"normalise", true, 3.5};
    struct Row {
      std::vector<Proposal> uphold;
      int reject;
      std::string asked;
      double factor;  // with asked normalise
      bool ok;
      std::string remedy, majority, code;
      int support;
    };
    const std::vector<Row> rows = {
        // Three votes for fix: fix is carried; withdraw, which nobody voted for, is not.
        {{fix, fix, fix}, 0, "", 0, true, "fix", "simple", "", 3},
        {{fix, fix, fix}, 0, "withdraw", 0, false, "withdraw", "", "not-carried", 0},
        {{fix, fix, fix}, 0, "none", 0, false, "none", "", "not-carried", 0},
        // Every vote a factor of 1.01: 3.5 needs its own vote.
        {{n101, n101, n101}, 0, "", 0, true, "normalise", "simple", "", 3},
        {{n101, n101, n101}, 0, "normalise", 1.01, true, "normalise", "simple", "", 3},
        {{n101, n101, n101}, 0, "normalise", 3.5, false, "normalise", "", "not-carried", 0},
        // Uphold votes naming no remedy support whichever the chair names.
        {{none, none, none}, 1, "withdraw", 0, true, "withdraw", "two-thirds", "", 3},
        {{none, none}, 0, "", 0, true, "none", "simple", "", 2},
        {{fix, none, none}, 0, "normalise", 3.5, true, "normalise", "simple", "", 2},
        {{fix, none, none}, 1, "normalise", 3.5, false, "normalise", "", "not-carried", 2},
        // Withdraw and open need two thirds of the votes cast for them.
        {{withdraw, withdraw, fix}, 0, "withdraw", 0, true, "withdraw", "two-thirds", "", 2},
        {{withdraw, withdraw, fix}, 1, "withdraw", 0, false, "withdraw", "", "not-carried", 2},
        {{open, open, open}, 2, "", 0, false, "open", "", "not-carried", 3},
        // The most named is carried only with the majority: 2 of 5 is not.
        {{fix, fix, n35}, 2, "", 0, false, "fix", "", "not-carried", 2},
        // Two remedies named equally: the chair names one, which must be carried.
        {{fix, n35}, 0, "", 0, false, "", "", "no-remedy", 0},
        {{fix, n35}, 0, "fix", 0, false, "fix", "", "not-carried", 1},
        {{fix, n35}, 0, "fix", 0, false, "fix", "", "not-carried", 1},
    };
    int n = 0;
    for (const auto& r : rows) {
      CAPTURE(n);
      auto c = carried_remedy(r.uphold, r.reject, r.asked, r.asked == "normalise", r.factor, "");
      CHECK(c.ok == r.ok);
      if (!r.remedy.empty()) CHECK(c.remedy == r.remedy);
      CHECK(c.majority == r.majority);
      CHECK(c.code == r.code);
      if (r.code != "no-remedy") CHECK(c.support == r.support);
      ++n;
    }
    // The refusal says what was voted and what would be carried.
    auto c = carried_remedy({fix, fix, fix}, 0, "withdraw", false, 0, "");
    CHECK(c.error == "the votes do not carry remedy withdraw: 0 of the 3 votes cast support it (uphold votes naming it, "
                     "or naming no remedy); it needs two thirds of them");
    CHECK(c.hint.find("--remedy withdraw") != std::string::npos);
    CHECK(c.hint.find("the votes carry fix") != std::string::npos);
    // A tie in support is the chair's to break.
    auto tie = carried_remedy({fix}, 1, "fix", false, 0, "uphold");
    CHECK(tie.ok);
    CHECK(tie.majority == "chair-tie-break");
  }

  TEST_CASE("an override in a published round is told the round is published, whoever sends it") {
    auto actor = [](std::string user, referee::review::Role role, std::string org) {
      referee::review::Actor a;
      a.user = std::move(user);
      a.role = role;
      a.organisation = std::move(org);
      return a;
    };
    const referee::review::Actor member = actor("goog-member", referee::review::Role::Member, "Google"),
                                 chair = actor("neutral-chair", referee::review::Role::Chair, "");
    referee::review::RoundInfo round;
    round.name = "training-3.1.0";
    round.state = "published";
    for (const auto* who : {&member, &chair}) {
      std::string overridden;
      referee::review::Error err;
      CHECK_FALSE(referee::review::check_deadline(*who, round, "responses_due", "please", &overridden, &err));
      CHECK(err.status == 422);
      CHECK(err.code == "published");
      CHECK(err.message == "round training-3.1.0 is published: the review is closed");
    }
  }
}
