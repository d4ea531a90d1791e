// A review store for tests and fuzz targets: three rounds, results, a log on
// disk and users of every role (tokens made through review::Api as `referee
// user add` makes them). Without doctest: a step that fails throws
// std::runtime_error (a test case reports it as a failure). The doctest
// fixture around it is tests/review_fixture.h.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "mllog/json.h"
#include "review/api.h"
#include "review/events.h"
#include "submissions/import.h"
#include "submissions/store.h"

namespace referee::testing::review_fixture {

namespace fs = std::filesystem;
using referee::review::Api;
using referee::review::Request;
using referee::review::Response;
using referee::submissions::Stmt;
using referee::submissions::Store;

inline void need(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("review store: " + what);
}

// The "token" field of a JSON answer.
inline std::string token_in(const std::string& body) {
  referee::mllog::Json j;
  std::string err;
  need(referee::mllog::parse_json_permissive(body, &j, &err) && j.find("token"), "no token in " + body);
  return j.find("token")->s;
}

// A review store with three rounds: training-3.1.0 under review (NVIDIA, Google and
// Dell submitted), training-3.0.0 imported from published results (Intel
// submitted) and users of every role. NVIDIA's RetinaNet failed its RCP
// check: unscaled 0.85454 min, normalisation factor 1.07575758.
struct ReviewStore {
  std::string path;
  std::unique_ptr<Store> s;
  std::unique_ptr<Api> api;
  long long r31 = 0, r30 = 0;
  std::map<std::string, long long> results;  // ORG/SYSTEM/BENCHMARK -> id
  std::map<std::string, std::string> token;  // user -> token
  fs::path logs;                             // NVIDIA's package folder

  // Builds the store in `dir` (an existing, empty folder).
  explicit ReviewStore(const fs::path& dir) {
    path = (dir / "review.db").string();
    std::string error;
    s = Store::open(path, &error);
    need(s != nullptr, error);
    r31 = round("training-3.1.0", 3001000);
    r30 = round("training-3.0.0", 3000000);
    logs = dir / "NVIDIA";
    long long nv = package(r31, "NVIDIA", logs.string());
    result(nv, "eos", "retinanet", 0.85454, 0.85454, 1.07575758, 0, {0.84, 0.85, 0.85454, 0.86, 0.95});
    result(nv, "eos", "bert", 5.0, 5.0, 0, 1, {4.9, 5.0, 5.0, 5.1, 5.2});
    long long g = package(r31, "Google", "/nowhere/Google");
    result(g, "tpu", "bert", 6.0, 6.0, 0, 1, {6, 6, 6});
    long long d = package(r31, "Dell", "/nowhere/Dell");
    result(d, "xe", "bert", 7.0, 7.0, 0, 1, {7, 7, 7});
    long long i = package(r30, "Intel", "/nowhere/Intel");
    result(i, "gaudi", "bert", 8.0, 8.0, 0, 1, {8, 8, 8});
    // A log on disk for quoting lines.
    fs::create_directories(logs / "results/eos/retinanet");
    std::ofstream(logs / "results/eos/retinanet/result_0.txt")
        << ":::MLLOG {\"key\": \"run_start\"}\n:::MLLOG {\"key\": \"eval_accuracy\", \"value\": 0.33}\n"
           ":::MLLOG {\"key\": \"run_stop\", \"metadata\": {\"status\": \"success\"}}\n";
    api = std::make_unique<Api>(path);
    add_user("admin1", "", "admin");
    add_user("chair1", "", "chair");
    add_user("chairdell", "Dell", "chair");
    add_user("nv", "NVIDIA", "member");
    add_user("nv2", "NVIDIA", "member");
    add_user("goog", "Google", "member");
    add_user("dell", "Dell", "member");
    add_user("intel", "Intel", "member");
    add_user("gone", "Google", "member");
    need(local("POST", "/api/v1/users/gone/revoke", "").status == 200, "revoke gone");
    // 3.1 under review: its record made as the review makes it (an event in the log, so that --verify passes).
    Response rec = local("PUT", "/api/v1/rounds/3.1.0/schedule", "{}");
    need(rec.status == 200, rec.body);
  }

  void exec(const std::string& sql) {
    std::string error;
    need(s->exec(sql.c_str(), &error), error);
  }
  long long last() { return sqlite3_last_insert_rowid(s->db()); }
  long long count(const std::string& table) {
    Stmt q(s->db(), ("SELECT COUNT(*) FROM " + table).c_str());
    need(q.step(), "count " + table);
    return q.col_int(0);
  }
  long long round(const std::string& name, long long ordinal) {
    Stmt st(s->db(), "INSERT INTO rounds(name, usage, version, ordinal) VALUES (?1, 'training', ?2, ?3)");
    st.bind(1, name).bind(2, name.substr(9)).bind(3, ordinal);
    need(st.run(), "round " + name);
    return last();
  }
  long long package(long long round_id, const std::string& org, const std::string& dir_path) {
    Stmt o(s->db(), "INSERT OR IGNORE INTO organisations(name) VALUES (?1)");
    o.bind(1, org);
    need(o.run(), "organisation " + org);
    Stmt p(s->db(), R"sql(INSERT INTO packages(round_id, organisation_id, path, content_sha256, verdict, ruleset_sha256,
                            referee_version, imported_at)
                          VALUES (?1, (SELECT id FROM organisations WHERE name = ?2), ?3, 'h', 'pass', 'r', 'v', 't'))sql");
    p.bind(1, round_id).bind(2, org).bind(3, dir_path);
    need(p.run(), "package " + org);
    const long long id = last();
    record_package(id);
    return id;
  }
  void result(long long package_id, const std::string& system, const std::string& bench, double score, double unscaled,
              double norm, int rcp_pass, const std::vector<double>& runs) {
    Stmt sy(s->db(), "INSERT OR IGNORE INTO systems(package_id, name, division, valid, description_json) VALUES (?1, ?2, "
                     "'closed', 1, '{}')");
    sy.bind(1, package_id).bind(2, system);
    need(sy.run(), "system " + system);
    Stmt sid(s->db(), "SELECT id FROM systems WHERE package_id = ?1 AND name = ?2");
    sid.bind(1, package_id).bind(2, system);
    need(sid.step(), "system id " + system);
    Stmt r(s->db(), "INSERT INTO results(system_id, benchmark, division, verdict, score_minutes, unscaled_minutes, "
                    "rcp_norm_factor, rcp_pass) VALUES (?1, ?2, 'closed', 'pass', ?3, ?4, ?5, ?6)");
    r.bind(1, sid.col_int(0)).bind(2, bench).bind(3, score).bind(4, unscaled);
    if (norm > 0) r.bind(5, norm); else r.bind_null(5);
    r.bind(6, rcp_pass);
    need(r.run(), "result " + bench);
    long long id = last();
    Stmt org(s->db(), "SELECT o.name FROM packages p JOIN organisations o ON o.id = p.organisation_id WHERE p.id = ?1");
    org.bind(1, package_id);
    need(org.step(), "organisation of a package");
    results[org.col_text(0) + "/" + system + "/" + bench] = id;
    for (size_t k = 0; k < runs.size(); ++k) {
      // Each package's runs its own logs (fingerprints, contents): none is another round's copy, nor another
      // result's twin, unless a test says so.
      Stmt run(s->db(), "INSERT INTO runs(result_id, file, content_sha256, fingerprint, minutes, converged, compliant, "
                        "counted, messages_json) VALUES (?1, ?2, ?3, ?3, ?4, 1, 1, 1, '[]')");
      run.bind(1, id).bind(2, "result_" + std::to_string(k) + ".txt").bind(3, bench + system + "@" + std::to_string(package_id) + "/" + std::to_string(k))
          .bind(4, runs[k]);
      need(run.run(), "run of " + bench);
    }
    record_package(package_id);
  }
  // The package as an import records it (review/events.h): an event with the digest of its rows, so that
  // --verify takes the fixture's packages as imported ones.
  void record_package(long long package_id) {
    Stmt q(s->db(), "SELECT d.name, o.name FROM packages p JOIN rounds d ON d.id = p.round_id JOIN organisations o ON "
                    "o.id = p.organisation_id WHERE p.id = ?1");
    q.bind(1, package_id);
    std::string what = "package ";
    what += std::to_string(package_id);
    need(q.step(), what);
    submissions::PackageChange c;
    c.round = q.col_text(0);
    c.organisation = q.col_text(1);
    c.status = "imported";
    c.new_sha256.assign(1, 'h');
    std::string error;
    c.rows_sha256 = submissions::package_rows_sha256(*s, package_id, &error);
    need(!c.rows_sha256.empty(), error);
    need(referee::review::record_package_change(*s, c, &error), error);
  }
  // The round's state as the review sets it (POST .../state as the local administrator, with an override
  // for open objections); a move the review does not make (published -> review, for the matrix tests) is
  // written to the table as someone who edits the store would, and --verify then names it.
  void set_state(const std::string& state) {
    Response r = local("POST", "/api/v1/rounds/3.1.0/state",
                       "{\"state\":\"" + state + "\",\"reason\":\"test\",\"override\":\"test\"}");
    if (r.status == 200) return;
    if (state == "published") {  // review -> final -> published
      if (local("POST", "/api/v1/rounds/3.1.0/state", "{\"state\":\"final\",\"override\":\"test\"}").status == 200 &&
          local("POST", "/api/v1/rounds/3.1.0/state", "{\"state\":\"published\",\"override\":\"test\"}").status == 200)
        return;
    }
    exec("UPDATE round_reviews SET state = '" + state + "' WHERE round_id = " + std::to_string(r31));
  }
  // A deadline as the review sets it (PUT .../schedule), when the round is not published.
  void set_deadline(const std::string& column, const std::string& when) {
    Response r = local("PUT", "/api/v1/rounds/3.1.0/schedule", "{\"" + column + "\":\"" + when + "\"}");
    if (r.status == 200) return;
    exec("UPDATE round_reviews SET " + column + " = '" + when + "' WHERE round_id = " + std::to_string(r31));
  }

  Response call(const std::string& user, const std::string& method, const std::string& p, const std::string& body) {
    Request r;
    r.method = method;
    r.path = p;
    size_t q = p.find('?');
    if (q != std::string::npos) {
      r.path = p.substr(0, q);
      std::string rest = p.substr(q + 1);
      while (!rest.empty()) {
        size_t amp = rest.find('&');
        std::string kv = rest.substr(0, amp);
        size_t eq = kv.find('=');
        r.query.emplace_back(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
        rest = amp == std::string::npos ? "" : rest.substr(amp + 1);
      }
    }
    r.body = body;
    if (user == "revoked") r.token = token.at("gone");
    else if (user == "forged") r.token = "rft_" + std::string(64, 'a');
    else if (!user.empty()) r.token = token.at(user);
    return api->handle(r);
  }
  Response local(const std::string& method, const std::string& p, const std::string& body) {
    Request r;
    r.method = method;
    r.path = p;
    r.body = body;
    r.local_admin = true;
    return api->handle(r);
  }
  void add_user(const std::string& name, const std::string& org, const std::string& role) {
    std::string body = "{\"name\":\"" + name + "\",\"role\":\"" + role + "\"" +
                       (org.empty() ? "" : ",\"organisation\":\"" + org + "\"") + "}";
    Response r = local("POST", "/api/v1/users", body);
    need(r.status == 201, r.body);
    token[name] = token_in(r.body);
  }
  // A copy of the store file beside it with `sql` run on it, as someone who
  // edits the file would (close the store first): the copy's path.
  std::string edited_copy(const std::string& sql) {
    std::string copy = path + ".edited" + std::to_string(++edited_copies) + ".db";
    fs::copy_file(path, copy);
    sqlite3* raw = nullptr;
    need(sqlite3_open(copy.c_str(), &raw) == SQLITE_OK, "cannot open " + copy);
    int rc = sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr);
    sqlite3_close(raw);
    need(rc == SQLITE_OK, "cannot run on the copy: " + sql);
    return copy;
  }
  int edited_copies = 0;

  std::string status_of(const std::string& result) {
    Stmt q(s->db(), "SELECT status || COALESCE(':' || factor, '') FROM result_status WHERE result_id = ?1");
    q.bind(1, results.at(result));
    return q.step() ? q.col_text(0) : "";
  }
};

}  // namespace referee::testing::review_fixture
