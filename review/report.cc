#include "review/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/invisible.h"
#include "base/text.h"
#include "mllog/json.h"
#include "mllog/json_writer.h"
#include "review/events.h"
#include "review/fixes.h"
#include "review/objections.h"
#include "review/policy.h"
#include "review/text_format.h"

namespace referee::review {

using submissions::Stmt;

namespace {

const char* kResultName =
    "(SELECT o.name || '/' || s.name || '/' || x.benchmark FROM results x JOIN systems s ON s.id = x.system_id "
    "JOIN packages p ON p.id = s.package_id JOIN organisations o ON o.id = p.organisation_id WHERE x.id = ";

// Minutes (4 decimals) and percentages; factors and figures: review/text_format.h.
std::string num(double v, int digits = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Text a member wrote, made to stay one inline run of Markdown that shows
// what was written and does nothing else: line breaks and other control
// characters become spaces (no new heading, rule, list item or issue block
// can start), raw HTML is escaped, a table's `|` is escaped, and the
// invisible characters that reorder or hide text (bidi controls, zero-width
// characters, a byte-order mark) are shown as [U+XXXX]. `markdown` false:
// for plain text (an issue's title), the same without the Markdown escapes.
std::string md_inline(const std::string& s, bool markdown = true) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      out += ' ';
    } else if (!markdown && (c == '<' || c == '>' || c == '&' || c == '|')) {
      out += static_cast<char>(c);
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else if (c == '|') {
      out += "\\|";
    } else if (size_t len = 0; unsigned cp = base::invisible_at(s, i, &len)) {
      out += base::shown_code_point(cp);
      i += len - 1;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// md_inline, cut to `n` bytes of the text.
std::string shorten(const std::string& s, size_t n = 300) { return md_inline(base::excerpt(s, n)); }

// A member's text of several lines as a Markdown quote: every line starts
// with "> ", so none of it can open a block of its own.
std::string md_quote(const std::string& s) {
  std::string out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t nl = s.find('\n', start);
    if (nl == std::string::npos) nl = s.size();
    out += "> " + md_inline(s.substr(start, nl - start)) + "\n";
    start = nl + 1;
  }
  return out;
}

bool failed(submissions::Store& s, const Stmt& q, const char* what, std::string* error) {
  if (q.ok()) return false;
  *error = s.describe_error(q.rc(), what);
  return true;
}

}  // namespace

bool load_report(submissions::Store& s, long long round_id, ReportRound* out, std::string* error) {
  {
    Stmt q(s.db(),
           "SELECT j.id, a.name, b.name, u.name, j.title, j.rule, j.text, j.state, j.impact_minutes, j.created_at "
           "FROM objections j JOIN organisations a ON a.id = j.by_org JOIN organisations b ON b.id = j.against_org "
           "LEFT JOIN users u ON u.id = j.filed_by WHERE j.round_id = ?1 ORDER BY j.id");
    q.bind(1, round_id);
    while (q.step()) {
      ReportObjection o;
      q.row(o.id, o.by, o.against, o.filed_by, o.title, o.rule, o.text, o.state,
            Stmt::maybe(o.has_impact, o.impact_minutes), o.created_at);
      out->objections.push_back(std::move(o));
    }
    if (failed(s, q, "reading objections", error)) return false;
  }
  for (auto& o : out->objections) {
    {
      std::string sql = std::string("SELECT ") + kResultName +
                        "r.result_id), (SELECT score_minutes FROM results WHERE id = r.result_id) "
                        "FROM objection_results r WHERE r.objection_id = ?1 ORDER BY 1";
      Stmt q(s.db(), sql.c_str());
      q.bind(1, o.id);
      while (q.step()) o.results.push_back({q.col_text(0), !q.col_null(1), q.col_double(1)});
      if (failed(s, q, "reading objection results", error)) return false;
    }
    {
      std::string sql = std::string(
                            "SELECT e.kind, e.finding_id, COALESCE(r.file, ''), e.first_line, e.last_line, "
                            "COALESCE(e.quoted, ''), COALESCE(e.figure_name, ''), e.figure_value, "
                            "COALESCE(e.figure_unit, ''), COALESCE(e.note, ''), COALESCE(") +
                        kResultName + "r.result_id), '') FROM evidence e LEFT JOIN runs r ON r.id = e.run_id WHERE "
                        "e.objection_id = ?1 ORDER BY e.id";
      Stmt q(s.db(), sql.c_str());
      q.bind(1, o.id);
      while (q.step()) {
        ReportObjection::Evidence e;
        e.kind = q.col_text(0);
        if (e.kind == "finding") {
          e.summary = std::to_string(q.col_int(1));
        } else if (e.kind == "lines") {
          // The log named with its result: ORG/SYSTEM/BENCHMARK:file lines a-b.
          e.summary = (q.col_text(10).empty() ? "" : q.col_text(10) + ":") + q.col_text(2);
          if (!q.col_null(3))
            e.summary += " lines " + std::to_string(q.col_int(3)) + (q.col_null(4) ? "" : "-" + std::to_string(q.col_int(4)));
        } else if (e.kind == "figure") {
          e.summary = q.col_text(6) + " = " + (q.col_null(7) ? std::string("?") : figure_unit_text(q.col_double(7), q.col_text(8))) +
                      (q.col_text(8).empty() ? "" : " " + q.col_text(8));
        }  // a check: its text is the quote below
        if (!q.col_text(9).empty()) e.summary += (e.summary.empty() ? "(" : " (") + shorten(q.col_text(9), 200) + ")";
        if (e.kind != "figure") e.quoted = q.col_text(5);
        o.evidence.push_back(std::move(e));
      }
      if (failed(s, q, "reading evidence", error)) return false;
    }
    {
      std::string err;
      for (auto& r : read_opinions(s, o.id, false, &err))
        o.responses.push_back({r.organisation, r.user, r.said, r.remedy, r.at, r.has_factor, r.factor});
      if (!err.empty()) return *error = err, false;
      for (auto& r : read_opinions(s, o.id, true, &err))
        o.votes.push_back({r.organisation, r.user, r.said, r.remedy, r.at, r.has_factor, r.factor});
      if (!err.empty()) return *error = err, false;
      for (auto& c : read_comments(s, o.id, &err))
        o.comments.push_back({c.organisation, c.has_user ? c.user : "local-admin", c.text, "", c.at, false, 0});
      if (!err.empty()) return *error = err, false;
    }
    {
      std::string err;
      DecisionRecord d;
      if (read_decision(s, o.id, &d, &err)) {
        o.decided = true;
        o.decision_id = d.id;
        o.outcome = d.outcome;
        o.remedy = d.remedy;
        o.has_factor = d.has_factor;
        o.factor = d.factor;
        o.uphold = d.uphold;
        o.reject = d.reject;
        o.abstain = d.abstain;
        o.majority = d.majority;
        o.decided_by = d.decided_by;
        o.decision_text = d.text;
        o.decided_at = d.at;
        if (d.outcome == "upheld" && d.remedy == "fix") {
          const auto deliveries = read_fix_deliveries(s, o.id, &err);
          if (!err.empty()) return *error = err, false;
          o.fix_state = fix_state(deliveries, d.fix_due, now_utc(), accused_package_sha256(s, o.id));
          o.fix_due = d.fix_due;
          for (const auto& f : deliveries) {
            mllog::Json j;
            std::string perr;
            if (!mllog::parse_json_permissive(f.changes_json, &j, &perr)) continue;
            for (const auto& c : j.items)
              o.fix_changes.push_back("package " + f.new_sha256.substr(0, 12) + " (" + f.at + "): " + result_change_text(c));
          }
        }
      }
      if (!err.empty()) return *error = err, false;
    }
    // Overrides: events on this objection whose payload carries "override".
    std::string err;
    std::string prefix = "objection/" + std::to_string(o.id);
    for (const auto& e : read_events(s, prefix, &err)) {
      if (e.subject != prefix && e.subject.rfind(prefix + "/", 0) != 0) continue;  // objection/1 is not objection/12
      mllog::Json p;
      std::string perr;
      if (!mllog::parse_json_permissive(e.payload_json, &p, &perr)) continue;
      auto text = [](const mllog::Json* v) {
        if (!v) return std::string();
        if (v->kind == mllog::Json::Kind::String) return v->s;
        if (v->kind == mllog::Json::Kind::Float) return num(v->f);
        if (v->kind == mllog::Json::Kind::Int) return std::to_string(v->i);
        return std::string();
      };
      if (e.subject == prefix && e.action == "objection.withdraw") {
        o.withdrawn = true;
        o.withdrawn_by = e.actor;
        o.withdrawn_at = e.at;
        o.withdrawal_text = text(p.find("text"));
      }
      if (e.subject == prefix && e.action == "decision.amend") {
        if (const mllog::Json* b = p.find("before")) {
          std::string line = text(b->find("outcome")) + ", remedy " + text(b->find("remedy"));
          if (!text(b->find("factor")).empty()) line += " (factor " + text(b->find("factor")) + ")";
          line += ", recorded by " + text(b->find("decided_by")) + " at " + text(b->find("created_at")) +
                  "; amended by " + e.actor + " at " + e.at + ": " + text(p.find("reason"));
          o.superseded.push_back(line);
        }
      }
      if (e.subject == prefix && e.action == "objection.extend")
        o.extensions.push_back({e.seq, text(p.find("organisation")), text(p.find("deadline")), text(p.find("until")),
                                text(p.find("round_deadline")), e.actor, e.at, text(p.find("reason"))});
      const mllog::Json* ov = p.find("override");
      if (!ov || ov->kind != mllog::Json::Kind::String || ov->s.empty()) continue;
      o.overrides.push_back({e.seq, e.action, e.actor, e.at, ov->s, text(p.find("overridden_deadline"))});
    }
    if (!err.empty()) {
      *error = err;
      return false;
    }
  }
  {
    std::string sql = std::string("SELECT ") + kResultName +
                      "t.result_id), t.status, t.factor, COALESCE(t.objection_id, 0), COALESCE(t.decision_id, 0) "
                      "FROM result_status t JOIN results x ON x.id = t.result_id JOIN systems s ON s.id = x.system_id "
                      "JOIN packages p ON p.id = s.package_id WHERE p.round_id = ?1 ORDER BY 1";
    Stmt q(s.db(), sql.c_str());
    q.bind(1, round_id);
    while (q.step())
      out->statuses.push_back({q.col_text(0), q.col_text(1), !q.col_null(2), q.col_double(2), q.col_int(3), q.col_int(4)});
    if (failed(s, q, "reading result statuses", error)) return false;
  }
  return true;
}

// ------------------------------------------------------------ JSON

namespace {

// Whether a later grant for the same organisation and deadline replaced extension i.
bool extension_replaced(const ReportObjection& o, size_t i) {
  for (size_t k = i + 1; k < o.extensions.size(); ++k)
    if (o.extensions[k].organisation == o.extensions[i].organisation && o.extensions[k].deadline == o.extensions[i].deadline)
      return true;
  return false;
}

// A response or a vote: who, what was said (as `said_key`), the remedy and factor, when.
template <typename Opinion>
void opinion_json(mllog::JsonWriter& w, const Opinion& x, const char* said_key, const std::string& said) {
  w.begin_object().key("organisation").value(x.organisation).key("by").value(x.user).key(said_key).value(said);
  w.key("remedy").value(x.remedy);
  if (x.has_factor) w.key("factor").value(x.factor);
  w.key("at").value(x.at).end_object();
}

}  // namespace

std::string report_json(const ReportRound& r) {
  mllog::JsonWriter w(1, mllog::JsonText::kUtf8);
  w.begin_object().key("schema").value("referee.review-report/1").key("round").value(r.name);
  w.key("state").value(r.state).key("review").value(r.has_review).key("version").value(r.version);
  w.key("schedule").begin_object();
  for (const auto& [k, v] : r.schedule) {
    if (v.empty()) w.key(k).null(); else w.key(k).value(v);
  }
  w.end_object().key("pairings").begin_array();
  for (const auto& p : r.pairings)
    w.begin_object().key("id").value(p.id).key("reviewer").value(p.reviewer).key("reviewed").value(p.reviewed)
        .key("reason").value(p.reason).key("status").value(p.status).end_object();
  w.end_array().key("announcements").begin_array();
  for (const auto& a : r.announcements)
    w.begin_object().key("id").value(a.id).key("organisation").value(a.organisation).key("result").value(a.result)
        .key("text").value(a.text).key("by").value(a.user).key("at").value(a.at).end_object();
  w.end_array().key("objections").begin_array();
  for (const auto& o : r.objections) {
    w.begin_object().key("id").value(o.id).key("by").value(o.by).key("against").value(o.against);
    w.key("filed_by").value(o.filed_by).key("title").value(o.title).key("rule").value(o.rule).key("text").value(o.text);
    w.key("state").value(o.state).key("filed_at").value(o.created_at);
    if (o.has_impact) w.key("impact_minutes").value(o.impact_minutes); else w.key("impact_minutes").null();
    w.key("results").begin_array();
    for (const auto& x : o.results) {
      w.begin_object().key("result").value(x.name);
      if (x.has_score) w.key("score_minutes").value(x.score); else w.key("score_minutes").null();
      if (o.has_impact && x.has_score && x.score > 0) w.key("impact_fraction").value(o.impact_minutes / x.score - 1);
      w.end_object();
    }
    w.end_array().key("evidence").begin_array();
    for (const auto& e : o.evidence)
      w.begin_object().key("kind").value(e.kind).key("summary").value(e.summary).key("quoted").value(e.quoted).end_object();
    w.end_array().key("responses").begin_array();
    for (const auto& x : o.responses) opinion_json(w, x, "text", x.text);
    w.end_array().key("comments").begin_array();
    for (const auto& x : o.comments) {
      w.begin_object().key("organisation");
      if (x.organisation.empty()) w.null(); else w.value(x.organisation);
      w.key("user").value(x.user).key("text").value(x.text).key("at").value(x.at).end_object();
    }
    w.end_array().key("votes").begin_array();
    for (const auto& x : o.votes) opinion_json(w, x, "vote", x.vote);
    w.end_array().key("decision");
    if (!o.decided) {
      w.null();
    } else {
      w.begin_object().key("id").value(o.decision_id).key("outcome").value(o.outcome).key("remedy").value(o.remedy);
      if (o.has_factor) w.key("factor").value(o.factor); else w.key("factor").null();
      w.key("uphold").value(o.uphold).key("reject").value(o.reject).key("abstain").value(o.abstain);
      w.key("majority").value(o.majority).key("by").value(o.decided_by).key("text").value(o.decision_text);
      w.key("at").value(o.decided_at);
      if (!o.fix_state.empty()) {
        w.key("fix").begin_object().key("state").value(o.fix_state).key("due");
        if (o.fix_due.empty()) w.null(); else w.value(o.fix_due);
        w.key("changes").begin_array();
        for (const auto& c : o.fix_changes) w.value(c);
        w.end_array().end_object();
      }
      w.end_object();
    }
    // An event's number (0: not shown to this reader, a member: it counts every round's events).
    auto event = [&w](long long seq) {
      w.key("event");
      if (seq) w.value(seq); else w.null();
    };
    w.key("overrides").begin_array();
    for (const auto& x : o.overrides) {
      w.begin_object();
      event(x.seq);
      w.key("action").value(x.action).key("by").value(x.actor).key("at").value(x.at).key("reason").value(x.reason);
      w.key("deadline").value(x.deadline).end_object();
    }
    w.end_array().key("extensions").begin_array();
    for (size_t i = 0; i < o.extensions.size(); ++i) {
      const auto& x = o.extensions[i];
      w.begin_object();
      event(x.seq);
      w.key("organisation").value(x.organisation).key("deadline").value(x.deadline).key("until").value(x.until);
      w.key("round_deadline").value(x.round_deadline).key("by").value(x.actor).key("at").value(x.at);
      w.key("reason").value(x.reason).key("replaced").value(extension_replaced(o, i)).end_object();
    }
    w.end_array().key("withdrawal");
    if (o.withdrawn)
      w.begin_object().key("by").value(o.withdrawn_by).key("at").value(o.withdrawn_at).key("text").value(o.withdrawal_text)
          .end_object();
    else
      w.null();
    w.key("superseded").begin_array();
    for (const auto& x : o.superseded) w.value(x);
    w.end_array().end_object();
  }
  w.end_array().key("result_status").begin_array();
  for (const auto& x : r.statuses) {
    w.begin_object().key("result").value(x.result).key("status").value(x.status);
    if (x.has_factor) w.key("factor").value(x.factor); else w.key("factor").null();
    if (x.objection_id) w.key("objection_id").value(x.objection_id); else w.key("objection_id").null();
    if (x.decision_id) w.key("decision_id").value(x.decision_id); else w.key("decision_id").null();
    w.end_object();
  }
  w.end_array().end_object();
  return w.str() + "\n";
}

// ------------------------------------------------------------ Markdown

namespace {

// Table cells: no line breaks, | escaped.
std::string decision_line(const ReportObjection& o) {
  if (!o.decided && (o.withdrawn || o.state == "withdrawn"))
    return "none: withdrawn" + (o.withdrawn_by.empty() ? std::string() : " by " + md_inline(o.withdrawn_by) + " at " + o.withdrawn_at) +
           (o.withdrawal_text.empty() ? std::string() : ": " + shorten(o.withdrawal_text, 2000));
  if (!o.decided) return "not decided yet";
  std::string s = o.outcome + ", remedy " + o.remedy;
  if (o.has_factor) s += " (factor " + factor_text(o.factor) + ")";
  s += "; votes " + std::to_string(o.uphold) + " uphold, " + std::to_string(o.reject) + " reject, " +
       std::to_string(o.abstain) + " abstain; " + o.majority + " majority; decision " + std::to_string(o.decision_id);
  if (!o.decided_by.empty()) s += " recorded by " + md_inline(o.decided_by);
  if (!o.decided_at.empty()) s += " at " + o.decided_at;
  if (!o.decision_text.empty()) s += ": " + shorten(o.decision_text, 2000);
  if (o.fix_state == "delivered") {
    s += "; fix delivered" + (o.fix_due.empty() ? std::string() : " (it was due by " + o.fix_due + ")");
    for (const auto& c : o.fix_changes) s += "; " + md_inline(c);
  } else if (o.fix_state == "overdue") {
    s += "; fix overdue (due " + o.fix_due + ")";
  } else if (o.fix_state == "due") {
    s += o.fix_due.empty() ? "; fix due (no date set)" : "; fix due by " + o.fix_due;
  }
  return s;
}

std::string impact_line(const ReportObjection& o) {
  if (!o.has_impact) return "not computed";
  std::string s = num(o.impact_minutes) + " min if the objection holds";
  const double pct = o.results.size() == 1 ? impact_percent(o.results[0].has_score, o.results[0].score, o.impact_minutes) : NAN;
  if (std::isfinite(pct)) {
    std::string shown = num(pct, 2);
    if (shown == "-0.00") shown = "0.00";  // a change that rounds to nothing has no sign
    s += " (" + std::string(shown[0] == '-' ? "" : "+") + shown + "% of " + num(o.results[0].score) + " min" +
         (waivable(pct) ? "; under 2%: may be waived" : "") + ")";
  }
  return s;
}

// The body of one objection: the same in the minutes and in a GitHub issue.
void objection_body(std::string& out, const ReportObjection& o) {
  out += "- Filed by: " + md_inline(o.by) + (o.filed_by.empty() ? "" : " (" + md_inline(o.filed_by) + ")") + " at " +
         o.created_at + "\n";
  out += "- Against: " + md_inline(o.against) + "\n";
  out += "- State: " + o.state + "\n";
  out += "- Rule: " + md_inline(o.rule) + "\n";
  out += "- Results:";
  if (o.results.empty()) out += " none named";
  for (const auto& x : o.results) out += " " + md_inline(x.name) + (x.has_score ? " (" + num(x.score) + " min)" : "") + ";";
  if (!o.results.empty()) out.pop_back();
  out += "\n- Score impact: " + impact_line(o) + "\n";
  if (!o.text.empty()) out += "\n" + md_quote(o.text);
  out += "\nEvidence:\n";
  if (o.evidence.empty()) out += "- none\n";
  for (const auto& e : o.evidence) {
    // "- finding 1000006", "- check", "- lines ORG/SYSTEM/BENCH:result_0.txt lines 2-3", "- figure x = 1.2 min".
    out += "- " + e.kind + (e.summary.empty() ? "" : (e.kind == "finding" || e.summary[0] == '(' ? " " : ": ") + md_inline(e.summary)) + "\n";
    if (e.quoted.empty()) continue;
    // Quoted lines as a code block; a fence longer than any run of backticks in them.
    size_t run = 0, longest = 0;
    for (char ch : e.quoted) {
      run = ch == '`' ? run + 1 : 0;
      longest = std::max(longest, run);
    }
    std::string fence(std::max<size_t>(3, longest + 1), '`');
    std::string text = e.quoted.size() > 4000 ? e.quoted.substr(0, 4000) + "\n..." : e.quoted;
    out += "\n  " + fence + "\n";
    size_t start = 0;
    while (start <= text.size()) {
      size_t nl = text.find('\n', start);
      if (nl == std::string::npos) nl = text.size();
      out += "  " + text.substr(start, nl - start) + "\n";
      start = nl + 1;
    }
    out += "  " + fence + "\n\n";
  }
  out += "\nResponses:\n";
  if (o.responses.empty()) out += "- none\n";
  for (const auto& x : o.responses) {
    out += "- " + md_inline(x.organisation) + (x.user.empty() ? "" : " (" + md_inline(x.user) + ")") + " at " + x.at;
    if (!x.remedy.empty()) out += ", proposes " + x.remedy + (x.has_factor ? " with factor " + factor_text(x.factor) : "");
    out += ": " + shorten(x.text, 2000) + "\n";
  }
  if (!o.comments.empty()) {
    out += "\nDiscussion:\n";
    for (const auto& x : o.comments)
      out += "- " + md_inline(x.user) + (x.organisation.empty() ? "" : " (" + md_inline(x.organisation) + ")") + " at " +
             x.at + ": " + shorten(x.text, 2000) + "\n";
  }
  out += "\nVotes:\n";
  if (o.votes.empty()) out += "- none\n";
  for (const auto& x : o.votes) {
    out += "- " + md_inline(x.organisation) + ": " + x.vote;
    if (!x.remedy.empty()) out += ", remedy " + x.remedy + (x.has_factor ? " with factor " + factor_text(x.factor) : "");
    out += "\n";
  }
  out += "\nDecision: " + decision_line(o) + "\n";
  if (!o.superseded.empty()) {
    out += "\nSuperseded decisions:\n";
    for (const auto& x : o.superseded) out += "- " + x + "\n";
  }
  if (!o.overrides.empty()) {
    out += "\nOverrides:\n";
    for (const auto& x : o.overrides)
      out += "- " + (x.seq ? "event " + std::to_string(x.seq) + " (" + x.action + ")" : x.action) + " by " +
             md_inline(x.actor) + " at " + x.at + (x.deadline.empty() ? "" : ", overriding " + x.deadline) + ": " +
             shorten(x.reason, 2000) + "\n";
  }
  if (!o.extensions.empty()) {
    out += "\nExtensions:\n";
    for (size_t i = 0; i < o.extensions.size(); ++i) {
      const auto& x = o.extensions[i];
      out += "- " + md_inline(x.organisation) + ": " + x.deadline + " until " + x.until + " (the round's: " +
             x.round_deadline + "), granted by " + md_inline(x.actor) + " at " + x.at +
             (x.seq ? " (event " + std::to_string(x.seq) + ")" : "") + ": " + shorten(x.reason, 2000) +
             (extension_replaced(o, i) ? " (replaced by a later grant)" : "") + "\n";
    }
  }
}

}  // namespace

std::string report_markdown(const ReportRound& r) {
  std::string out = "# Review of " + r.name + "\n\n";
  out += "State: **" + r.state + "**" + (r.has_review ? "" : " (no review record: imported as published)") + "\n\n";
  out += "## Schedule (UTC)\n\n| milestone | date |\n|---|---|\n";
  for (const auto& [k, v] : r.schedule) out += "| " + k + " | " + (v.empty() ? "not set" : v) + " |\n";
  out += "\n## Required reviews\n\n";
  if (r.pairings.empty()) out += "No pairings assigned (referee review assign --round " + r.name + ").\n";
  else {
    out += "| id | reviewer | reviews | reason | status |\n|---|---|---|---|---|\n";
    for (const auto& p : r.pairings)
      out += "| " + std::to_string(p.id) + " | " + md_inline(p.reviewer) + " | " + md_inline(p.reviewed) + " | " + p.reason + " | " + p.status + " |\n";
  }
  out += "\n## Announced resubmissions\n\n";
  if (r.announcements.empty()) out += "None.\n";
  for (const auto& a : r.announcements)
    out += "- " + md_inline(a.result) + " (" + md_inline(a.organisation) + ", by " + md_inline(a.user) + " at " + a.at +
           "): " + shorten(a.text, 500) + "\n";
  out += "\n## Objections (agenda)\n\n";
  if (r.objections.empty()) out += "None filed.\n";
  else {
    out += "| # | by | against | title | state | decision |\n|---|---|---|---|---|---|\n";
    for (const auto& o : r.objections)
      out += "| " + std::to_string(o.id) + " | " + md_inline(o.by) + " | " + md_inline(o.against) + " | " + md_inline(o.title) + " | " +
             o.state + " | " + (o.decided ? o.outcome + " (" + o.remedy + ")" : "-") + " |\n";
  }
  for (const auto& o : r.objections) {
    out += "\n### Objection " + std::to_string(o.id) + ": " + md_inline(o.title) + "\n\n";
    objection_body(out, o);
  }
  out += "\n## Result status\n\n";
  if (r.statuses.empty()) out += "No result has a review status.\n";
  else {
    out += "| result | status | factor | objection | decision |\n|---|---|---|---|---|\n";
    for (const auto& x : r.statuses)
      out += "| " + md_inline(x.result) + " | " + x.status + " | " + (x.has_factor ? factor_text(x.factor) : "-") + " | " +
             (x.objection_id ? std::to_string(x.objection_id) : "-") + " | " +
             (x.decision_id ? std::to_string(x.decision_id) : "-") + " |\n";
  }
  return out;
}

std::string report_github(const ReportRound& r) {
  std::string out;
  if (r.objections.empty()) return "<!-- " + r.name + ": no objections -->\n";
  for (const auto& o : r.objections) {
    mllog::JsonWriter title(0, mllog::JsonText::kUtf8), labels(0, mllog::JsonText::kUtf8);
    title.value("[" + r.name + "] " + md_inline(o.title, false));
    labels.begin_array().value("by " + o.by).value("against " + o.against).value(r.name).end_array();
    out += "---\n";
    out += "objection: " + std::to_string(o.id) + "\n";
    out += "title: " + title.str() + "\n";
    out += "labels: " + labels.str() + "\n";
    out += "---\n";
    out += "Labels: by " + md_inline(o.by) + ", against " + md_inline(o.against) + ", " + r.name + "\n\n";
    objection_body(out, o);
    out += "\n";
  }
  return out;
}

std::string minutes_markdown(const MeetingMinutes& m) {
  std::string out = "# Minutes of meeting " + std::to_string(m.id) + " of " + md_inline(m.round) + "\n\n";
  out += "Held " + md_inline(m.held_at) + "; recorded by " + md_inline(m.recorded_by) + " at " + md_inline(m.recorded_at) + ".\n\n";
  std::string who;
  for (const auto& a : m.attendees) who += (who.empty() ? "" : ", ") + md_inline(a);
  out += "Attending: " + (who.empty() ? std::string("nobody recorded") : who) + ".\n\n";
  out += "## Objections discussed\n\n";
  if (m.discussed.empty()) out += "None.\n\n";
  for (const auto& o : m.discussed) {
    const bool here = std::find(m.decided_here.begin(), m.decided_here.end(), o.id) != m.decided_here.end();
    out += "### Objection " + std::to_string(o.id) + ": " + md_inline(o.title) + (here ? " (decided since the last meeting)" : "") + "\n\n";
    objection_body(out, o);
    out += "\n";
  }
  out += "## Decisions taken\n\n";
  if (m.decided_here.empty()) out += "None.\n";
  for (const auto& o : m.discussed)
    if (std::find(m.decided_here.begin(), m.decided_here.end(), o.id) != m.decided_here.end())
      out += "- Objection " + std::to_string(o.id) + ": " + decision_line(o) + "\n";
  out += "\n## The review log " + (m.since.empty() ? std::string("up to the meeting") : "since the meeting of " + md_inline(m.since)) + "\n\n";
  if (m.happened.empty()) out += "Nothing.\n";
  for (const auto& e : m.happened)
    out += "- " + md_inline(e.at) + " " + md_inline(e.action) + " " + md_inline(e.subject) + " by " + md_inline(e.actor) +
           (e.organisation.empty() ? "" : " (" + md_inline(e.organisation) + ")") + (e.seq ? " [event " + std::to_string(e.seq) + "]" : "") + "\n";
  out += "\n## Notes\n\n" + (m.notes.empty() ? std::string("None.\n") : md_quote(m.notes));
  if (!m.chain_head.empty()) out += "\nThe review log's head at the meeting: " + md_inline(m.chain_head) + " (referee review log --verify --head).\n";
  return out;
}

std::string minutes_json(const MeetingMinutes& m) {
  mllog::JsonWriter w(2, mllog::JsonText::kUtf8);
  w.begin_object().key("schema").value("referee.minutes/1").key("round").value(m.round).key("meeting").value(m.id);
  w.key("held_at").value(m.held_at).key("since");
  if (m.since.empty()) w.null(); else w.value(m.since);
  w.key("recorded_by").value(m.recorded_by).key("recorded_at").value(m.recorded_at);
  w.key("attendees").begin_array();
  for (const auto& a : m.attendees) w.value(a);
  w.end_array().key("discussed").begin_array();
  for (const auto& o : m.discussed) {
    w.begin_object().key("objection").value(o.id).key("title").value(o.title).key("state").value(o.state);
    w.key("decided_since_last_meeting").value(std::find(m.decided_here.begin(), m.decided_here.end(), o.id) != m.decided_here.end());
    w.key("decision");
    if (!o.decided) w.null(); else w.value(decision_line(o));
    w.end_object();
  }
  w.end_array().key("log").begin_array();
  for (const auto& e : m.happened) {
    w.begin_object();
    if (e.seq) w.key("seq").value(e.seq);
    w.key("at").value(e.at).key("action").value(e.action).key("subject").value(e.subject).key("actor").value(e.actor);
    w.key("organisation");
    if (e.organisation.empty()) w.null(); else w.value(e.organisation);
    w.end_object();
  }
  w.end_array().key("notes").value(m.notes).key("chain_head");
  if (m.chain_head.empty()) w.null(); else w.value(m.chain_head);
  w.end_object();
  return w.str() + "\n";
}

}  // namespace referee::review
