// referee review assign|pairings|pairing|report and referee resubmission
// announce|list, through the review API (docs/review.md, "Rounds, pairings
// and the report"). Each subcommand is its own function so that the group
// can take more (review log lives with the audit trail's commands).
#include <iostream>

#include "cli/commands.h"
#include "cli/review_output.h"
#include "cli/review_cli.h"
#include "cli/table.h"
#include "mllog/json_writer.h"

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
    sub.add_option("--version", o->version, "the version you read: a stale one is refused");
    add_answer_options(sub, &o->json, &o->client);
    return [o]() -> int {
      mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
      w.begin_object().key("status").value(o->status);
      if (o->version >= 0) w.key("version").value(o->version);
      w.end_object();
      review::Request r{"PATCH", "/api/v1/pairings/" + std::to_string(o->id), {}, w.str(), "", "", false};
      return send_and_print("review pairing", o->client, r, o->json, [](const mllog::Json& p) {
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
      return send_and_print("review report", o->client, r, true, [](const mllog::Json&) {});
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
      mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
      w.begin_object().key("results").begin_array();
      for (const auto& x : o->results) w.value(x);
      w.end_array().key("text").value(o->text);
      if (!o->override_reason.empty()) w.key("override").value(o->override_reason);
      w.end_object();
      review::Request r{"POST", "/api/v1/rounds/" + path_segment(o->round) + "/announcements", {}, w.str(), "", "", false};
      return send_and_print("resubmission announce", o->client, r, o->json, [](const mllog::Json& b) {
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

}  // namespace

Command review_command() {
  return {"review", "The peer review of a round: required reviews, the committee's report and the audit trail",
          [](CLI::App& sub) -> std::function<int()> {
            return command_group(sub, {
                {"assign", "Compute the required reviews of a round (idempotent)",
                 round_request("review assign", "POST", "/pairings", false, print_assigned)},
                {"pairings", "The required reviews of a round and their status",
                 round_request("review pairings", "GET", "/pairings", false, print_pairings)},
                {"pairing", "Set a required review's status", pairing_setup()},
                {"report", "The committee's agenda and minutes (md, json, github)", report_setup()},
                {"log", "The review's audit trail, or --verify its hash chain", review_log_setup()},
            });
          }};
}

Command resubmission_command() {
  return {"resubmission", "Announce resubmitted logs of an earlier round, and list the announcements",
          [](CLI::App& sub) -> std::function<int()> {
            return command_group(sub, {{"announce", "Announce your organisation's resubmitted results", announce_setup()},
                                       {"list", "The announcements of a round",
                                        round_request("resubmission list", "GET", "/announcements", false, print_announcements)}});
          }};
}

}  // namespace referee::cli
