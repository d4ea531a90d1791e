// referee round show|list|schedule|state: a round's review record
// (docs/review.md, "Rounds, pairings and the report"). The flags fill the
// typed operations of review/round_ops.h: run on the local store, or sent to
// --server as the request body made from the same value.
#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/review_cli.h"
#include "cli/review_output.h"
#include "cli/table.h"
#include "review/round_codec.h"
#include "review/round_ops.h"
#include "review/rounds.h"

namespace referee::cli {

using namespace review_cli;

namespace {

void print_round(const mllog::Json& r) {
  std::cout << jstr(r, "round") << ": " << jstr(r, "state")
            << (jstr(r, "review") == "true" ? "" : " (no review record: counts as published)") << ", version "
            << jint(r, "version") << "\n";
  if (const auto* s = r.find("schedule")) {
    Table t({"milestone", "date (UTC)"});
    for (const auto& [k, v] : s->fields) t.add({k, v.kind == mllog::Json::Kind::String ? v.s : "not set"});
    t.print(std::cout);
  }
}

review::Response show_round(submissions::Store& s, const review::Actor& who, const std::string& round) {
  return review::round_answer(review::show_round(s, who, round));
}

SubSetup list_setup() {
  return [](CLI::App& sub) -> std::function<int()> {
    auto o = std::make_shared<ClientOptions>();
    auto json = std::make_shared<bool>(false);
    add_answer_options(sub, json.get(), o.get());
    return [o, json]() -> int {
      review::Request r{"GET", "/api/v1/rounds", {}, "", "", "", false};
      auto local = [](submissions::Store& s, const review::Actor& who) {
        return review::rounds_answer(review::visible_rounds(s, who));
      };
      return send_and_print("round list", *o, r, local, *json, [](const mllog::Json& b) {
        Table t({"round", "state", "objections due", "publication", "version"});
        if (const auto* rs = b.find("rounds"))
          for (const auto& x : rs->items) {
            const auto* s = x.find("schedule");
            t.add({jstr(x, "round"), jstr(x, "state"), s ? jstr(*s, "objections_due") : "", s ? jstr(*s, "publication") : "",
                   std::to_string(jint(x, "version"))});
          }
        t.print(std::cout);
      });
    };
  };
}

SubSetup schedule_setup() {
  return [](CLI::App& sub) -> std::function<int()> {
    struct Opts {
      ClientOptions client;
      std::string round, from_deadline;
      std::vector<std::pair<std::string, std::string>> dates;  // field, value as typed
      std::map<std::string, std::string> flags;
      long long version = -1;
      bool json = false;
    };
    auto o = std::make_shared<Opts>();
    sub.add_option("ROUND", o->round, "round: training-3.1.0 or 3.1.0")->required();
    sub.add_option("--from-deadline", o->from_deadline,
                   "fill the MLCommons default from this submission deadline: objections +7 days, responses the Monday "
                   "of week 2, decisions +14, scores final +21, publication +28 (the flags below override)");
    for (auto& [name, field] : review::schedule_fields()) {
      std::string flag = std::string("--") + name;
      for (auto& ch : flag) if (ch == '_') ch = '-';
      sub.add_option(flag, o->flags[name], std::string(name) + ": YYYY-MM-DD (end of that day, UTC) or YYYY-MM-DDTHH:MM[:SS]Z; \"\" clears it");
    }
    sub.add_option("--version", o->version, "the version you read (round show): a stale one is refused")->check(count_at_least(0));
    add_answer_options(sub, &o->json, &o->client);
    return [o, &sub]() -> int {
      review::Schedule defaults;
      if (!o->from_deadline.empty()) {
        std::string error;
        if (!review::default_schedule(o->from_deadline, &defaults, &error)) {
          std::cerr << "referee round schedule: --from-deadline: " << error << "\n";
          return 2;
        }
      }
      review::SetSchedule in;
      in.round = o->round;
      for (auto& [name, field] : review::schedule_fields()) {
        std::string flag = std::string("--") + name;
        for (auto& ch : flag) if (ch == '_') ch = '-';
        if (sub.count(flag)) in.dates[name] = o->flags[name];
        else if (!(defaults.*field).empty()) in.dates[name] = defaults.*field;
      }
      in.version = {o->version >= 0, o->version};
      if (in.dates.empty()) {
        std::cerr << "referee round schedule: no date given\nhint: --from-deadline DATE, or --objections-due DATE etc.\n";
        return 2;
      }
      review::Request r{"PUT", "/api/v1/rounds/" + path_segment(o->round) + "/schedule", {}, review::request_body(in), "", "", false};
      auto local = [&](submissions::Store& s, const review::Actor& who) {
        return review::round_answer(review::set_schedule(s, who, in));
      };
      return send_and_print("round schedule", o->client, r, local, o->json, print_round);
    };
  };
}

SubSetup state_setup() {
  return [](CLI::App& sub) -> std::function<int()> {
    struct Opts {
      ClientOptions client;
      std::string round, state, reason, override_reason;
      long long version = -1;
      bool json = false;
    };
    auto o = std::make_shared<Opts>();
    sub.add_option("ROUND", o->round, "round: training-3.1.0 or 3.1.0")->required();
    sub.add_option("STATE", o->state, "review, final or published (final -> review needs --reason)")->required();
    sub.add_option("--reason", o->reason, "why (required to go back from final to review)");
    sub.add_option("--version", o->version, "the version you read (round show): a stale one is refused")->check(count_at_least(0));
    sub.add_option("--override", o->override_reason,
                   "review chair: go to final or published with objections still open, for this reason");
    add_answer_options(sub, &o->json, &o->client);
    return [o]() -> int {
      review::ChangeRoundState in;
      in.round = o->round;
      in.state = o->state;
      in.reason = o->reason;
      in.override_reason = o->override_reason;
      in.version = {o->version >= 0, o->version};
      review::Request r{"POST", "/api/v1/rounds/" + path_segment(o->round) + "/state", {}, review::request_body(in), "", "", false};
      auto local = [&](submissions::Store& s, const review::Actor& who) {
        return review::round_answer(review::change_round_state(s, who, in));
      };
      return send_and_print("round state", o->client, r, local, o->json, print_round);
    };
  };
}

}  // namespace

Command round_command() {
  return {"round", "A round's review: show, list, schedule, state", [](CLI::App& sub) -> std::function<int()> {
            return command_group(sub, {{"show", "A round's state, schedule and version", round_request("round show", "GET", "", true, show_round, print_round)},
                                       {"list", "Rounds you may see, with their state", list_setup()},
                                       {"schedule", "Set a round's review dates (creates its review record)", schedule_setup()},
                                       {"state", "Move a round: review -> final -> published (or final -> review)", state_setup()}});
          }};
}

}  // namespace referee::cli
