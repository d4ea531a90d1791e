// referee review assign|pairings|pairing|report and referee resubmission
// announce|list (docs/review.md, "Rounds, pairings and the report"). The
// flags fill the typed operations of review/round_ops.h: run on the local
// store, or sent to --server as the request made from the same value. Each
// subcommand is its own function so that the group can take more (review
// log lives with the audit trail's commands).
#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/review_output.h"
#include "cli/review_cli.h"
#include "cli/table.h"
#include "review/publish.h"
#include "review/round_codec.h"
#include "review/round_ops.h"

namespace referee::cli {

using namespace review_cli;

namespace {

void print_pairings(const mllog::Json& b) {
  Table t({"id", "reviewer", "reviews", "reason", "status", "version"});
  if (const auto* ps = b.find("pairings"))
    for (const auto& p : ps->items)
      t.add({std::to_string(jint(p, "id")), jstr(p, "reviewer"), jstr(p, "reviewed"), jstr(p, "reason"), jstr(p, "status"),
             std::to_string(jint(p, "version"))});
  std::cout << jstr(b, "round") << ": required reviews\n";
  t.print(std::cout);
}

void print_assigned(const mllog::Json& b) {
  std::cout << "ranking by number of results:\n";
  Table rank({"#", "organisation", "results", "largest system"});
  int i = 0;
  if (const auto* rs = b.find("ranking"))
    for (const auto& x : rs->items)
      rank.add({std::to_string(++i), jstr(x, "organisation"), std::to_string(jint(x, "results")),
                std::to_string(jint(x, "max_accelerators")) + " accelerators"});
  rank.print(std::cout);
  if (const auto* rs = b.find("ranking"); rs && rs->items.size() < 2) std::cout << "fewer than two submitters: nobody to pair\n";
  const auto* added = b.find("added");
  size_t n = added ? added->items.size() : 0;
  std::cout << n << " pairing" << (n == 1 ? "" : "s") << " added, " << jint(b, "kept") << " already there (kept as they are)\n";
  if (added)
    for (const auto& a : added->items)
      std::cout << "  added: " << jstr(a, "reviewer") << " reviews " << jstr(a, "reviewed") << " (" << jstr(a, "reason") << ")\n";
  if (const auto* un = b.find("unpaired"))
    for (const auto& u : un->items) std::cout << "  unpaired: " << u.s << " (no submitter it may review)\n";
  if (const auto* nr = b.find("not_required"))
    for (const auto& p : nr->items)
      std::cout << "  no longer required (kept): " << jint(p, "id") << " " << jstr(p, "reviewer") << " reviews "
                << jstr(p, "reviewed") << "\n";
  print_pairings(b);
}

SubSetup pairing_setup() {
  return [](CLI::App& sub) -> std::function<int()> {
    struct Opts {
      ClientOptions client;
      long long id = 0, version = -1;
      std::string status;
      bool json = false;
    };
    auto o = std::make_shared<Opts>();
    sub.add_option("ID", o->id, "the pairing's id (review pairings)")->required();
    sub.add_option("--status", o->status, "assigned, in-progress or done")->required();
    sub.add_option("--version", o->version, "the version you read: a stale one is refused")->check(count_at_least(0));
    add_answer_options(sub, &o->json, &o->client);
    return [o]() -> int {
      review::UpdatePairing in;
      in.pairing = o->id;
      in.status = o->status;
      in.version = {o->version >= 0, o->version};
      review::Request r{"PATCH", "/api/v1/pairings/" + std::to_string(o->id), {}, review::request_body(in), "", "", false};
      auto local = [&](submissions::Store& s, const review::Actor& who) {
        return review::pairing_answer(review::update_pairing(s, who, in));
      };
      return send_and_print("review pairing", o->client, r, local, o->json, [](const mllog::Json& p) {
        std::cout << "pairing " << jint(p, "id") << ": " << jstr(p, "reviewer") << " reviews " << jstr(p, "reviewed")
                  << ": " << jstr(p, "status") << " (version " << jint(p, "version") << ")\n";
      });
    };
  };
}

SubSetup report_setup() {
  return [](CLI::App& sub) -> std::function<int()> {
    struct Opts {
      ClientOptions client;
      std::string round, format = "md";
    };
    auto o = std::make_shared<Opts>();
    sub.add_option("--round", o->round, "round: training-3.1.0 or 3.1.0")->required();
    sub.add_option("--format", o->format, "md (default), json, or github (one issue block per objection)")
        ->transform(CLI::IsMember({"md", "json", "github"}, CLI::ignore_case));
    add_client_options(sub, &o->client);
    return [o]() -> int {
      review::Request r{"GET", "/api/v1/rounds/" + path_segment(o->round) + "/report", {{"format", o->format}}, "", "", "", false};
      auto local = [&](submissions::Store& s, const review::Actor& who) {
        return review::report_answer(review::round_report(s, who, o->round, o->format));
      };
      return send_and_print("review report", o->client, r, local, true, [](const mllog::Json&) {});
    };
  };
}

// ---- meeting|meetings|minutes

SubSetup meeting_setup() {
  return [](CLI::App& sub) -> std::function<int()> {
    struct Opts {
      ClientOptions client;
      std::string round, held_at, notes;
      std::vector<std::string> attendees;
      std::vector<long long> objections;
      bool json = false;
    };
    auto o = std::make_shared<Opts>();
    sub.add_option("--round", o->round, "round: training-3.1.0 or 3.1.0")->required();
    sub.add_option("--held-at", o->held_at, "when it was held: 2026-12-10 or 2026-12-10T15:00Z")->required();
    sub.add_option("--attendee", o->attendees, "an organisation that attended (repeatable)")->required();
    sub.add_option("--objection", o->objections, "an objection discussed (repeatable)")->check(count_at_least(1));
    sub.add_option("--notes", o->notes, "the notes (what was said beyond the decisions)");
    add_answer_options(sub, &o->json, &o->client);
    return [o]() -> int {
      review::RecordMeeting in{o->round, o->held_at, o->notes, o->attendees, o->objections};
      review::Request r{"POST", "/api/v1/rounds/" + path_segment(o->round) + "/meetings", {}, review::request_body(in), "", "", false};
      auto local = [&](submissions::Store& s, const review::Actor& who) {
        return review::meeting_answer(review::record_meeting(s, who, in));
      };
      return send_and_print("review meeting", o->client, r, local, o->json, [o](const mllog::Json& m) {
        std::cout << "meeting " << jint(m, "id") << " of " << o->round << ", held " << jstr(m, "held_at")
                  << ": recorded; its minutes: referee review minutes --round " << o->round << " --meeting " << jint(m, "id") << "\n";
      });
    };
  };
}

void print_meetings(const mllog::Json& b) {
  Table t({"id", "held at", "attending", "objections", "recorded by"});
  if (const auto* ms = b.find("meetings"))
    for (const auto& m : ms->items) {
      std::string who, what;
      if (const auto* a = m.find("attendees"))
        for (const auto& x : a->items) who += (who.empty() ? "" : ", ") + x.s;
      if (const auto* a = m.find("objections"))
        for (const auto& x : a->items) what += (what.empty() ? "" : ", ") + std::to_string(x.i);
      t.add({std::to_string(jint(m, "id")), jstr(m, "held_at"), who, what, jstr(m, "recorded_by")});
    }
  t.print(std::cout);
}

review::Response list_meetings(submissions::Store& s, const review::Actor& who, const std::string& round) {
  return review::meetings_answer(review::round_meetings(s, who, round));
}

SubSetup minutes_setup() {
  return [](CLI::App& sub) -> std::function<int()> {
    struct Opts {
      ClientOptions client;
      std::string round, format = "md";
      long long meeting = 0;
    };
    auto o = std::make_shared<Opts>();
    sub.add_option("--round", o->round, "round: training-3.1.0 or 3.1.0")->required();
    sub.add_option("--meeting", o->meeting, "the meeting's number (review meetings)")->required()->check(count_at_least(1));
    sub.add_option("--format", o->format, "md (default) or json")->transform(CLI::IsMember({"md", "json"}, CLI::ignore_case));
    add_client_options(sub, &o->client);
    return [o]() -> int {
      review::Request r{"GET", "/api/v1/rounds/" + path_segment(o->round) + "/meetings/" + std::to_string(o->meeting) + "/minutes",
                        {{"format", o->format}}, "", "", "", false};
      auto local = [&](submissions::Store& s, const review::Actor& who) {
        return review::report_answer(review::meeting_minutes(s, who, o->round, o->meeting, o->format));
      };
      return send_and_print("review minutes", o->client, r, local, true, [](const mllog::Json&) {});
    };
  };
}

// ---- publish

SubSetup publish_setup() {
  return [](CLI::App& sub) -> std::function<int()> {
    struct Opts {
      ClientOptions client;
      std::string round, out, rules;
      bool json = false;
    };
    auto o = std::make_shared<Opts>();
    sub.add_option("--round", o->round, "round: training-3.1.0 or 3.1.0")->required();
    sub.add_option("--out", o->out, "the folder to write (new, empty, or an earlier publication, which is replaced)")->required();
    sub.add_option("--rules", o->rules, "the consortium's rule sets (mlperf_logging folder) that score the packages");
    add_answer_options(sub, &o->json, &o->client);
    return [o]() -> int {
      resolve_client_options(&o->client);
      if (!o->client.server.empty()) {
        std::cerr << "referee review publish: the publication is written on the store's machine: run it there with "
                     "--db (not --server)\n";
        return kCannotCheck;
      }
      review::PublishRequest in{o->round, o->out, o->rules};
      review::Request r{"POST", "/publish", {}, "", "", "", false};  // never sent: local only
      auto local = [&](submissions::Store& s, const review::Actor& who) {
        return review::publication_answer(review::publish_round(s, who, in), o->out);
      };
      return send_and_print("review publish", o->client, r, local, o->json, [](const mllog::Json& b) {
        int withdrawn = 0, normalised = 0, open = 0;
        if (const auto* rs = b.find("results"))
          for (const auto& x : rs->items) {
            const std::string st = jstr(x, "status");
            withdrawn += st == "withdrawn";
            normalised += st == "normalised";
            open += st == "moved-to-open";
            if (st != "as submitted")
              std::cout << "  " << jstr(x, "organisation") << "/" << jstr(x, "system") << "/" << jstr(x, "benchmark") << ": " << st
                        << (st == "normalised" ? " by " + text_of(x.find("factor")) : "")
                        << (jint(x, "decision") ? " (decision " + std::to_string(jint(x, "decision")) + ")" : "") << "\n";
          }
        std::cout << "published " << jstr(b, "round") << " to " << jstr(b, "out") << ": " << jint(b, "organisations")
                  << " organisation(s), " << jint(b, "files") << " file(s); " << normalised << " normalised, " << open
                  << " moved to open, " << withdrawn << " withdrawn (left out)\n"
                  << "  results.csv (the summarizer's columns), decisions.md, decisions.json\n";
      });
    };
  };
}

// ---- resubmission announce|list

SubSetup announce_setup() {
  return [](CLI::App& sub) -> std::function<int()> {
    struct Opts {
      ClientOptions client;
      std::string round, text, override_reason;
      std::vector<std::string> results;
      bool json = false;
    };
    auto o = std::make_shared<Opts>();
    sub.add_option("--round", o->round, "round: training-3.1.0 or 3.1.0")->required();
    sub.add_option("RESULT", o->results, "ORG/SYSTEM/BENCHMARK, one or more, your organisation's")->required();
    sub.add_option("--text", o->text, "which earlier logs are resubmitted, and why")->required();
    sub.add_option("--override", o->override_reason, "chairs: accept an announcement after the first meeting, with this reason");
    add_answer_options(sub, &o->json, &o->client);
    return [o]() -> int {
      review::AnnounceResubmission in;
      in.round = o->round;
      in.results = o->results;
      in.text = o->text;
      in.override_reason = o->override_reason;
      review::Request r{"POST", "/api/v1/rounds/" + path_segment(o->round) + "/announcements", {}, review::request_body(in),
                        "", "", false};
      auto local = [&](submissions::Store& s, const review::Actor& who) {
        return review::announced_answer(review::announce_resubmission(s, who, in));
      };
      return send_and_print("resubmission announce", o->client, r, local, o->json, [](const mllog::Json& b) {
        if (const auto* as = b.find("announcements"))
          for (const auto& a : as->items)
            std::cout << "announced " << jint(a, "id") << ": " << jstr(a, "result") << "\n";
        if (jstr(b, "late") == "true") std::cout << "late: accepted after the first meeting by a chair's override\n";
      });
    };
  };
}

void print_announcements(const mllog::Json& b) {
  Table t({"id", "result", "by", "at", "text"});
  if (const auto* as = b.find("announcements"))
    for (const auto& a : as->items)
      t.add({std::to_string(jint(a, "id")), jstr(a, "result"), jstr(a, "by"), jstr(a, "at"), jstr(a, "text")});
  t.print(std::cout);
}

// The typed operations behind the round requests (round_request).
review::Response assign(submissions::Store& s, const review::Actor& who, const std::string& round) {
  return review::assignment_answer(review::assign_pairings(s, who, review::AssignPairings{round}));
}

review::Response pairings(submissions::Store& s, const review::Actor& who, const std::string& round) {
  return review::pairings_answer(review::round_pairings(s, who, round));
}

review::Response announcements(submissions::Store& s, const review::Actor& who, const std::string& round) {
  return review::announcements_answer(review::round_announcements(s, who, round));
}

}  // namespace

Command review_command() {
  return {"review", "The peer review of a round: required reviews, the committee's report and the audit trail",
          [](CLI::App& sub) -> std::function<int()> {
            return command_group(sub, {
                {"assign", "Compute the required reviews of a round (idempotent)",
                 round_request("review assign", "POST", "/pairings", false, assign, print_assigned)},
                {"pairings", "The required reviews of a round and their status",
                 round_request("review pairings", "GET", "/pairings", false, pairings, print_pairings)},
                {"pairing", "Set a required review's status", pairing_setup()},
                {"report", "The committee's agenda and minutes (md, json, github)", report_setup()},
                {"log", "The review's audit trail, or --verify its hash chain", review_log_setup()},
                {"meeting", "Record a meeting of the committee (chairs)", meeting_setup()},
                {"meetings", "The committee's meetings of a round",
                 round_request("review meetings", "GET", "/meetings", false, list_meetings, print_meetings)},
                {"minutes", "The minutes of one meeting, from the store and the review log (md, json)", minutes_setup()},
                {"publish", "Write what is published at the end of the review: packages, results.csv, decisions", publish_setup()},
            });
          }};
}

Command resubmission_command() {
  return {"resubmission", "Announce resubmitted logs of an earlier round, and list the announcements",
          [](CLI::App& sub) -> std::function<int()> {
            return command_group(sub, {{"announce", "Announce your organisation's resubmitted results", announce_setup()},
                                       {"list", "The announcements of a round",
                                        round_request("resubmission list", "GET", "/announcements", false, announcements, print_announcements)}});
          }};
}

}  // namespace referee::cli
