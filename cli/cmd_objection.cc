// referee objection file|list|show|evidence|respond|comment|vote|decide|withdraw|extend|vote-deadline and
// referee review log: the core of the peer review, as a client of the API.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/review_cli.h"
#include "cli/review_output.h"
#include "mllog/json_writer.h"
#include "review/fixes.h"
#include "review/objection_codec.h"
#include "review/text_format.h"

namespace referee::cli {

namespace {

struct EvidenceFlags {
  std::vector<std::string> lines, figures, checks;
  std::vector<long long> findings;
  std::string note;
};

void add_evidence_flags(CLI::App* s, EvidenceFlags* e) {
  s->add_option("--lines", e->lines, "log lines of a stored run: ORG/SYSTEM/BENCHMARK:FILE:N[-M] (repeatable)");
  s->add_option("--figure", e->figures, "a figure: NAME=VALUE[:UNIT] (repeatable)");
  s->add_option("--check", e->checks, "a check's message (repeatable)");
  s->add_option("--evidence-finding", e->findings, "a finding of referee audit, its log lines quoted (repeatable)");
  s->add_option("--note", e->note, "a note on the evidence");
}

// The evidence items the flags name, or false after printing what is wrong with a flag.
bool evidence_items(const char* cmd, const EvidenceFlags& e, std::vector<review::EvidenceItem>* out) {
  using Kind = review::EvidenceItem::Kind;
  auto item = [&](Kind kind) {
    review::EvidenceItem i;
    i.kind = kind;
    i.note = e.note;
    return i;
  };
  for (long long f : e.findings) {
    auto i = item(Kind::Finding);
    i.finding = f;
    out->push_back(i);
  }
  for (const auto& l : e.lines) {
    size_t b = l.rfind(':'), a = b == std::string::npos || b == 0 ? std::string::npos : l.rfind(':', b - 1);
    if (a == std::string::npos) {
      std::cerr << "referee " << cmd << ": --lines " << l << " is not ORG/SYSTEM/BENCHMARK:FILE:N[-M]\n";
      return false;
    }
    auto i = item(Kind::Lines);
    i.result = l.substr(0, a);
    i.file = l.substr(a + 1, b - a - 1);
    i.lines = l.substr(b + 1);
    out->push_back(i);
  }
  for (const auto& f : e.figures) {
    size_t eq = f.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "referee " << cmd << ": --figure " << f << " is not NAME=VALUE[:UNIT]\n";
      return false;
    }
    std::string value = f.substr(eq + 1), unit;
    if (size_t colon = value.find(':'); colon != std::string::npos) {
      unit = value.substr(colon + 1);
      value = value.substr(0, colon);
    }
    char* end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end) {
      std::cerr << "referee " << cmd << ": --figure " << f << ": '" << value << "' is not a number\n";
      return false;
    }
    auto i = item(Kind::Figure);
    i.figure = f.substr(0, eq);
    i.value = v;
    i.unit = unit;
    out->push_back(i);
  }
  for (const auto& c : e.checks) {
    auto i = item(Kind::Check);
    i.check = c;
    out->push_back(i);
  }
  return true;
}

std::string opt_text(const mllog::Json& j, const char* k) { return text_of(j.find(k)); }

// A number of the answer as text: an integer as it is, a fraction rounded by
// `fmt` (review/text_format.h); the JSON (--json) keeps every digit.
std::string opt_num(const mllog::Json& j, const char* k, std::string (*fmt)(double)) {
  const mllog::Json* v = j.find(k);
  return v && v->kind == mllog::Json::Kind::Float ? fmt(v->f) : text_of(v);
}

// A text of several lines as one item of a list: every line after the first
// indented, so that nothing a party writes reads as another item or section.
std::string continued(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out += "      ";
  }
  return out;
}

void print_objection(const mllog::Json& b) {
  const mllog::Json* o = b.find("objection");
  if (!o) return;
  const mllog::Json& j = *o;
  std::cout << "objection " << opt_text(j, "id") << " (" << opt_text(j, "round") << ", " << opt_text(j, "state")
            << ", version " << opt_text(j, "version") << "): " << opt_text(j, "title") << "\n";
  std::cout << "  by " << opt_text(j, "by") << " (" << opt_text(j, "filed_by") << ") against " << opt_text(j, "against")
            << ", filed " << opt_text(j, "created_at") << "\n";
  std::cout << "  rule: " << opt_text(j, "rule") << "\n";
  if (const auto* r = j.find("results"))
    for (const auto& x : r->items) std::cout << "  result: " << x.s << "\n";
  if (!opt_text(j, "finding").empty()) std::cout << "  finding: " << opt_text(j, "finding") << "\n";
  if (const auto* im = j.find("impact")) {
    std::string m = opt_num(*im, "minutes", review::minutes_text);
    // The basis: kept with the objection (schema 7); the answer to a filing says it too.
    std::string basis = opt_text(*im, "basis");
    if (basis.empty())
      if (const auto* fb = b.find("impact_basis")) basis = fb->s;
    if (m.empty()) {
      std::cout << "  score impact: unknown";
      if (!basis.empty()) std::cout << " (" << basis << ")";
      std::cout << "\n";
    } else {
      std::cout << "  score impact: " << opt_num(*im, "score_minutes", review::minutes_text) << " min -> " << m << " min";
      std::string pct = opt_text(*im, "change_percent");
      if (!pct.empty())
        std::cout << " (" << (pct[0] == '-' ? "" : "+") << pct << "%, "
                  << (opt_text(*im, "under_waiver_threshold") == "true" ? "under" : "not under")
                  << " the 2% waiver threshold)";
      if (!basis.empty()) std::cout << "; " << basis;
      std::cout << "\n";
    }
    if (const auto* figs = im->find("figures"))
      for (const auto& g : figs->items) {
        std::string by = opt_text(g, "organisation");
        std::cout << "  impact figure given by " << (by.empty() ? std::string("a chair") : by)
                  << (opt_text(g, "accused") == "true" ? " (the accused)" : "") << ": "
                  << opt_num(g, "minutes", review::minutes_text) << " min";
        std::string gp = opt_text(g, "change_percent");
        if (!gp.empty()) std::cout << " (" << (gp[0] == '-' ? "" : "+") << gp << "%)";
        std::cout << "\n";
      }
  }
  if (const auto* d = j.find("deadlines")) {
    std::string line;
    for (const auto& [k, v] : d->fields)
      if (v.kind == mllog::Json::Kind::String) line += "  " + k + " " + v.s;
    if (!line.empty()) std::cout << "  deadlines:" << line << "\n";
  }
  if (const auto* xs = j.find("extensions"))
    for (const auto& x : xs->items)
      std::cout << "  extension: " << opt_text(x, "organisation") << " " << opt_text(x, "deadline") << " until "
                << opt_text(x, "until") << " (granted by " << opt_text(x, "granted_by") << ": " << opt_text(x, "reason")
                << ")\n";
  if (!opt_text(j, "text").empty()) std::cout << "\n" << opt_text(j, "text") << "\n";
  if (const auto* ev = j.find("evidence"); ev && !ev->items.empty()) {
    std::cout << "\nevidence:\n";
    for (const auto& e : ev->items) {
      std::string kind = opt_text(e, "kind");
      std::cout << "  [" << opt_text(e, "id") << "] " << kind;
      if (kind == "finding") std::cout << " " << opt_text(e, "finding");
      if (kind == "lines")
        std::cout << " " << opt_text(e, "result") << " " << opt_text(e, "file") << ":" << opt_text(e, "first_line") << "-"
                  << opt_text(e, "last_line");
      if (kind == "figure")
        std::cout << " " << opt_text(e, "figure") << " = " << opt_num(e, "value", opt_text(e, "unit") == "min" ? review::minutes_text : review::figure_text) << " " << opt_text(e, "unit");
      if (kind == "figure" && !opt_text(e, "impact_minutes").empty())
        std::cout << ", score if it holds " << opt_num(e, "impact_minutes", review::minutes_text) << " min";
      std::cout << " (by " << opt_text(e, "by") << ")";
      if (!opt_text(e, "note").empty()) std::cout << ": " << opt_text(e, "note");
      std::cout << "\n";
      std::string q = opt_text(e, "quoted");
      size_t i = 0;
      while (i < q.size()) {
        size_t n = q.find('\n', i);
        if (n == std::string::npos) n = q.size();
        std::cout << "      " << q.substr(i, n - i) << "\n";
        i = n + 1;
      }
    }
  }
  if (const auto* rs = j.find("responses"); rs && !rs->items.empty()) {
    std::cout << "\nresponses:\n";
    for (const auto& r : rs->items) {
      std::cout << "  [" << opt_text(r, "id") << "] " << opt_text(r, "organisation") << " (" << opt_text(r, "by") << ")";
      if (!opt_text(r, "remedy").empty()) std::cout << " proposes " << opt_text(r, "remedy");
      if (!opt_text(r, "factor").empty()) std::cout << " factor " << opt_num(r, "factor", review::factor_text);
      std::cout << ": " << continued(opt_text(r, "text")) << "\n";
    }
  }
  if (const auto* b = j.find("ballot"); b && b->kind == mllog::Json::Kind::Object) {
    const auto* el = b->find("eligible");
    const auto* nv = b->find("not_voted");
    std::string missing;
    if (nv)
      for (const auto& x : nv->items) missing += (missing.empty() ? "" : ", ") + x.s;
    std::cout << "\nballot: " << opt_text(*b, "voted") << " of " << (el ? el->items.size() : 0)
              << " organisations voted (" << opt_text(*b, "uphold") << " uphold, " << opt_text(*b, "reject") << " reject, "
              << opt_text(*b, "abstain") << " abstain)" << (missing.empty() ? "" : "; not yet: " + missing) << "\n"
              << "  standing: " << opt_text(*b, "standing") << "\n";
    if (!opt_text(*b, "votes_due").empty())
      std::cout << "  votes due: " << opt_text(*b, "votes_due")
                << (opt_text(*b, "votes_due_set_here") == "true" ? " (set on this objection)" : " (the round's decisions_due)") << "\n";
  }
  if (const auto* cs = j.find("comments"); cs && !cs->items.empty()) {
    std::cout << "\ndiscussion:\n";
    for (const auto& c : cs->items) {
      std::string org = opt_text(c, "organisation");
      std::cout << "  [" << opt_text(c, "id") << "] " << opt_text(c, "created_at") << " " << opt_text(c, "user")
                << (org.empty() ? "" : " (" + org + ")") << ": " << continued(opt_text(c, "text")) << "\n";
    }
  }
  if (const auto* vs = j.find("votes"); vs && !vs->items.empty()) {
    std::cout << "\nvotes:\n";
    for (const auto& v : vs->items) {
      std::cout << "  " << opt_text(v, "organisation") << ": " << opt_text(v, "vote");
      if (!opt_text(v, "remedy").empty()) {
        std::cout << " (" << opt_text(v, "remedy");
        // The factor voted for decides what a normalisation carries (carried_remedy): shown as the minutes show it.
        if (!opt_text(v, "factor").empty()) std::cout << " factor " << opt_num(v, "factor", review::factor_text);
        std::cout << ")";
      }
      std::cout << "\n";
    }
  }
  // A fix decision: due by when, or the replacements that delivered it and what each changed.
  auto print_fix = [](const mllog::Json& fx) {
    const std::string state = opt_text(fx, "state"), due = opt_text(fx, "due");
    if (state == "delivered") std::cout << "  fix delivered" << (due.empty() ? "" : " (it was due by " + due + ")");
    else if (state == "overdue") std::cout << "  fix overdue: it was due " << due;
    else std::cout << "  fix due " << (due.empty() ? "(no date set)" : "by " + due);
    std::cout << "\n";
    if (const auto* ds = fx.find("deliveries"))
      for (const auto& x : ds->items) {
        std::cout << "  corrected package " << opt_text(x, "new_sha256").substr(0, 12) << " (was "
                  << opt_text(x, "old_sha256").substr(0, 12) << ") imported " << opt_text(x, "at") << ", event "
                  << opt_text(x, "event") << ":\n";
        if (const auto* cs = x.find("changes"))
          for (const auto& c : cs->items) std::cout << "    " << review::result_change_text(c) << "\n";
      }
  };
  if (const auto* d = j.find("decision"); d && d->kind == mllog::Json::Kind::Object) {
    std::cout << "\ndecision " << opt_text(*d, "id") << ": " << opt_text(*d, "outcome") << ", remedy "
              << opt_text(*d, "remedy");
    if (!opt_text(*d, "factor").empty()) std::cout << " factor " << opt_num(*d, "factor", review::factor_text);
    if (const auto* v = d->find("votes"))
      std::cout << " (votes " << opt_text(*v, "uphold") << " uphold, " << opt_text(*v, "reject") << " reject, "
                << opt_text(*v, "abstain") << " abstain; " << opt_text(*d, "majority") << ")";
    std::cout << " by " << opt_text(*d, "decided_by") << "\n";
    if (!opt_text(*d, "text").empty()) std::cout << "  " << opt_text(*d, "text") << "\n";
    if (const auto* fx = d->find("fix"); fx && fx->kind == mllog::Json::Kind::Object) print_fix(*fx);
  }
  if (const auto* wd = j.find("withdrawal"); wd && wd->kind == mllog::Json::Kind::Object) {
    std::cout << "\nwithdrawn by " << opt_text(*wd, "by") << " at " << opt_text(*wd, "at");
    if (!opt_text(*wd, "text").empty()) std::cout << ": " << opt_text(*wd, "text");
    std::cout << "\n";
  }
  if (const auto* ss = j.find("superseded"); ss && !ss->items.empty()) {
    std::cout << "\nsuperseded decisions:\n";
    for (const auto& x : ss->items) {
      const mllog::Json* d = x.find("decision");
      if (!d) continue;
      std::cout << "  " << opt_text(*d, "outcome") << ", remedy " << opt_text(*d, "remedy");
      if (!opt_text(*d, "factor").empty()) std::cout << " factor " << opt_text(*d, "factor");
      std::cout << " by " << opt_text(*d, "decided_by") << " at " << opt_text(*d, "created_at") << "; amended by "
                << opt_text(x, "amended_by") << " at " << opt_text(x, "amended_at") << ": " << opt_text(x, "reason")
                << "\n";
    }
  }
}

}  // namespace

// --factor: a finite number above 0 and at most 100, checked before anything
// is sent (nan, inf and 1e400 are flag errors, exit 2).
const CLI::Validator kFactor(
    [](std::string& text) -> std::string {
      char* end = nullptr;
      errno = 0;
      double v = std::strtod(text.c_str(), &end);
      if (text.empty() || *end || errno == ERANGE || !std::isfinite(v) || !(v > 0) || v > 100)
        return "factor '" + text + "' is not a finite number above 0 and at most 100";
      return "";
    },
    "FACTOR in (0, 100]", "factor");

Command objection_command() {
  return {"objection", "Objections of the peer review: file, list, show, evidence, respond, comment, vote, decide, withdraw, extend, vote-deadline",
          [](CLI::App& sub) -> std::function<int()> {
            struct Opts {
              ClientOptions client;
              bool json = false;
              long long id = 0;
              std::string round, against, title, rule, text, override_reason, state, by, remedy, vote, tie_break, fix_due;
              std::vector<std::string> results, drop_runs;
              long long from_finding = 0;
              double factor = 0;
              long long version = 0;
              bool waive = false, amend = false;
              std::string reason, organisation, deadline, until;
              EvidenceFlags ev;
            };
            auto o = std::make_shared<Opts>();
            sub.require_subcommand(1);
            auto* file = sub.add_subcommand("file", "file an objection against another organisation's results");
            file->add_option("--round", o->round, "the round, e.g. 3.1.0");
            file->add_option("--against", o->against, "the organisation objected to");
            file->add_option("--result", o->results, "ORG/SYSTEM/BENCHMARK (repeatable)");
            file->add_option("--title", o->title, "one line");
            file->add_option("--rule", o->rule, "rule file and key, or policy section");
            file->add_option("--text", o->text, "the objection's text");
            file->add_option("--from-finding", o->from_finding,
                             "fill round, against, result, rule, title and evidence from a finding of referee audit");
            file->add_option("--drop-run", o->drop_runs, "a run that would not count if the objection holds (repeatable)");
            add_evidence_flags(file, &o->ev);
            auto* list = sub.add_subcommand("list", "list objections");
            list->add_option("--round", o->round, "only this round");
            list->add_option("--state", o->state, "open | responded | decided | withdrawn");
            list->add_option("--by", o->by, "filed by this organisation");
            list->add_option("--against", o->against, "against this organisation");
            auto* show = sub.add_subcommand("show", "an objection with its evidence, responses, votes and decision");
            auto* evidence = sub.add_subcommand("evidence", "add evidence to an objection");
            add_evidence_flags(evidence, &o->ev);
            auto* respond = sub.add_subcommand("respond", "respond for the accused organisation");
            respond->add_option("--text", o->text, "the response")->required();
            respond->add_option("--remedy", o->remedy, "proposed remedy: none | fix | open | withdraw | normalise");
            respond->add_option("--factor", o->factor, "normalise: the proposed factor")->check(kFactor);
            auto* comment = sub.add_subcommand(
                "comment", "add to the objection's discussion (the objecting and accused organisations, the chairs)");
            comment->add_option("--text", o->text, "the comment")->required();
            auto* vote = sub.add_subcommand("vote", "vote for your organisation (a later vote replaces it)");
            vote->add_option("--vote", o->vote, "uphold | reject | abstain")->required();
            vote->add_option("--remedy", o->remedy, "remedy voted for: none | fix | open | withdraw | normalise");
            vote->add_option("--factor", o->factor, "normalise: the factor voted for")->check(kFactor);
            auto* decide = sub.add_subcommand("decide", "record the committee's decision (review chair)");
            decide->add_option("--remedy", o->remedy, "none | fix | open | withdraw | normalise");
            decide->add_option("--factor", o->factor, "normalise: the factor, 1 to 100")->check(kFactor);
            decide->add_option("--tie-break", o->tie_break, "uphold | reject: the chair's vote on a tie");
            decide->add_option("--fix-due", o->fix_due,
                               "remedy fix: when the corrected package is due (default: the round's scores_final)");
            decide->add_flag("--waive", o->waive, "waive: the score impact is under 2%");
            decide->add_option("--text", o->text, "the minutes");
            decide->add_flag("--amend", o->amend, "amend the recorded decision (the old one stays, superseded)");
            decide->add_option("--reason", o->reason, "--amend: why the decision is amended");
            auto* withdraw = sub.add_subcommand("withdraw", "withdraw an objection (the objecting organisation)");
            withdraw->add_option("--text", o->text, "why");
            auto* extend = sub.add_subcommand(
                "extend", "give one organisation more time on this objection (a review chair of neither party)");
            extend->add_option("--org", o->organisation, "the organisation given more time")->required();
            extend->add_option("--deadline", o->deadline, "objections_due | responses_due | decisions_due")
                ->required()
                ->check(CLI::IsMember({"objections_due", "responses_due", "decisions_due"}));
            extend->add_option("--until", o->until, "the new time: 2026-05-20 (end of that day, UTC) or 2026-05-20T17:00Z")
                ->required();
            extend->add_option("--reason", o->reason, "why (recorded, shown with the objection)")->required();
            auto* vote_deadline = sub.add_subcommand(
                "vote-deadline", "set when the votes on this objection are due (a review chair of neither party)");
            vote_deadline->add_option("--until", o->until, "the time: 2026-05-20 (end of that day, UTC) or 2026-05-20T17:00Z")
                ->required();
            vote_deadline->add_option("--reason", o->reason, "why (recorded, shown with the objection)")->required();
            for (auto* s : {show, evidence, respond, comment, vote, decide, withdraw, extend, vote_deadline})
              s->add_option("ID", o->id, "objection number")->required()->check(count_at_least(1));
            for (auto* s : {evidence, respond, comment, vote, decide, withdraw, extend, vote_deadline})
              s->add_option("--version", o->version, "the version you read: refused (409) if it changed since")
                  ->check(count_at_least(1));
            for (auto* s : {file, evidence, respond, vote, decide, withdraw, extend, vote_deadline})
              s->add_option("--override", o->override_reason, "review chair: act after the deadline, for this reason");
            for (auto* s : {file, list, show, evidence, respond, comment, vote, decide, withdraw, extend, vote_deadline}) {
              add_client_options(*s, &o->client);
              s->add_flag("--json", o->json, "print the answer as JSON");
            }
            return [o, file, list, show, evidence, respond, comment, vote, decide, withdraw, extend, vote_deadline]() -> int {
              // The flags as the typed operation (review/objections.h): run on the local store, or
              // sent to --server as the request body made from the same value.
              namespace rv = review;
              const std::string path = "/api/v1/objections/" + std::to_string(o->id);
              auto change = [&](rv::ObjectionChange* c) {
                c->objection = o->id;
                c->version = {o->version > 0, o->version};
                c->override_reason = o->override_reason;
              };
              auto run = [&](const char* cmd, const std::string& method, const std::string& where, std::string body,
                             const LocalCall& local) {
                review::Request r;
                r.method = method;
                r.path = where;
                r.body = std::move(body);
                return send_and_print(cmd, o->client, r, local, o->json, print_objection);
              };
              // A write: its typed value run locally, or its request body sent.
              auto send = [&](const char* cmd, const std::string& where, const auto& in, auto op, int status) {
                return run(cmd, "POST", where, rv::request_body(in), [&](submissions::Store& s, const rv::Actor& who) {
                  return rv::objection_answer(s, who, op(s, who, in), status);
                });
              };
              // A change that names a remedy (respond, vote, decide).
              auto remedied = [&](auto in) {
                change(&in);
                in.remedy = o->remedy;
                in.has_factor = o->factor != 0;
                in.factor = o->factor;
                return in;
              };
              if (file->parsed()) {
                rv::FileObjection in;
                in.round = o->round;
                in.against = o->against;
                in.title = o->title;
                in.rule = o->rule;
                in.text = o->text;
                in.results = o->results;
                in.drop_runs = o->drop_runs;
                in.has_finding = o->from_finding > 0;
                in.finding = o->from_finding;
                in.override_reason = o->override_reason;
                if (!evidence_items("objection file", o->ev, &in.evidence)) return kCannotCheck;
                return send("objection file", "/api/v1/objections", in, rv::file_objection, 201);
              }
              if (list->parsed()) {
                rv::ObjectionFilter f{o->round, o->state, o->by, o->against};
                review::Request r;
                r.method = "GET";
                r.path = "/api/v1/objections";
                for (auto [k, v] : {std::pair<const char*, std::string>{"round", f.round}, {"state", f.state},
                                    {"by", f.by}, {"against", f.against}})
                  if (!v.empty()) r.query.emplace_back(k, v);
                auto local = [&](submissions::Store& s, const rv::Actor& who) {
                  return rv::read_answer(rv::objections_json(s, who, f));
                };
                return send_and_print("objection list", o->client, r, local, o->json, [](const mllog::Json& b) {
                  const auto* list = listed(b, "objections", "no objections");
                  if (!list) return;
                  for (const auto& j : list->items) {
                    std::cout << "#" << opt_text(j, "id") << "  " << opt_text(j, "round") << "  " << opt_text(j, "by")
                              << " -> " << opt_text(j, "against") << "  " << opt_text(j, "state") << "  v"
                              << opt_text(j, "version") << "  " << opt_text(j, "title") << "\n";
                  }
                });
              }
              if (show->parsed())
                return run("objection show", "GET", path, "", [&](submissions::Store& s, const rv::Actor& who) {
                  return rv::read_answer(rv::objection_json(s, who, o->id));
                });
              if (evidence->parsed()) {
                rv::AddEvidence in;
                change(&in);
                if (!evidence_items("objection evidence", o->ev, &in.evidence)) return kCannotCheck;
                if (in.evidence.empty()) {  // a --note alone names nothing
                  std::cerr << "referee objection evidence: no evidence given: name it with --lines, --figure, --check "
                               "or --evidence-finding (--note goes with one of them)\n";
                  return kCannotCheck;
                }
                return send("objection evidence", path + "/evidence", in, rv::add_evidence, 201);
              }
              if (respond->parsed()) {
                auto in = remedied(rv::Respond{});
                in.text = o->text;
                return send("objection respond", path + "/responses", in, rv::respond, 201);
              }
              if (comment->parsed()) {
                rv::Comment in;
                change(&in);
                in.text = o->text;
                return send("objection comment", path + "/comments", in, rv::comment, 201);
              }
              if (vote->parsed()) {
                auto in = remedied(rv::CastVote{});
                in.vote = o->vote;
                return send("objection vote", path + "/votes", in, rv::vote, 201);
              }
              if (decide->parsed()) {
                auto in = remedied(rv::Decide{});
                in.tie_break = o->tie_break;
                in.fix_due = o->fix_due;
                in.waive = o->waive;
                in.amend = o->amend;
                in.reason = o->reason;
                in.text = o->text;
                return send("objection decide", path + "/decision", in, rv::decide, 201);
              }
              if (extend->parsed()) {
                rv::Extend in;
                change(&in);
                in.organisation = o->organisation;
                in.deadline = o->deadline;
                in.until = o->until;
                in.reason = o->reason;
                return send("objection extend", path + "/extensions", in, rv::extend, 201);
              }
              if (vote_deadline->parsed()) {
                rv::SetVoteDeadline in;
                change(&in);
                in.until = o->until;
                in.reason = o->reason;
                return send("objection vote-deadline", path + "/vote-deadline", in, rv::set_vote_deadline, 200);
              }
              rv::Withdraw in;
              change(&in);
              in.text = o->text;
              (void)withdraw;
              return send("objection withdraw", path + "/withdraw", in, rv::withdraw, 200);
            };
          }};
}

review_cli::SubSetup review_log_setup() {
  return [](CLI::App& log) -> std::function<int()> {
            struct Opts {
              ClientOptions client;
              std::string round, subject, head;
              bool verify = false, json = false;
            };
            auto o = std::make_shared<Opts>();
            log.add_option("--round", o->round, "only events of this round");
            log.add_option("--subject", o->subject, "only events whose subject starts with this (objection/12)");
            log.add_flag("--verify", o->verify, "check the chain: exit 1 naming the first bad event when it is broken");
            log.add_option("--head", o->head,
                           "with --verify: a head printed by an earlier verify (SEQ:HASH or HASH) that the log must "
                           "still contain");
            log.add_flag("--json", o->json, "print the answer as JSON");
            add_client_options(log, &o->client);
            return [o]() -> int {
              review::Request r;
              r.method = "GET";
              if (!o->head.empty() && !o->verify) {
                std::cerr << "referee review log: --head is checked by --verify; add --verify\n";
                return kCannotCheck;
              }
              if (o->verify) {
                r.path = "/api/v1/log/verify";
                if (!o->head.empty()) r.query.emplace_back("head", o->head);
                bool broken = false;
                // Rendered as text, or printed as JSON: the verdict decides the exit code either way.
                int rc = send_and_print("review log", o->client, r, false, [&](const mllog::Json& b) {
                  broken = text_of(b.find("ok")) != "true";
                  if (o->json) {
                    mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
                    w.begin_object().key("ok").value(!broken).key("events").raw(text_of(b.find("events")));
                    std::string head_seq = text_of(b.find("head_seq"));  // none for a member
                    w.key("head_seq");
                    if (head_seq.empty()) w.null(); else w.raw(head_seq);
                    std::string head_hash = text_of(b.find("head_hash"));
                    w.key("head_hash");
                    if (head_hash.empty()) w.null(); else w.value(head_hash);
                    std::string first_bad = text_of(b.find("first_bad"));
                    w.key("first_bad");
                    if (broken && !first_bad.empty()) w.raw(first_bad); else w.null();
                    w.key("problem");
                    if (broken) w.value(text_of(b.find("problem"))); else w.null();
                    std::cout << w.end_object().str() << "\n";
                  } else if (!broken) {
                    // A member's head is the hash alone (no sequence number: it would count hidden rounds' events).
                    std::string seq = text_of(b.find("head_seq"));
                    std::cout << "the review log verifies: " << text_of(b.find("events"))
                              << " events, chain intact, tables agree with it; head " << (seq.empty() ? "" : seq + ":")
                              << text_of(b.find("head_hash"))
                              << " (record it elsewhere and check it later with --head)\n";
                  } else if (text_of(b.find("first_bad")).empty()) {
                    std::cout << "the review log does not verify: " << text_of(b.find("problem")) << "\n";
                  } else {
                    std::cout << "the review log is broken at event " << text_of(b.find("first_bad")) << ": "
                              << text_of(b.find("problem")) << "\n";
                  }
                });
                return rc != kPass ? rc : broken ? kFail : kPass;
              }
              r.path = "/api/v1/log";
              if (!o->round.empty()) r.query.emplace_back("round", o->round);
              if (!o->subject.empty()) r.query.emplace_back("subject", o->subject);
              return send_and_print("review log", o->client, r, o->json, [](const mllog::Json& b) {
                const auto* ev = listed(b, "events", "no events");
                if (!ev) return;
                for (const auto& e : ev->items) {
                  std::string org = text_of(e.find("organisation"));
                  // A member's events carry no sequence number: the hash's first digits name them.
                  std::string seq = text_of(e.find("seq"));
                  if (seq.empty()) seq = text_of(e.find("hash")).substr(0, 12);
                  std::cout << seq << "  " << text_of(e.find("at")) << "  " << text_of(e.find("actor"))
                            << " (" << (org.empty() ? "" : org + ", ") << text_of(e.find("role")) << ")  "
                            << text_of(e.find("action")) << "  " << text_of(e.find("subject")) << "\n";
                }
              });
            };
  };
}

}  // namespace referee::cli
