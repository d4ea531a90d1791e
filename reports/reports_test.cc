// The dashboards: CSV quoting, the bootstrap interval, atomic writes of the
// site, one page on its own, and -- from a store of the reference data's
// rounds 3.0 and 3.1 -- the pages' numbers against the store's questions,
// the GPT-3 round-over-round figure and golden chart specifications
// (REFEREE_UPDATE_GOLDEN=1 rewrites tests/golden/reports/).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "mllog/json.h"
#include "reports/charts.h"
#include "reports/model.h"
#include "reports/pages.h"
#include "reports/site.h"
#include "rules/facts.h"
#include "submissions/queries.h"
#include "tests/reference_data.h"
#include "tests/run_referee.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using namespace referee;
using namespace referee::reports;
using referee::testing::TempDir;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// The page model embedded in a page's HTML.
mllog::Json page_model(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"referee-page\">";
  size_t a = html.find(open);
  REQUIRE(a != std::string::npos);
  a += open.size();
  size_t b = html.find("</script>", a);
  REQUIRE(b != std::string::npos);
  mllog::Json j;
  std::string error;
  REQUIRE_MESSAGE(mllog::parse_json_permissive(html.substr(a, b - a), &j, &error), error);
  // A chart's main data is written once per key (chart.rows): put it back
  // into its spec, as the page script does, so that tests see the spec whole.
  if (mllog::Json* charts = const_cast<mllog::Json*>(j.find("charts")))
    for (auto& c : charts->items) {
      const mllog::Json* rows = c.find("rows");
      if (!rows) continue;
      mllog::Json values = jarr();
      for (const auto& block : rows->items) {
        const auto& fields = block.find("fields")->items;
        for (const auto& row : block.find("values")->items) {
          REQUIRE(row.items.size() == fields.size());
          mllog::Json o = jobj();
          for (size_t i = 0; i < fields.size(); ++i) set(o, fields[i].s, row.items[i]);
          values.items.push_back(o);
        }
      }
      mllog::Json data = jobj();
      set(data, "values", values);
      mllog::Json* spec = const_cast<mllog::Json*>(c.find("spec"));
      REQUIRE(spec->find("data") == nullptr);
      // "data" comes after "$schema", where the charts put it.
      spec->fields.insert(spec->fields.begin() + (spec->find("$schema") ? 1 : 0), {"data", data});
    }
  return j;
}

const mllog::Json* by_id(const mllog::Json& page, const char* list, const std::string& id) {
  for (const auto& x : page.find(list)->items)
    if (x.find("id")->s == id) return &x;
  return nullptr;
}

double num(const mllog::Json* j) {
  REQUIRE(j != nullptr);
  if (j->kind == mllog::Json::Kind::Int) return static_cast<double>(j->i);
  REQUIRE(j->kind == mllog::Json::Kind::Float);
  return j->f;
}

// A store with the reference data's rounds 3.0 and 3.1, imported once per run.
struct ReferenceStore {
  TempDir dir{"referee-reports-"};
  std::string db;
  bool ok = false;
  ReferenceStore() {
    db = (dir.path / "ref.db").string();
    std::string rules = referee::testing::reference_rules();
    for (const char* r : {"3.0", "3.1"}) {
      std::string out;
      int rc = referee::testing::run_referee("import '" + referee::testing::reference_dir() + "/mlperf/training_results_v" + r +
                                                 "' --round " + r + ".0 --rules '" + rules + "' --db '" + db + "'",
                                             &out);
      if (rc != 0) {
        MESSAGE("import of round " << r << " failed (" << rc << "): " << out);
        return;
      }
    }
    ok = true;
  }
};

ReferenceStore* reference_store() {
  if (!referee::testing::have_reference_data()) return nullptr;
  static ReferenceStore s;
  REQUIRE(s.ok);
  return &s;
}

std::unique_ptr<submissions::Store> open_ro(const std::string& db) {
  std::string error;
  auto s = submissions::Store::open(db, &error, submissions::OpenMode::ReadOnly);
  REQUIRE_MESSAGE(s, error);
  return s;
}

Options fixed_options() {
  Options o;
  o.generated_at = "2026-01-01T00:00:00Z";
  return o;
}

std::string render_ok(submissions::Store& s, const std::string& path, const Options& o = fixed_options(),
                      const Visible& v = nullptr) {
  File f;
  std::string error;
  Status st = render(s, path, {}, o, v, &f, &error);
  REQUIRE_MESSAGE(st == Status::Ok, path << ": " << error);
  CHECK(f.path == path);
  return f.body;
}

void golden(const std::string& name, const mllog::Json& spec) {
  fs::path p = fs::path(REFEREE_SOURCE_DIR) / "tests/golden/reports" / (name + ".json");
  std::string text = dump(spec, 1) + "\n";
  if (const char* u = std::getenv("REFEREE_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(p, std::ios::binary) << text;
    MESSAGE("rewrote " << p.string());
    return;
  }
  REQUIRE_MESSAGE(fs::exists(p), p.string() << " is missing; run with REFEREE_UPDATE_GOLDEN=1 to write it");
  CHECK_MESSAGE(read(p) == text, name << ": the chart specification differs from " << p.string());
}

// Every link of every page (navigation, table cells, data files) is a file
// of the site; nothing points off the machine. Returns the number of pages.
size_t check_links(const std::vector<File>& files) {
  std::map<std::string, const File*> by_path;
  for (const auto& f : files) by_path[f.path] = &f;
  size_t pages = 0;
  for (const auto& f : files) {
    if (f.path.size() < 5 || f.path.compare(f.path.size() - 5, 5, ".html") != 0) continue;
    ++pages;
    mllog::Json page = page_model(f.body);
    fs::path dir = fs::path(f.path).parent_path();
    auto resolves = [&](const std::string& href) {
      std::string target = (dir / href).lexically_normal().generic_string();
      CHECK_MESSAGE(by_path.count(target), f.path << " links " << href);
    };
    for (const auto& n : page.find("nav")->items) resolves(n.find("href")->s);
    // The page script lists a filter's distinct values: they are text (or null), never links.
    for (const auto& t : page.find("tables")->items)
      for (const auto& key : t.find("filters")->items)
        for (const auto& row : t.find("rows")->items) {
          const mllog::Json* v = row.find(key.s);
          CHECK_MESSAGE((v && (v->kind == mllog::Json::Kind::String || v->kind == mllog::Json::Kind::Null)),
                        f.path << " filter " << key.s);
        }
    // Data files (--data-files): named by the page only where they exist.
    auto data_files = [&](const mllog::Json& item) {
      CHECK((item.find("csv") != nullptr) == (item.find("json") != nullptr));
      if (item.find("csv")) resolves(item.find("csv")->s);
      if (item.find("json")) resolves(item.find("json")->s);
    };
    for (const auto& t : page.find("tables")->items) {
      data_files(t);
      for (const auto& row : t.find("rows")->items)
        for (const auto& [k, v] : row.fields)
          if (v.kind == mllog::Json::Kind::Object && v.find("href")) {
            // The one kind of link off the site: where a result is published (the consortium's repository).
            const std::string& href = v.find("href")->s;
            if (href.rfind("https://", 0) == 0) CHECK_MESSAGE(href.rfind("https://github.com/mlcommons/", 0) == 0, f.path << " links " << href);
            else resolves(href);
          }
    }
    for (const auto& c : page.find("charts")->items) data_files(c);
    CHECK_FALSE(contains(f.body, "http://"));
  }
  // A table's JSON file: its links lead where the page's do, relative to the file.
  for (const auto& f : files) {
    if (f.path.rfind("data/", 0) != 0 || f.path.size() < 5 || f.path.compare(f.path.size() - 5, 5, ".json") != 0) continue;
    mllog::Json j;
    std::string error;
    REQUIRE_MESSAGE(mllog::parse_json_permissive(f.body, &j, &error), f.path << ": " << error);
    const mllog::Json* rows = j.kind == mllog::Json::Kind::Object ? j.find("rows") : nullptr;
    if (!rows) continue;
    fs::path dir = fs::path(f.path).parent_path();
    for (const auto& row : rows->items)
      for (const auto& field : row.fields)
        if (const auto& v = field.second; v.kind == mllog::Json::Kind::Object && v.find("href")) {
          std::string href = v.find("href")->s;
          if (href.rfind("https://github.com/mlcommons/", 0) == 0) continue;
          std::string target = (dir / href).lexically_normal().generic_string();
          CHECK_MESSAGE(by_path.count(target), f.path << " links " << href);
        }
  }
  return pages;
}

}  // namespace

TEST_SUITE("reports") {

TEST_CASE("safe_name gives each name its own path segment") {
  using referee::reports::safe_name;
  CHECK(safe_name("NVIDIA") == "NVIDIA");
  CHECK(safe_name("stable_diffusion") == "stable_diffusion");
  CHECK(safe_name("training-3.1.0") == "training-3.1.0");
  CHECK(safe_name("Azure+NVIDIA") == "Azure~2bNVIDIA");
  CHECK(safe_name("a/b") == "a~2fb");
  CHECK(safe_name(".") == "~2e");
  CHECK(safe_name("..") == "~2e.");
  CHECK(safe_name(".hidden") == "~2ehidden");
  CHECK(safe_name("") == "~");
  CHECK(safe_name("\xc3\xa9") == "~c3~a9");
  // Names that differ only where a byte is written differently stay apart.
  std::vector<std::string> names = {"Azure+NVIDIA", "Azure NVIDIA", "Azure_NVIDIA", "Azure~2bNVIDIA", "Azure~NVIDIA",
                                    "~", "", "~7e", ".", "..", "~2e", "_", "-", "a.b", "a~2eb"};
  std::set<std::string> segments;
  for (const auto& n : names) {
    std::string seg = safe_name(n);
    for (char c : seg)
      CHECK_MESSAGE((std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '~'), n);
    CHECK_MESSAGE(seg.front() != '.', n);
    segments.insert(seg);
  }
  CHECK(segments.size() == names.size());
  // Long names: short enough for a file name, still one each.
  std::string a(300, 'a'), b = a + "b", c(100, '+');
  for (const auto& n : {a, b, c}) CHECK(safe_name(n).size() <= 160);
  CHECK(safe_name(a) != safe_name(b));
  CHECK(safe_name(a).find("~~") != std::string::npos);
  CHECK(safe_name(c).substr(0, 6) == "~2b~2b");
  CHECK(safe_name(c).find("~~") == 120);  // not cut inside an escape
}

TEST_CASE("CSV cells: RFC 4180 quoting, and text that a spreadsheet would run as a formula is defused") {
  CHECK(csv_cell(jstr("plain")) == "plain");
  CHECK(csv_cell(jstr("a,b")) == "\"a,b\"");
  CHECK(csv_cell(jstr("say \"hi\"")) == "\"say \"\"hi\"\"\"");
  CHECK(csv_cell(jstr("two\nlines")) == "\"two\nlines\"");
  CHECK(csv_cell(jstr("=HYPERLINK(\"x\")")) == "\"'=HYPERLINK(\"\"x\"\")\"");
  CHECK(csv_cell(jstr("+1")) == "'+1");
  CHECK(csv_cell(jstr("-cmd")) == "'-cmd");
  CHECK(csv_cell(jstr("@SUM(A1)")) == "'@SUM(A1)");
  CHECK(csv_cell(jnum(-7.5)) == "-7.5");  // a number is not text: it stays a number
  CHECK(csv_cell(jnull()).empty());
  CHECK(csv_cell(jlink("=evil", "x.html")) == "'=evil");
  Table t{"t", "T", {{"a", "A", "text"}, {"b", "B", "number"}}, {}, {}, "", ""};
  Json row = jobj();
  set(row, "a", jstr("x,y"));
  set(row, "b", jnum(2.5));
  t.rows.push_back(row);
  CHECK(table_csv(t) == "a,b\r\n\"x,y\",2.5\r\n");
}

TEST_CASE("the HTML shell escapes what it shows and embeds the page model so that no text can end the script") {
  Page p;
  p.path = "rounds/x/index.html";
  p.kind = "round";
  p.title = "<b>bold</b> & \"quoted\"";
  p.notes = {"</script><script>alert(1)</script>", "a <!-- comment"};
  p.nav.emplace_back("<i>", "../../index.html");
  Meta m{"0.1.0", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", {"training-<x>"}, {}};
  std::string html = page_html(p, m, dump(page_json(p, m)));
  CHECK_FALSE(contains(html, "<b>bold"));
  CHECK(contains(html, "&lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot;"));
  CHECK_FALSE(contains(html, "<script>alert"));
  CHECK_FALSE(contains(html, "training-<x>"));
  CHECK_FALSE(contains(html, "<!-- comment"));
  // Assets by their version (a new build's are new URLs); the icon inline, so no request for /favicon.ico.
  REQUIRE(asset_version("assets/referee.css").size() == 16);
  CHECK(contains(html, "<link rel=\"stylesheet\" href=\"../../assets/referee.css?v=" + asset_version("assets/referee.css") + "\">"));
  CHECK(contains(html, "src=\"../../assets/referee.js?v=" + asset_version("assets/referee.js") + "\""));
  CHECK(contains(html, "<link rel=\"icon\" href=\"data:,\">"));
  CHECK(asset_version("assets/nosuch.js").empty());
  size_t v = html.find("assets/vega.min.js"), vl = html.find("assets/vega-lite.min.js"),
         ve = html.find("assets/vega-embed.min.js"), r = html.find("assets/referee.js");
  CHECK((v < vl && vl < ve && ve < r && r != std::string::npos));
  mllog::Json back = page_model(html);
  CHECK(back.find("notes")->items.at(0).s == "</script><script>alert(1)</script>");
  CHECK(back.find("title")->s == p.title);
  CHECK(back.find("root")->s == "../../");
}

TEST_CASE("a software stack given as an object reads as text on the result page, not as JSON") {
  auto* ref = reference_store();
  if (!ref) return;
  auto s = open_ro(ref->db);
  std::string error;
  auto rows = submissions::find_results(*s, {"training-3.0.0", "dlrm_dcnv2", "", false},
                                        {"NVIDIA/dgxh100_n8_ngc23.04_merlin_hugectr"}, &error);
  REQUIRE_MESSAGE(rows.size() == 1, error);
  mllog::Json page = page_model(render_ok(*s, "results/" + std::to_string(rows[0].result_id) + ".html"));
  bool seen = false;
  for (const auto& row : by_id(page, "tables", "system")->find("rows")->items)
    if (row.find("field")->s == "other_software_stack") {
      seen = true;
      CHECK(contains(row.find("value")->s, "cuda_version 12.1.0.023"));
      CHECK_FALSE(contains(row.find("value")->s, "{"));
    }
  CHECK(seen);
}

TEST_CASE("head-to-head pages never pair a result with its twin") {
  std::vector<submissions::ResultRow> rows(4);
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].result_id = static_cast<long long>(i + 1);
    rows[i].has_score = true;
    rows[i].division = "closed";
    rows[i].accelerators = 8;
    rows[i].accelerator_model = "H100 SXM";
    rows[i].score = 25.0;
  }
  rows[3].score = 24.0;
  rows[1].twin_of = 1;  // 1, 2 and 3 are one result under three names
  rows[2].twin_of = 1;
  auto pairs = auto_pairs(rows);
  REQUIRE(pairs.size() == 1);
  CHECK(pairs[0] == std::make_pair(4LL, 1LL));
}

TEST_CASE("a round's overview lists a chosen few head-to-head pairs per benchmark; the rest are one click away") {
  using P = std::pair<long long, long long>;
  std::vector<P> automatic = {{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}};
  std::vector<P> all = automatic;
  all.push_back({2, 9});  // asked for with --compare
  auto shown = overview_pairs(all, automatic);
  REQUIRE(shown.size() == kPairsShown + 1);
  CHECK(shown[0] == P{1, 2});  // the two fastest first
  CHECK(shown[kPairsShown - 1] == P{5, 6});
  CHECK(shown.back() == P{2, 9});  // a pair asked for is always listed
  CHECK(overview_pairs({{1, 2}}, {{1, 2}}).size() == 1);
  CHECK(overview_pairs({}, {}).empty());

  auto* ref = reference_store();
  if (!ref) return;
  auto s = open_ro(ref->db);
  for (const char* round : {"training-3.0.0", "training-3.1.0"}) {
    mllog::Json page = page_model(render_ok(*s, std::string("rounds/") + round + "/index.html"));
    std::map<std::string, int> per_benchmark;
    for (const auto& row : by_id(page, "tables", "pairs")->find("rows")->items) {
      const std::string text = row.find("pair")->find("text")->s;
      if (contains(text, " more on the ")) {
        CHECK(contains(row.find("pair")->find("href")->s, ".html#head-to-head"));
        continue;
      }
      ++per_benchmark[row.find("benchmark")->s];
    }
    CHECK_FALSE(per_benchmark.empty());
    for (const auto& entry : per_benchmark) {
      const std::string& b = entry.first;
      const int n = entry.second;
      CAPTURE(b);
      CHECK(n <= static_cast<int>(kPairsShown));
      // The leaderboard lists them all, under the section the link names.
      mllog::Json board = page_model(render_ok(*s, std::string("rounds/") + round + "/" + b + ".html"));
      CHECK(by_id(board, "tables", "pairs")->find("rows")->items.size() >= static_cast<size_t>(n));
      bool titled = false;
      for (const auto& sec : board.find("sections")->items) titled = titled || sec.find("title")->s == "Head to head";
      CHECK(titled);
    }
  }
}

TEST_CASE("the index is a dashboard: the store's figures, each benchmark's latest record, one chart per benchmark") {
  auto* ref = reference_store();
  if (!ref) return;
  auto s = open_ro(ref->db);
  std::string error;
  mllog::Json page = page_model(render_ok(*s, "index.html"));
  const mllog::Json& glance = page.find("sections")->items.at(0);
  CHECK(glance.find("title")->s == "At a glance");
  std::map<std::string, std::string> figures;
  for (const auto& f : glance.find("figures")->items) figures[f.find("label")->s] = f.find("value")->s;
  submissions::Listing rounds;
  REQUIRE(submissions::list_store(*s, "rounds", "", &rounds, &error));
  long long results = 0, runs = 0;
  for (const auto& r : rounds.rows) {
    results += std::atoll(r[2].c_str());
    runs += std::atoll(r[3].c_str());
  }
  CHECK(figures["Rounds"] == std::to_string(rounds.rows.size()));
  CHECK(figures["Results"] == std::to_string(results));  // under 1,000: no separator
  CHECK(figures["Runs"] == std::to_string(runs));
  // Each benchmark's latest record as it stands, against the round before's; the speedup their ratio.
  size_t checked = 0, carried = 0;
  for (const auto& row : by_id(page, "tables", "benchmarks")->find("rows")->items) {
    const std::string b = row.find("benchmark")->find("text")->s;
    CAPTURE(b);
    std::vector<double> best;  // per round, in order
    std::vector<std::string> names;
    for (const auto& round : submissions::rounds(*s)) {
      std::string name = b == "retinanet" ? "ssd" : b;  // 3.x: retinanet under its earlier name
      double m = 1e300;
      for (const auto& r : submissions::leaderboard(*s, {round, name, "closed", false}, &error)) m = std::min(m, r.score);
      if (m < 1e300) {
        best.push_back(m);
        names.push_back(round);
      }
    }
    if (best.empty()) continue;
    CHECK(row.find("round")->s == names.back());
    CHECK(num(row.find("minutes")) == best.back());
    if (best.size() >= 2) {
      CHECK(num(row.find("previous_minutes")) == best[best.size() - 2]);
      // A carried record (the latest fastest resubmits an earlier result, as rnnt in 3.1) is no speedup.
      if (row.find("carried")->s == "carried record") {
        ++carried;
        CHECK(row.find("speedup")->kind == mllog::Json::Kind::Null);
      } else {
        CHECK(num(row.find("speedup")) == doctest::Approx(best[best.size() - 2] / best.back()));
      }
    }
    // Its chart: each round's fastest per accelerator family; the family's fastest is the round's fastest.
    const mllog::Json* chart = by_id(page, "charts", "trend-" + b);
    REQUIRE(chart != nullptr);
    std::map<std::string, double> per_round;
    for (const auto& v : chart->find("spec")->find("data")->find("values")->items) {
      CHECK_FALSE(contains(v.find("group")->s, "("));  // a family, not a piece of the raw name
      auto [it, added] = per_round.try_emplace(v.find("round")->s, num(v.find("minutes")));
      if (!added) it->second = std::min(it->second, num(v.find("minutes")));
    }
    for (size_t i = 0; i < names.size(); ++i) CHECK(per_round[names[i]] == best[i]);
    ++checked;
  }
  CHECK(checked >= 8);
  CHECK(carried >= 1);  // the reference data has one (rnnt, 3.1)
}

TEST_CASE("leaderboards and round-over-round pages say what the benchmark is: model, data set, quality target, unit") {
  auto* ref = reference_store();
  if (!ref) return;
  auto s = open_ro(ref->db);
  mllog::Json board = page_model(render_ok(*s, "rounds/training-3.1.0/gpt3.html"));
  const std::string first = board.find("sections")->items.at(0).find("notes")->items.at(0).s;
  CHECK(first.rfind("gpt3: GPT-3 175B on C4 (large language model pre-training); quality target: ", 0) == 0);
  CHECK(contains(first, "convergence counted in tokens."));
  // The target is the rule set's: log perplexity at most 2.69.
  CHECK(contains(first, " <= 2.69;"));
  mllog::Json bert = page_model(render_ok(*s, "benchmarks/bert.html"));
  const std::string note = bert.find("sections")->items.at(0).find("notes")->items.at(0).s;
  CHECK(contains(note, "BERT-Large on Wikipedia"));
  CHECK(contains(note, ">= 0.72"));
  CHECK(contains(note, "counted in samples"));
}

TEST_CASE("published links: from a clone, an archive or referee fetch's folder of the consortium's repository, and from nowhere else") {
  using Links = std::vector<std::pair<std::string, std::string>>;
  const std::string gh = "https://github.com/mlcommons/";
  Links clone = published_links("/data/training_results_v3.1/Azure+NVIDIA", "ND_H100_v5_n1344_pytorch", "gpt3");
  REQUIRE(clone.size() == 3);
  CHECK(clone[0].second == gh + "training_results_v3.1/tree/HEAD/Azure%2BNVIDIA/results/ND_H100_v5_n1344_pytorch/gpt3");
  CHECK(published_links("/data/training_results_v3.1-main/NVIDIA/", "s", "bert").at(1).second ==
        gh + "training_results_v3.1/tree/HEAD/NVIDIA/benchmarks/bert");
  CHECK(published_links("/home/u/.local/share/referee/results/training-4.0.0/NVIDIA", "s", "bert").at(2).second ==
        gh + "training_results_v4.0/blob/HEAD/NVIDIA/systems/s.json");
  CHECK(published_links("/data/hpc_results_v3.0/HPE", "s", "cosmoflow").at(0).second.rfind(gh + "hpc_results_v3.0/", 0) == 0);
  CHECK(published_links("/data/hpc_results_v3.0/HPE", "s", "cosmoflow").at(0).second == gh + "hpc_results_v3.0/tree/HEAD/HPE/results/s/strong/cosmoflow");
  // Not the repository's top level, or not the repository at all: no links.
  CHECK(published_links("/data/training_results_v3.1/NVIDIA/extra", "s", "bert").empty());
  CHECK(published_links("/home/u/my-package/NVIDIA", "s", "bert").empty());
  CHECK(published_links("/data/training_results_v3.1", "s", "bert").empty());
  CHECK(published_links("relative/NVIDIA", "s", "bert").empty());
  CHECK(published_links("/x/mini_results_v2.0/ThirdOrg", "s", "bert").empty());  // not a repository of the consortium's
  CHECK(published_links("/x/results/mini-2.0.0/ThirdOrg", "s", "bert").empty());
}

TEST_CASE("a result from the consortium's published repository links its logs, code and system there; any other has no such links") {
  auto* ref = reference_store();
  if (!ref) return;
  auto s = open_ro(ref->db);
  std::string error;
  auto rows = submissions::find_results(*s, {"training-3.1.0", "gpt3", "", false}, {"Azure+NVIDIA/ND_H100_v5_n1344_pytorch"}, &error);
  REQUIRE_MESSAGE(rows.size() == 1, error);
  mllog::Json page = page_model(render_ok(*s, "results/" + std::to_string(rows[0].result_id) + ".html"));
  const mllog::Json* published = by_id(page, "tables", "published");
  REQUIRE(published != nullptr);
  std::map<std::string, std::string> where;
  for (const auto& row : published->find("rows")->items) where[row.find("what")->s] = row.find("where")->find("href")->s;
  const std::string repo = "https://github.com/mlcommons/training_results_v3.1/";
  CHECK(where["Logs"] == repo + "tree/HEAD/Azure%2BNVIDIA/results/ND_H100_v5_n1344_pytorch/gpt3");
  CHECK(where["Code"] == repo + "tree/HEAD/Azure%2BNVIDIA/benchmarks/gpt3");
  CHECK(where["System description"] == repo + "blob/HEAD/Azure%2BNVIDIA/systems/ND_H100_v5_n1344_pytorch.json");
  // A package from anywhere else: nothing to link.
  TempDir t;
  const std::string db = (t.path / "mini.db").string();
  std::string out;
  REQUIRE(referee::testing::run_referee("import " + std::string(REFEREE_SOURCE_DIR) +
                                            "/submissions/examples/ExampleOrg --round mini-1.0.0 --db '" + db + "'",
                                        &out) == 0);
  auto mini = open_ro(db);
  mllog::Json own = page_model(render_ok(*mini, "results/1.html"));
  CHECK(by_id(own, "tables", "published") == nullptr);
}

TEST_CASE("every result of every round in one table, with filters on round, benchmark, division, availability, accelerator, submitter") {
  auto* ref = reference_store();
  if (!ref) return;
  auto s = open_ro(ref->db);
  std::string error;
  mllog::Json page = page_model(render_ok(*s, "results.html"));
  const mllog::Json* t = by_id(page, "tables", "results");
  REQUIRE(t != nullptr);
  std::vector<std::string> filters;
  for (const auto& f : t->find("filters")->items) filters.push_back(f.s);
  CHECK(filters == std::vector<std::string>{"round", "benchmark", "division", "availability", "accelerator", "submitter"});
  submissions::Listing rounds;
  REQUIRE(submissions::list_store(*s, "rounds", "", &rounds, &error));
  size_t results = 0;
  for (const auto& r : rounds.rows) results += static_cast<size_t>(std::atoll(r[2].c_str()));
  CHECK(t->find("rows")->items.size() == results);
  // ssd in 3.x is listed as retinanet, its own name kept beside it; every row links its result page.
  bool ssd = false;
  for (const auto& row : t->find("rows")->items) {
    CHECK(row.find("system")->find("href")->s.rfind("results/", 0) == 0);
    if (row.find("name")->s == "ssd") {
      ssd = true;
      CHECK(row.find("benchmark")->s == "retinanet");
    }
  }
  CHECK(ssd);
  // Every page links it.
  mllog::Json index = page_model(render_ok(*s, "index.html"));
  bool linked = false;
  for (const auto& n : index.find("nav")->items) linked = linked || n.find("href")->s == "results.html";
  CHECK(linked);
}

TEST_CASE("charts: a legend that shows and hides series, a log scale where figures span orders of magnitude") {
  auto rows = [](const std::vector<std::pair<std::string, double>>& xs) {
    mllog::Json v = jarr();
    for (const auto& [name, m] : xs) {
      mllog::Json o = jobj();
      set(o, "benchmark", jstr(name));
      set(o, "minutes", jnum(m));
      set(o, "availability", jstr(name == "gpt3" ? "cloud" : "on-premise"));
      v.items.push_back(o);
    }
    return v;
  };
  CHECK(charts::wide_spread({3.9, 224.0}));
  CHECK_FALSE(charts::wide_spread({3.9, 20.0}));
  CHECK_FALSE(charts::wide_spread({0.0, 224.0}));  // a log scale cannot show 0
  CHECK_FALSE(charts::wide_spread({}));
  mllog::Json wide = charts::bars(rows({{"gpt3", 3.9}, {"bert", 224.0}}), "benchmark", "Benchmark", "minutes", "Minutes",
                                  "availability", {"benchmark", "minutes"});
  const std::string w = dump(wide);
  CHECK(contains(w, "\"scale\":{\"type\":\"log\"}"));
  CHECK(contains(w, "Minutes (log scale)"));
  CHECK(contains(w, "\"stack\":null"));
  CHECK(contains(w, "\"bind\":\"legend\""));
  CHECK(contains(w, "\"param\":\"pick\""));
  const std::string narrow = dump(charts::bars(rows({{"gpt3", 3.9}, {"bert", 5.0}}), "benchmark", "Benchmark", "minutes",
                                               "Minutes", "availability", {"benchmark", "minutes"}));
  CHECK_FALSE(contains(narrow, "log"));
  // 28 runs: twenty colours and a dash pattern per run, so that no two look alike.
  mllog::Json points = jarr();
  for (int r = 0; r < 28; ++r) {
    mllog::Json o = jobj();
    set(o, "run", jstr("run " + std::to_string(r)));
    set(o, "x", jnum(1));
    set(o, "metric", jnum(0.5));
    points.items.push_back(o);
  }
  const std::string many = dump(charts::convergence(points, "Epochs", "accuracy", true, 0.7, {}));
  CHECK(contains(many, "tableau20"));
  CHECK(contains(many, "\"strokeDash\":{\"field\":\"run\""));
  CHECK(contains(many, "\"bind\":\"legend\""));
}

TEST_CASE("the bootstrap interval of a difference is deterministic and covers what the runs say") {
  std::vector<double> a = {10.0, 10.2, 9.9, 10.1, 10.05}, b = {11.0, 11.2, 10.9, 11.1, 11.05};
  Interval i1 = bootstrap_difference(a, b, 1), i2 = bootstrap_difference(a, b, 1);
  REQUIRE(i1.ok);
  CHECK(i1.low == i2.low);
  CHECK(i1.high == i2.high);
  double d = difference_percent(a, b, 1);
  CHECK(d == doctest::Approx(100.0 * (11.05 / 10.05 - 1)));
  CHECK(i1.low <= d);
  CHECK(i1.high >= d);
  CHECK(i1.low > 5);  // b is clearly ~10% slower: the interval stays well away from 0
  CHECK(i1.high < 15);
  // Identical sides: an interval around 0.
  Interval same = bootstrap_difference(a, a, 1);
  CHECK(same.low < 0.0001);
  CHECK(same.high > -0.0001);
  // Noisy runs give a wider interval than steady ones.
  std::vector<double> noisy = {8, 12, 9, 11, 10};
  Interval wide = bootstrap_difference(a, noisy, 1);
  CHECK(wide.high - wide.low > i1.high - i1.low);
  CHECK_FALSE(bootstrap_difference({}, b, 1).ok);
  CHECK(quoted_spread("resnet") == 2.5);
  CHECK(quoted_spread("gpt3") == 5.0);
}

TEST_CASE("write_site replaces an earlier report whole, refuses other folders, and a failure leaves what was there") {
  TempDir t;
  fs::path out = t.path / "site";
  std::string error;
  REQUIRE_MESSAGE(write_site(out.string(), {{"index.html", "text/html", "one"}, {"data/a/t.csv", "text/csv", "x"}}, &error), error);
  CHECK(read(out / "index.html") == "one");
  CHECK(fs::exists(out / ".referee-report"));
  // An earlier report is replaced whole: files it had and the new one has not are gone.
  REQUIRE_MESSAGE(write_site(out.string(), {{"index.html", "text/html", "two"}}, &error), error);
  CHECK(read(out / "index.html") == "two");
  CHECK_FALSE(fs::exists(out / "data/a/t.csv"));
  // A failure half-way (a file where a folder must go) leaves the earlier report.
  CHECK_FALSE(write_site(out.string(), {{"index.html", "text/html", "three"}, {"index.html/x", "text/html", "y"}}, &error));
  CHECK(contains(error, "left as it was"));
  CHECK(read(out / "index.html") == "two");
  for (const auto& e : fs::directory_iterator(t.path)) CHECK(e.path().filename() == "site");  // no temporary left
  // A folder that is not a report is not overwritten.
  fs::create_directories(t.path / "mine");
  std::ofstream(t.path / "mine/notes.txt") << "keep";
  CHECK_FALSE(write_site((t.path / "mine").string(), {{"index.html", "text/html", "x"}}, &error));
  CHECK(contains(error, "neither empty nor an earlier referee report"));
  CHECK(read(t.path / "mine/notes.txt") == "keep");
  // A file is not a folder.
  CHECK_FALSE(write_site((t.path / "mine/notes.txt").string(), {{"index.html", "text/html", "x"}}, &error));
  CHECK(contains(error, "not a folder"));
  // Paths that leave the site are refused.
  CHECK_FALSE(write_site((t.path / "new").string(), {{"../escape.html", "text/html", "x"}}, &error));
  CHECK_FALSE(fs::exists(t.path / "escape.html"));
  CHECK_FALSE(fs::exists(t.path / "new"));
}

TEST_CASE("write_site keeps files referee did not write, follows a link to a folder, and removes what a killed run left") {
  TempDir t;
  fs::path out = t.path / "site";
  std::string error;
  REQUIRE_MESSAGE(write_site(out.string(), {{"index.html", "text/html", "one"}, {"rounds/r/index.html", "text/html", "r"}}, &error), error);
  // The marker lists what referee wrote.
  CHECK(contains(read(out / ".referee-report"), "\nindex.html\nrounds/r/index.html\n"));
  // Files the user added (a CNAME for the web host, a note in a folder of its own) are kept, and said.
  std::ofstream(out / "CNAME") << "results.example.org\n";
  fs::create_directories(out / "notes");
  std::ofstream(out / "notes/readme.txt") << "mine";
  WriteNotes notes;
  REQUIRE_MESSAGE(write_site(out.string(), {{"index.html", "text/html", "two"}}, &error, &notes), error);
  CHECK(read(out / "index.html") == "two");
  CHECK_FALSE(fs::exists(out / "rounds/r/index.html"));  // referee's own files not written again are gone
  CHECK(read(out / "CNAME") == "results.example.org\n");
  CHECK(read(out / "notes/readme.txt") == "mine");
  CHECK(notes.kept.size() == 2);
  // ... and stay the user's in the next run too.
  REQUIRE_MESSAGE(write_site(out.string(), {{"index.html", "text/html", "three"}}, &error, &notes), error);
  CHECK(read(out / "CNAME") == "results.example.org\n");
  // A file of the user's at a path the new report writes is refused, and everything left as it was.
  CHECK_FALSE(write_site(out.string(), {{"index.html", "text/html", "four"}, {"CNAME", "text/plain", "x"}}, &error));
  CHECK(contains(error, (out / "CNAME").string()));
  CHECK(contains(error, "did not write"));
  CHECK(read(out / "index.html") == "three");
  // An earlier report from before the marker listed its files: the site's own folders are referee's, the rest kept.
  fs::path old = t.path / "old";
  fs::create_directories(old / "rounds");
  std::ofstream(old / ".referee-report") << "This folder is a report written by referee (referee report); it is replaced whole.\n";
  std::ofstream(old / "index.html") << "old";
  std::ofstream(old / "rounds/x.html") << "old";
  std::ofstream(old / ".nojekyll") << "";
  REQUIRE_MESSAGE(write_site(old.string(), {{"index.html", "text/html", "new"}}, &error, &notes), error);
  CHECK(read(old / "index.html") == "new");
  CHECK_FALSE(fs::exists(old / "rounds/x.html"));
  CHECK(fs::exists(old / ".nojekyll"));
  // A symbolic link to a folder: the site goes into that folder; the link stays a link.
  fs::create_symlink(out, t.path / "link");
  REQUIRE_MESSAGE(write_site((t.path / "link").string(), {{"index.html", "text/html", "via link"}}, &error), error);
  CHECK(fs::is_symlink(t.path / "link"));
  CHECK(read(out / "index.html") == "via link");
  CHECK(read(out / "CNAME") == "results.example.org\n");
  fs::create_symlink(t.path / "nowhere", t.path / "dangling");
  CHECK_FALSE(write_site((t.path / "dangling").string(), {{"index.html", "text/html", "x"}}, &error));
  CHECK(contains(error, "symbolic link"));
  // What a killed run left beside the site: a temporary folder with the marker that no
  // running referee holds locked. It is removed; one still locked (a run writing now) and
  // one without the marker (not referee's) are not.
  auto leftover = [&](const std::string& name, bool marker) {
    fs::create_directories(t.path / name / "data");
    std::ofstream(t.path / name / "data/big.csv") << std::string(4096, 'x');
    if (marker) std::ofstream(t.path / name / ".referee-report") << "This folder is a report written by referee\n";
  };
  leftover(".site.tmp-AbC123", true);
  leftover(".site.tmp-XyZ789.old", true);
  leftover(".site.tmp-Busy00", true);
  leftover(".site.tmp-NoMark", false);
  leftover(".other.tmp-AbC123", true);
  int busy = ::open((t.path / ".site.tmp-Busy00/.referee-report").c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(busy >= 0);
  REQUIRE(::flock(busy, LOCK_EX) == 0);
  REQUIRE_MESSAGE(write_site(out.string(), {{"index.html", "text/html", "after"}}, &error, &notes), error);
  ::close(busy);
  CHECK_FALSE(fs::exists(t.path / ".site.tmp-AbC123"));
  CHECK_FALSE(fs::exists(t.path / ".site.tmp-XyZ789.old"));
  CHECK(fs::exists(t.path / ".site.tmp-Busy00"));
  CHECK(fs::exists(t.path / ".site.tmp-NoMark"));
  CHECK(fs::exists(t.path / ".other.tmp-AbC123"));
  CHECK(notes.removed.size() == 2);
  // No temporary folder of this run is left, and the site's own marker is not held.
  for (const auto& e : fs::directory_iterator(t.path)) {
    std::string n = e.path().filename().string();
    CHECK_MESSAGE((n == "site" || n == "old" || n == "link" || n == "dangling" || n == ".site.tmp-Busy00" ||
                   n == ".site.tmp-NoMark" || n == ".other.tmp-AbC123"),
                  n);
  }
}

TEST_CASE("the GPT-3 round-over-round page states the seed's figure") {
  auto* ref = reference_store();
  if (!ref) return;
  auto s = open_ro(ref->db);
  std::string html = render_ok(*s, "benchmarks/gpt3.html");
  mllog::Json page = page_model(html);
  CHECK(page.find("schema")->s == "referee.page/1");
  CHECK(page.find("kind")->s == "round-over-round");
  std::string notes;
  for (const auto& sec : page.find("sections")->items)
    for (const auto& n : sec.find("notes")->items) notes += n.s + "\n";
  INFO(notes);
  CHECK(contains(notes, "10.94 min on 3,584 H100"));
  CHECK(contains(notes, "3.917 min on 10,752"));
  CHECK(contains(notes, "2.79x faster for 3x the accelerators, 93% efficiency"));
  // Accelerator-hours as the table and `referee speedup` print them (653.51 and 701.96): one decimal, a signed change.
  CHECK(contains(notes, "; 653.5 vs 702.0 accelerator-hours (+7.4%)."));
  // The same pair as a table row, with the figures as numbers.
  const mllog::Json* t = by_id(page, "tables", "speedups");
  REQUIRE(t);
  bool found = false;
  for (const auto& row : t->find("rows")->items) {
    if (row.find("group")->s != "overall" || row.find("kind")->s != "headline") continue;
    found = true;
    CHECK(num(row.find("from_accelerators")) == 3584);
    CHECK(num(row.find("to_accelerators")) == 10752);
    CHECK(num(row.find("speedup")) == doctest::Approx(2.79).epsilon(0.005));
    CHECK(num(row.find("accelerator_ratio")) == doctest::Approx(3));
    CHECK(num(row.find("efficiency")) == doctest::Approx(0.93).epsilon(0.01));
    CHECK(num(row.find("hours_change")) == doctest::Approx(0.075).epsilon(0.1));
    CHECK(num(row.find("from_hours")) == doctest::Approx(653.5).epsilon(0.0001));
    CHECK(num(row.find("to_hours")) == doctest::Approx(702.0).epsilon(0.0001));
  }
  CHECK(found);
  // The table shows them to one decimal, and the change signed (+7.4%), as the terminal does.
  for (const auto& c : t->find("columns")->items) {
    if (c.find("key")->s == "from_hours" || c.find("key")->s == "to_hours") CHECK(num(c.find("digits")) == 1);
    if (c.find("key")->s == "hours_change") CHECK(c.find("type")->s == "change");
  }
}

TEST_CASE("efficiency: none where the accelerator counts are equal, on the pages as in the terminal") {
  auto* ref = reference_store();
  if (!ref) return;
  auto s = open_ro(ref->db);
  for (const char* b : {"gpt3", "dlrm_dcnv2"}) {
    mllog::Json page = page_model(render_ok(*s, std::string("benchmarks/") + b + ".html"));
    size_t equal = 0, larger = 0;
    for (const auto& row : by_id(page, "tables", "speedups")->find("rows")->items) {
      bool more = num(row.find("to_accelerators")) > num(row.find("from_accelerators"));
      INFO(b << " " << row.find("group")->s << " " << row.find("kind")->s);
      if (more) {
        ++larger;
        CHECK(row.find("efficiency")->kind != mllog::Json::Kind::Null);
      } else {
        ++equal;
        CHECK(row.find("efficiency")->kind == mllog::Json::Kind::Null);
      }
    }
    CHECK(equal > 0);  // gpt3: the same-scale rows 512 -> 512 and 768 -> 768; dlrm_dcnv2: the headline 128 -> 128
    if (std::string(b) == "gpt3") CHECK(larger > 0);
    std::string notes = dump(*page.find("sections"));
    if (std::string(b) == "dlrm_dcnv2") {
      // 3.44 and 2.19 accelerator-hours: one decimal, not "3 vs 2", and no efficiency at 1x the accelerators.
      CHECK(contains(notes, "1.57x faster for 1x the accelerators; 3.4 vs 2.2 accelerator-hours (-36.3%)."));
      CHECK_FALSE(contains(notes, "% efficiency"));
    }
  }
  // The scaling page: none for a series' smallest result.
  mllog::Json sc = page_model(render_ok(*s, "scaling/gpt3/NVIDIA.html"));
  size_t none = 0;
  for (const auto& row : by_id(sc, "tables", "points")->find("rows")->items)
    if (num(row.find("size_ratio")) == 1) {
      ++none;
      CHECK(row.find("efficiency")->kind == mllog::Json::Kind::Null);
    }
  CHECK(none > 0);
}

TEST_CASE("numbers in the pages equal the store's") {
  auto* ref = reference_store();
  if (!ref) return;
  auto s = open_ro(ref->db);
  std::string error;
  for (const auto& round : submissions::rounds(*s)) {
    auto board = submissions::leaderboard(*s, {round, "gpt3", "", false}, &error);
    REQUIRE(!board.empty());
    mllog::Json page = page_model(render_ok(*s, "rounds/" + round + "/gpt3.html"));
    const mllog::Json* t = by_id(page, "tables", "leaderboard");
    REQUIRE(t);
    std::map<std::string, double> shown;
    for (const auto& row : t->find("rows")->items)
      if (row.find("rank")->kind != mllog::Json::Kind::Null) shown[row.find("system")->find("href")->s] = num(row.find("score"));
    CHECK(shown.size() == board.size());
    for (const auto& r : board) {
      std::string href = "../../results/" + std::to_string(r.result_id) + ".html";
      REQUIRE_MESSAGE(shown.count(href), href);
      CHECK(shown[href] == r.score);
    }
    // The result page's score is the store's, and the round page's fastest closed result is the leaderboard's first.
    mllog::Json rp = page_model(render_ok(*s, "results/" + std::to_string(board.front().result_id) + ".html"));
    const mllog::Json* ev = by_id(rp, "tables", "evidence");
    REQUIRE(ev);
    CHECK(ev->find("rows")->items.at(0).find("value")->s == fmt_fixed(board.front().score, 3) + " minutes");
    mllog::Json ov = page_model(render_ok(*s, "rounds/" + round + "/index.html"));
    double best = 1e300;
    for (const auto& row : by_id(ov, "tables", "overview")->find("rows")->items)
      if (row.find("benchmark")->s == "gpt3" && row.find("closed_minutes")->kind != mllog::Json::Kind::Null)
        best = std::min(best, num(row.find("closed_minutes")));
    double closed_best = 1e300;
    for (const auto& r : board)
      if (r.division == "closed") closed_best = std::min(closed_best, r.score);
    CHECK(best == closed_best);
  }
}

TEST_CASE("round over round: each round's fastest as it stands, a record carried into a later round marked carried") {
  auto* ref = reference_store();
  if (!ref) return;
  auto s = open_ro(ref->db);
  std::string error;
  submissions::Listing benches;
  REQUIRE(submissions::list_store(*s, "benchmarks", "", &benches, &error));
  size_t pairs = 0;
  for (const auto& b : benches.rows) {
    // The page of the benchmark's lineage: ssd in 3.x is retinanet (renamed in 5.0), one page.
    const std::string lineage = rules::benchmark_lineage("training-3.1.0", b[0]);
    mllog::Json page = page_model(render_ok(*s, "benchmarks/" + lineage + ".html"));
    if (b[0] == "ssd") CHECK(contains(dump(*page.find("sections")), "ssd in training-3.1.0 is retinanet under its earlier name"));
    std::map<std::pair<std::string, std::string>, double> fastest;  // (round, group) -> minutes
    std::map<std::pair<std::string, std::string>, std::string> carried;
    for (const auto& row : by_id(page, "tables", "fastest")->find("rows")->items) {
      fastest[{row.find("round")->s, row.find("group")->s}] = num(row.find("score"));
      carried[{row.find("round")->s, row.find("group")->s}] = row.find("carried")->s;
    }
    // Each round's fastest closed result overall as it stands: new results and records carried into it;
    // a carried one is marked.
    for (const auto& round : submissions::rounds(*s)) {
      double want = 1e300, want_new = 1e300;
      for (const auto& r : submissions::leaderboard(*s, {round, b[0], "closed", false}, &error)) {
        want = std::min(want, r.score);
        if (!r.resubmission) want_new = std::min(want_new, r.score);
      }
      bool want_carried = want < want_new;
      auto it = fastest.find({round, "overall"});
      INFO(b[0] << " " << round);
      if (want == 1e300) CHECK(it == fastest.end());
      else {
        CHECK((it != fastest.end() && it->second == want));
        CHECK(!carried[{round, "overall"}].empty() == want_carried);
      }
    }
    // The speedup pairs: the earlier side is that round's record, the later
    // side its fastest (a carried row when that is a resubmission), never a
    // slowdown made of a record and a lesser new result.
    for (bool per_submitter : {false, true}) {
      submissions::SpeedupReport rep;
      if (!submissions::speedups(*s, {"3.0.0", "3.1.0", b[0], per_submitter, "", false}, &rep, &error)) continue;
      for (const auto& p : rep.pairs) {
        if (p.kind != "headline" && p.kind != "carried") continue;
        ++pairs;
        double before = fastest[std::make_pair(std::string("training-3.0.0"), p.submitter)];
        double after = fastest[std::make_pair(std::string("training-3.1.0"), p.submitter)];
        CHECK_MESSAGE(before == p.from.score, b[0] << " " << p.submitter);
        CHECK_MESSAGE(after == p.to.score, b[0] << " " << p.submitter);
        CHECK_MESSAGE((p.kind == "carried") == p.to.resubmission, b[0] << " " << p.submitter);
      }
    }
    // No note twice (the overall and the per-submitter pairs leave out the same resubmissions).
    std::vector<std::string> notes;
    for (const auto& n : page.find("notes")->items) notes.push_back(n.s);
    for (size_t i = 0; i < notes.size(); ++i)
      for (size_t j = i + 1; j < notes.size(); ++j) CHECK_MESSAGE(notes[i] != notes[j], b[0] << ": " << notes[i]);
  }
  CHECK(pairs > 5);
  // The trial's cases: 3.0's own fastest results, which 3.1 resubmitted.
  auto overall = [&](const std::string& bench, const std::string& round) {
    mllog::Json page = page_model(render_ok(*s, "benchmarks/" + bench + ".html"));
    for (const auto& row : by_id(page, "tables", "fastest")->find("rows")->items)
      if (row.find("round")->s == round && row.find("group")->s == "overall")
        return std::make_pair(row.find("system")->find("text")->s, num(row.find("score")));
    return std::make_pair(std::string(), 0.0);
  };
  CHECK(overall("rnnt", "training-3.0.0").first == "NVIDIA/dgxh100_n64_ngc23.04_pytorch");
  CHECK(overall("rnnt", "training-3.0.0").second == doctest::Approx(1.649).epsilon(0.001));
  CHECK(overall("resnet", "training-3.0.0").first == "NVIDIA_CoreWeave/coreweave_hgxh100_n448_ngc23.04_mxnet");
  CHECK(overall("resnet", "training-3.0.0").second == doctest::Approx(0.183).epsilon(0.002));
  // 3.1's rnnt results are all resubmissions: the fastest of them is 3.0's result carried forward, marked so.
  CHECK(overall("rnnt", "training-3.1.0").second >= overall("rnnt", "training-3.0.0").second);
  mllog::Json rnnt = page_model(render_ok(*s, "benchmarks/rnnt.html"));
  for (const auto& row : by_id(rnnt, "tables", "fastest")->find("rows")->items)
    if (row.find("round")->s == "training-3.1.0") CHECK(row.find("carried")->s == "carried from training-3.0.0");
  mllog::Json mask = page_model(render_ok(*s, "benchmarks/maskrcnn.html"));
  CHECK(by_id(mask, "charts", "trend") != nullptr);
  std::string notes = dump(*mask.find("sections"));
  CHECK(contains(notes, "training-3.1.0: 4 resubmissions of an earlier round's results, carried, not new"));
  CHECK_FALSE(contains(notes, "No chart"));
}

TEST_CASE("resubmissions are marked on the leaderboard, the result, the round overview and the head-to-head pages") {
  auto* ref = reference_store();
  if (!ref) return;
  auto s = open_ro(ref->db);
  std::string error;
  auto rows = submissions::results_for(*s, {"training-3.1.0", "rnnt", "", false}, &error);
  REQUIRE(!rows.empty());
  mllog::Json board = page_model(render_ok(*s, "rounds/training-3.1.0/rnnt.html"));
  size_t marked = 0;
  for (const auto& row : by_id(board, "tables", "leaderboard")->find("rows")->items) {
    marked += contains(row.find("verdict")->s, "(resubmitted)");
  }
  size_t resubmissions = 0;
  for (const auto& r : rows) resubmissions += r.resubmission;
  CHECK(resubmissions == 3);
  CHECK(marked == resubmissions);
  CHECK(contains(dump(*board.find("sections")), "(resubmitted): a resubmission"));
  // The result page names what it repeats.
  for (const auto& r : rows) {
    if (!r.resubmission) continue;
    mllog::Json rp = page_model(render_ok(*s, "results/" + std::to_string(r.result_id) + ".html"));
    std::string ev = dump(*by_id(rp, "tables", "evidence"));
    CHECK(contains(ev, "Resubmission"));
    CHECK(contains(ev, "(training-3.0.0)"));
  }
  // The round overview marks a fastest result that is a resubmission.
  mllog::Json ov = page_model(render_ok(*s, "rounds/training-3.1.0/index.html"));
  bool rnnt_marked = false;
  for (const auto& row : by_id(ov, "tables", "overview")->find("rows")->items)
    if (row.find("benchmark")->s == "rnnt" && row.find("closed")->kind == mllog::Json::Kind::Object)
      rnnt_marked = rnnt_marked || contains(row.find("closed")->find("text")->s, "(resubmitted)");
  CHECK(rnnt_marked);
  // A head-to-head of two resubmissions says that it repeats an earlier round's comparison.
  auto bert = submissions::results_for(*s, {"training-3.1.0", "bert", "", false}, &error);
  size_t both = 0;
  for (const auto& [a, b] : auto_pairs(bert)) {
    const submissions::ResultRow *ra = nullptr, *rb = nullptr;
    for (const auto& r : bert) {
      if (r.result_id == a) ra = &r;
      if (r.result_id == b) rb = &r;
    }
    if (!ra->resubmission || !rb->resubmission) continue;
    ++both;
    mllog::Json cp = page_model(render_ok(*s, compare_path("training-3.1.0", "bert", a, b)));
    std::string notes = dump(*cp.find("sections"));
    CHECK(contains(notes, "Both results are resubmissions"));
    CHECK(contains(notes, "is a resubmission: its runs are the logs of"));
  }
  CHECK(both > 0);
}

TEST_CASE("a failing result's page says which check fails and why; the RCP column says pass or fail") {
  auto* ref = reference_store();
  if (!ref) return;
  auto s = open_ro(ref->db);
  std::string error;
  // ssd on eos_n256 in 3.1: its runs converge in 7.33 epochs on average, fewer than the 7.42 the RCP check accepts.
  long long id = 0;
  for (const auto& r : submissions::results_for(*s, {"training-3.1.0", "ssd", "", false}, &error))
    if (r.system == "eos_n256_ngc23.09_pytorch") id = r.result_id;
  REQUIRE(id != 0);
  mllog::Json rp = page_model(render_ok(*s, "results/" + std::to_string(id) + ".html"));
  const mllog::Json* findings = by_id(rp, "tables", "findings");
  REQUIRE(findings);
  bool rcp = false;
  for (const auto& row : findings->find("rows")->items)
    if (row.find("rule")->s == "RCP") {
      rcp = true;
      CHECK(row.find("expected")->s == "mean of at least 7.419 epochs");
      CHECK(row.find("found")->s == "mean 7.333 epochs");
    }
  CHECK(rcp);
  std::string ev = dump(*by_id(rp, "tables", "evidence"));
  CHECK(contains(ev, "fail: RCP (see Checks and findings)"));
  CHECK(contains(ev, "fail (found)"));
  CHECK_FALSE(contains(dump(*rp.find("sections")), "No findings."));
  // The leaderboard's RCP column tells a failing check from a passing one.
  mllog::Json board = page_model(render_ok(*s, "rounds/training-3.1.0/ssd.html"));
  size_t pass = 0, fail = 0;
  const std::string href = "../../results/" + std::to_string(id) + ".html";
  for (const auto& row : by_id(board, "tables", "leaderboard")->find("rows")->items) {
    const std::string& v = row.find("rcp")->s;
    if (row.find("system")->find("href")->s == href) CHECK(v == "fail (found)");
    pass += v.rfind("pass", 0) == 0;
    fail += v.rfind("fail", 0) == 0;
  }
  CHECK(fail == 1);
  CHECK(pass > 0);
  // A result that passes in a package that fails says which is which (3.0's NVIDIA package fails on dlrm_dcnv2's seeds).
  long long ok_in_failing = 0, seeds = 0;
  for (const auto& r : submissions::results_for(*s, {"training-3.0.0", "gpt3", "", false}, &error))
    if (r.organisation == "NVIDIA" && r.pass) ok_in_failing = r.result_id;
  for (const auto& r : submissions::results_for(*s, {"training-3.0.0", "dlrm_dcnv2", "", false}, &error))
    if (r.organisation == "NVIDIA" && !r.pass) seeds = r.result_id;
  REQUIRE(ok_in_failing != 0);
  REQUIRE(seeds != 0);
  std::string ok_ev = dump(*by_id(page_model(render_ok(*s, "results/" + std::to_string(ok_in_failing) + ".html")), "tables", "evidence"));
  CHECK(contains(ok_ev, "\"Result checks\",\"value\":\"pass\""));
  CHECK(contains(ok_ev, "the package as a whole"));
  std::string seeds_ev = dump(*by_id(page_model(render_ok(*s, "results/" + std::to_string(seeds) + ".html")), "tables", "evidence"));
  CHECK(contains(seeds_ev, "fail: seeds"));
  // A passing result with a non-compliant run the rules allow lists no reason to fail.
  long long allowed = 0;
  for (const auto& r : submissions::results_for(*s, {"training-3.0.0", "maskrcnn", "", false}, &error))
    if (r.pass && std::count(r.run_dropped.begin(), r.run_dropped.end(), "noncompliant") > 0) allowed = r.result_id;
  REQUIRE(allowed != 0);
  mllog::Json ap = page_model(render_ok(*s, "results/" + std::to_string(allowed) + ".html"));
  for (const auto& row : by_id(ap, "tables", "findings")->find("rows")->items) CHECK(row.find("file")->s != "(the result)");
  CHECK(contains(dump(*by_id(ap, "tables", "evidence")), "\"Result checks\",\"value\":\"pass\""));
}

TEST_CASE("with a price, cost on the round-over-round and head-to-head pages; availability as the summarizer names it") {
  auto* ref = reference_store();
  if (!ref) return;
  auto s = open_ro(ref->db);
  Options o = fixed_options();
  o.price.per = submissions::Price::Per::AcceleratorHour;
  o.price.amount = 2.5;
  mllog::Json page = page_model(render_ok(*s, "benchmarks/gpt3.html", o));
  bool headline = false;
  for (const auto& row : by_id(page, "tables", "speedups")->find("rows")->items) {
    CHECK(num(row.find("from_cost")) == doctest::Approx(num(row.find("from_hours")) * 2.5));
    CHECK(num(row.find("to_cost")) == doctest::Approx(num(row.find("to_hours")) * 2.5));
    headline = true;
  }
  CHECK(headline);
  std::vector<File> files;
  std::string error;
  REQUIRE_MESSAGE(build_site(*s, o, nullptr, &files, &error), error);
  size_t compared = 0;
  const std::set<std::string> categories = {"Available on-premise", "Available cloud",
                                            "Research, Development, or Internal (RDI)", "Preview"};
  for (const auto& f : files) {
    if (f.path.rfind("compare/", 0) != 0 || !contains(f.path, ".html")) continue;
    ++compared;
    mllog::Json cp = page_model(f.body);
    for (const auto& row : by_id(cp, "tables", "sides")->find("rows")->items) CHECK(num(row.find("cost")) > 0);
    for (const auto& row : by_id(cp, "tables", "systems")->find("rows")->items)
      if (row.find("field")->s == "Availability")
        for (const char* side : {"a", "b"}) CHECK_MESSAGE(categories.count(row.find(side)->s), f.path << ": " << row.find(side)->s);
  }
  CHECK(compared > 10);
  // The leaderboard's figures follow the time, before the checks' text columns (at 1280 pixels they were off-screen).
  mllog::Json board = page_model(render_ok(*s, "rounds/training-3.1.0/gpt3.html", o));
  std::vector<std::string> keys;
  for (const auto& c : by_id(board, "tables", "leaderboard")->find("columns")->items) keys.push_back(c.find("key")->s);
  auto at = [&](const char* k) { return std::find(keys.begin(), keys.end(), k) - keys.begin(); };
  CHECK(at("accelerator_hours") == at("score") + 1);
  CHECK(at("cost") < at("verdict"));
  CHECK(at("verdict") < static_cast<long>(keys.size()));
}

TEST_CASE("chart specifications match the golden files") {
  auto* ref = reference_store();
  if (!ref) return;
  auto s = open_ro(ref->db);
  auto chart = [&](const std::string& path, const std::string& id) {
    mllog::Json page = page_model(render_ok(*s, path));
    const mllog::Json* c = by_id(page, "charts", id);
    REQUIRE_MESSAGE(c, path << " has no chart " << id);
    return *c->find("spec");
  };
  golden("gpt3-round-over-round", chart("benchmarks/gpt3.html", "trend"));
  golden("gpt3-leaderboard-3.1", chart("rounds/training-3.1.0/gpt3.html", "minutes"));
  golden("gpt3-scaling-nvidia", chart("scaling/gpt3/NVIDIA.html", "scaling"));
  golden("round-3.1-fastest", chart("rounds/training-3.1.0/index.html", "fastest"));
  std::string error;
  auto board = submissions::leaderboard(*s, {"training-3.1.0", "gpt3", "closed", false}, &error);
  REQUIRE(board.size() >= 2);
  golden("gpt3-3.1-head-to-head",
         chart(compare_path("training-3.1.0", "gpt3", board[0].result_id, board[1].result_id), "runs"));
  golden("gpt3-3.1-fastest-convergence", chart("results/" + std::to_string(board[0].result_id) + ".html", "convergence"));
}

TEST_CASE("the site: every page and data file, links that resolve, and render() gives the same files") {
  auto* ref = reference_store();
  if (!ref) return;
  auto s = open_ro(ref->db);
  std::vector<File> files;
  std::string error;
  Options o = fixed_options();
  o.data_files = true;  // --data-files
  REQUIRE_MESSAGE(build_site(*s, o, nullptr, &files, &error), error);
  std::map<std::string, const File*> by_path;
  for (const auto& f : files) by_path[f.path] = &f;
  for (const char* p : {"index.html", "rounds/training-3.0.0/index.html", "rounds/training-3.1.0/gpt3.html",
                        "benchmarks/gpt3.html", "scaling/gpt3/NVIDIA.html"})
    CHECK_MESSAGE(by_path.count(p), p);
  // The automatic head-to-head pages include the equal-size pair of 3.1's GPT-3 at 10,752 accelerators.
  auto board = submissions::leaderboard(*s, {"training-3.1.0", "gpt3", "closed", false}, &error);
  std::vector<submissions::ResultRow> big;
  for (const auto& r : board)
    if (r.accelerators == 10752) big.push_back(r);
  REQUIRE(big.size() == 2);
  const std::string pair = compare_path("training-3.1.0", "gpt3", big[0].result_id, big[1].result_id);
  REQUIRE(by_path.count(pair));
  {
    mllog::Json page = page_model(by_path[pair]->body);
    std::string notes = dump(*page.find("sections"));
    CHECK(contains(notes, "95% bootstrap interval ["));
    CHECK(contains(notes, "5% run-to-run spread MLCommons quotes"));
    // Every run of both sides is a dot, counted or not.
    size_t runs = 0;
    for (const auto& v : by_id(page, "charts", "runs")->find("spec")->find("data")->find("values")->items)
      if (v.find("kind")->s == "run") ++runs;
    CHECK(runs == big[0].run_files.size() + big[1].run_files.size());
    // Minutes from near the fastest run (not from 0, where runs of 3.9 to 4.0 min crowd), system names in full.
    const mllog::Json* spec = by_id(page, "charts", "runs")->find("spec");
    for (const auto& layer : spec->find("layer")->items) {
      CHECK(layer.find("encoding")->find("x")->find("scale")->find("zero")->b == false);
      CHECK(layer.find("encoding")->find("y")->find("axis")->find("labelLimit")->i == 0);
    }
    // The systems side by side, from their descriptions.
    const mllog::Json* sys = by_id(page, "tables", "systems");
    REQUIRE(sys);
    CHECK(contains(dump(*sys), "H100"));
  }
  size_t pages = check_links(files);
  CHECK(pages > 50);
  // A report of one round links only to what it holds.
  Options one_round = fixed_options();
  one_round.rounds = {"3.1.0"};
  std::vector<File> part;
  REQUIRE_MESSAGE(build_site(*s, one_round, nullptr, &part, &error), error);
  CHECK(check_links(part) > 20);
  for (const auto& f : part) CHECK_MESSAGE(!contains(f.path, "training-3.0.0"), f.path);
  // So does a report whose Visible hides a round.
  std::vector<File> seen;
  REQUIRE_MESSAGE(build_site(*s, fixed_options(), [](const std::string& r) { return r != "training-3.0.0"; }, &seen, &error), error);
  CHECK(check_links(seen) == check_links(part));
  // One page on its own is the same file as in the whole site.
  for (const char* p : {"index.html", "benchmarks/gpt3.html", "data/benchmarks/gpt3/speedups.csv"}) {
    File one;
    REQUIRE(render(*s, p, {}, o, nullptr, &one, &error) == Status::Ok);
    REQUIRE_MESSAGE(by_path.count(p), p);
    CHECK(one.body == by_path[p]->body);
  }
  // Without --data-files: the same pages, no data files, and no page names
  // one (each offers its data for download from what it holds); a data file
  // asked for on its own is still made, the same as the one written with them.
  std::vector<File> lean;
  REQUIRE_MESSAGE(build_site(*s, fixed_options(), nullptr, &lean, &error), error);
  size_t lean_pages = 0;
  for (const auto& f : lean) {
    CHECK_MESSAGE(f.path.rfind("data/", 0) != 0, f.path);
    if (f.path.size() > 5 && f.path.compare(f.path.size() - 5, 5, ".html") == 0) {
      ++lean_pages;
      CHECK_MESSAGE(!contains(f.body, "\"csv\":"), f.path);
      CHECK_MESSAGE(!contains(f.body, "/data/"), f.path);
    }
  }
  CHECK(lean_pages == pages);
  CHECK(check_links(lean) == pages);
  File one;
  REQUIRE(render(*s, "data/benchmarks/gpt3/speedups.csv", {}, fixed_options(), nullptr, &one, &error) == Status::Ok);
  CHECK(one.body == by_path["data/benchmarks/gpt3/speedups.csv"]->body);
}

TEST_CASE("report --page prints a file as the server renders it: data files linked, a head-to-head by query") {
  auto* ref = reference_store();
  if (!ref) return;
  std::string out;
  int rc = referee::testing::run_referee("report --db '" + ref->db + "' --page benchmarks/gpt3.html 2>/dev/null", &out);
  CHECK(rc == 0);
  mllog::Json page = page_model(out);
  CHECK(by_id(page, "tables", "speedups")->find("csv")->s == "../data/benchmarks/gpt3/speedups.csv");
  auto s = open_ro(ref->db);
  std::string error;
  auto board = submissions::leaderboard(*s, {"training-3.1.0", "gpt3", "closed", false}, &error);
  REQUIRE(board.size() >= 2);
  const std::string a = std::to_string(board[0].result_id), b = std::to_string(board[1].result_id);
  // By ids, and by ORG/SYSTEM with '+' written as %2B.
  std::string by_ids, by_names;
  rc = referee::testing::run_referee("report --db '" + ref->db + "' --page 'compare.html?round=3.1.0&benchmark=gpt3&result=" +
                                         a + "&result=" + b + "' 2>/dev/null",
                                     &by_ids);
  CHECK_MESSAGE(rc == 0, by_ids);
  std::string name = board[1].organisation + "/" + board[1].system;
  for (size_t at = name.find('+'); at != std::string::npos; at = name.find('+', at)) name.replace(at, 1, "%2B");
  rc = referee::testing::run_referee("report --db '" + ref->db + "' --page 'compare.html?round=3.1.0&benchmark=gpt3&result=" +
                                         a + "&result=" + name + "' 2>/dev/null",
                                     &by_names);
  CHECK_MESSAGE(rc == 0, by_names);
  mllog::Json one = page_model(by_ids), two = page_model(by_names);
  CHECK(dump(*one.find("tables")) == dump(*two.find("tables")));
  CHECK(contains(dump(*one.find("tables")), board[1].system));
  // A benchmark by the name the site gives it: 3.1's ssd is retinanet.
  auto ssd = submissions::leaderboard(*s, {"training-3.1.0", "ssd", "closed", false}, &error);
  REQUIRE(ssd.size() >= 2);
  std::string as_ssd, as_retinanet;
  const std::string q = "&result=" + std::to_string(ssd[0].result_id) + "&result=" + std::to_string(ssd[1].result_id) + "' 2>/dev/null";
  CHECK(referee::testing::run_referee("report --db '" + ref->db + "' --page 'compare.html?round=3.1.0&benchmark=ssd" + q, &as_ssd) == 0);
  CHECK(referee::testing::run_referee("report --db '" + ref->db + "' --page 'compare.html?round=3.1.0&benchmark=retinanet" + q,
                                      &as_retinanet) == 0);
  CHECK(dump(*page_model(as_ssd).find("tables")) == dump(*page_model(as_retinanet).find("tables")));
}

TEST_CASE("render: unknown pages, hidden rounds and paths that leave the site") {
  auto* ref = reference_store();
  if (!ref) return;
  auto s = open_ro(ref->db);
  File f;
  std::string error;
  Options o = fixed_options();
  CHECK(render(*s, "", {}, o, nullptr, &f, &error) == Status::Ok);
  CHECK(f.path == "index.html");
  CHECK(render(*s, "nothing.html", {}, o, nullptr, &f, &error) == Status::NotFound);
  CHECK(render(*s, "rounds/training-9.9.0/index.html", {}, o, nullptr, &f, &error) == Status::NotFound);
  CHECK(render(*s, "results/999999.html", {}, o, nullptr, &f, &error) == Status::NotFound);
  CHECK(render(*s, "../etc/passwd", {}, o, nullptr, &f, &error) == Status::BadRequest);
  CHECK(render(*s, "rounds/../index.html", {}, o, nullptr, &f, &error) == Status::BadRequest);
  CHECK(render(*s, "/index.html", {}, o, nullptr, &f, &error) == Status::BadRequest);
  // A round the caller may not see does not exist for them: its pages, its results, its data.
  Visible only31 = [](const std::string& r) { return r == "training-3.1.0"; };
  CHECK(render(*s, "rounds/training-3.0.0/index.html", {}, o, only31, &f, &error) == Status::NotFound);
  CHECK(render(*s, "rounds/training-3.0.0/gpt3.html", {}, o, only31, &f, &error) == Status::NotFound);
  CHECK(render(*s, "data/rounds/training-3.0.0/gpt3/leaderboard.csv", {}, o, only31, &f, &error) == Status::NotFound);
  std::string e2;
  auto old = submissions::leaderboard(*s, {"training-3.0.0", "gpt3", "", false}, &e2);
  REQUIRE(!old.empty());
  CHECK(render(*s, "results/" + std::to_string(old[0].result_id) + ".html", {}, o, only31, &f, &error) == Status::NotFound);
  CHECK(render(*s, "rounds/training-3.1.0/gpt3.html", {}, o, only31, &f, &error) == Status::Ok);
  REQUIRE(render(*s, "index.html", {}, o, only31, &f, &error) == Status::Ok);
  CHECK_FALSE(contains(f.body, "training-3.0.0"));
  // The served head-to-head page by query (served pages name their data files: the server makes them).
  auto now = submissions::leaderboard(*s, {"training-3.1.0", "gpt3", "closed", false}, &e2);
  Options served = fixed_options();
  served.data_files = true;
  CHECK(render(*s, "compare.html", {{"round", "3.1.0"}, {"benchmark", "gpt3"}, {"result", std::to_string(now[0].result_id)},
                                    {"result", std::to_string(now[1].result_id)}},
               served, only31, &f, &error) == Status::Ok);
  {
    mllog::Json page = page_model(f.body);
    CHECK(page.find("root")->s.empty());  // links are relative to where it is served
    std::string csv = by_id(page, "tables", "sides")->find("csv")->s;
    CHECK(csv == "data/" + compare_path("training-3.1.0", "gpt3", now[0].result_id, now[1].result_id).substr(0,
                     compare_path("training-3.1.0", "gpt3", now[0].result_id, now[1].result_id).size() - 5) + "/sides.csv");
    File data;
    CHECK(render(*s, csv, {}, o, only31, &data, &error) == Status::Ok);
  }
  CHECK(render(*s, "compare.html", {{"round", "3.1.0"}}, o, only31, &f, &error) == Status::BadRequest);
  CHECK(render(*s, "compare.html", {{"round", "3.0.0"}, {"benchmark", "gpt3"}, {"result", std::to_string(old[0].result_id)},
                                    {"result", std::to_string(old[1].result_id)}},
               o, only31, &f, &error) == Status::NotFound);
  // One page is fast: well under the served target of 50 ms (a loose bound, not a benchmark).
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE(render(*s, "rounds/training-3.1.0/gpt3.html", {}, o, nullptr, &f, &error) == Status::Ok);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
}

TEST_CASE("the convergence chart draws the RCP from results.rcp_json when the store has it, and says why not otherwise") {
  auto* ref = reference_store();
  if (!ref) return;
  TempDir t;
  fs::copy_file(ref->db, t.path / "copy.db");
  std::string error;
  long long id = 0;
  {
    auto s = open_ro((t.path / "copy.db").string());
    auto board = submissions::leaderboard(*s, {"training-3.1.0", "gpt3", "closed", false}, &error);
    REQUIRE(!board.empty());
    id = board[0].result_id;
    mllog::Json page = page_model(render_ok(*s, "results/" + std::to_string(id) + ".html"));
    const mllog::Json* c = by_id(page, "charts", "convergence");
    REQUIRE(c);
    std::string notes = dump(*page.find("sections"));
    bool has_column = false;
    submissions::Stmt st(s->db(), "SELECT 1 FROM pragma_table_info('results') WHERE name = 'rcp_json'");
    has_column = st.step();
    if (!has_column) CHECK(contains(notes, "keeps no RCP figures"));
    // The runs only without the column; with it (schema 6, filled by the
    // import) the runs, the target, the RCP band, its mean and the least mean.
    CHECK(c->find("spec")->find("layer")->items.size() == (has_column ? 8u : 1u));
  }
  {
    auto s = submissions::Store::open((t.path / "copy.db").string(), &error);
    REQUIRE_MESSAGE(s, error);
    submissions::Stmt has(s->db(), "SELECT 1 FROM pragma_table_info('results') WHERE name = 'rcp_json'");
    if (!has.step()) REQUIRE(s->exec("ALTER TABLE results ADD COLUMN rcp_json TEXT", &error));
    REQUIRE(s->exec("UPDATE results SET rcp_json = NULL", &error));
    submissions::Stmt up(s->db(), "UPDATE results SET rcp_json = ?1 WHERE id = ?2");
    up.bind(1, std::string(R"({"status":"pass","rcp_mean":3.5,"rcp_stdev":0.25,"min_epochs":3.1,"unit":"epochs",)"
                           R"("metric":"eval_accuracy","target":2.69,"target_direction":"min"})"))
        .bind(2, id);
    REQUIRE(up.run());
  }
  auto s = open_ro((t.path / "copy.db").string());
  mllog::Json page = page_model(render_ok(*s, "results/" + std::to_string(id) + ".html"));
  const mllog::Json& layers = *by_id(page, "charts", "convergence")->find("spec")->find("layer");
  // band, runs, then each reference line with its label: target, mean, least accepted mean.
  REQUIRE(layers.items.size() == 8);
  CHECK(num(layers.items[0].find("encoding")->find("x")->find("datum")) == 3.25);
  CHECK(num(layers.items[0].find("encoding")->find("x2")->find("datum")) == 3.75);
  CHECK(layers.items[1].find("mark")->find("type")->s == "line");  // the runs, drawn over the band
  CHECK(num(layers.items[2].find("encoding")->find("y")->find("datum")) == 2.69);
  CHECK(layers.items[3].find("mark")->find("text")->s == "target");
  CHECK(num(layers.items[4].find("encoding")->find("x")->find("datum")) == 3.5);
  CHECK(layers.items[5].find("mark")->find("text")->s == "RCP mean");
  CHECK(num(layers.items[6].find("encoding")->find("x")->find("datum")) == 3.1);
  CHECK(layers.items[7].find("mark")->find("text")->s == "least accepted");
  // The reference lines are black or grey: the runs' colours are never theirs.
  for (size_t i : {2u, 4u, 6u}) {
    std::string colour = layers.items[i].find("mark")->find("color")->s;
    CHECK_MESSAGE((colour == "#222222" || colour == "#666666"), colour);
  }
  // The band and the rules are drawn once, from one datum of their own: on the
  // chart's data a translucent band was drawn once per point, and so opaque.
  for (size_t i : {0u, 2u, 3u, 4u, 5u, 6u, 7u}) {
    CAPTURE(i);
    const mllog::Json* data = layers.items[i].find("data");
    REQUIRE(data);
    CHECK(data->find("values")->items.size() == 1);
  }
  CHECK(layers.items[1].find("data") == nullptr);
  // Another result, with NULL: nothing drawn, and a note says why.
  auto others = submissions::leaderboard(*s, {"training-3.1.0", "gpt3", "closed", false}, &error);
  mllog::Json other = page_model(render_ok(*s, "results/" + std::to_string(others[1].result_id) + ".html"));
  CHECK(by_id(other, "charts", "convergence")->find("spec")->find("layer")->items.size() == 1);
  CHECK(contains(dump(*other.find("sections")), "No RCP figures for this result"));
}

TEST_CASE("leaderboards: energy in kWh where a result has it, cost at the price given, review status as the terminal says it") {
  auto* ref = reference_store();
  if (!ref) return;
  TempDir t;
  fs::copy_file(ref->db, t.path / "copy.db");
  std::string error;
  long long id = 0, withdrawn = 0, normalised = 0;
  {
    auto s = submissions::Store::open((t.path / "copy.db").string(), &error);
    REQUIRE_MESSAGE(s, error);
    auto board = submissions::leaderboard(*s, {"training-3.1.0", "gpt3", "closed", false}, &error);
    REQUIRE(!board.empty());
    id = board[0].result_id;
    submissions::Stmt up(s->db(), "UPDATE results SET energy_joules = 7200000 WHERE id = ?1");
    up.bind(1, id);
    REQUIRE(up.run());
    REQUIRE(board.size() >= 3);
    withdrawn = board[1].result_id;
    normalised = board[2].result_id;
    submissions::Stmt st(s->db(), "INSERT INTO result_status(result_id, status, factor, updated_at) VALUES (?1, ?2, ?3, 't')");
    st.bind(1, withdrawn).bind(2, std::string("withdrawn")).bind_null(3);
    REQUIRE(st.run());
    st.reset();
    st.bind(1, normalised).bind(2, std::string("normalised")).bind(3, 1.1);
    REQUIRE(st.run());
  }
  auto s = open_ro((t.path / "copy.db").string());
  Options o = fixed_options();
  o.price.per = submissions::Price::Per::AcceleratorHour;
  o.price.amount = 2.5;
  mllog::Json page = page_model(render_ok(*s, "rounds/training-3.1.0/gpt3.html", o));
  const mllog::Json* t1 = by_id(page, "tables", "leaderboard");
  REQUIRE(t1);
  auto board = submissions::leaderboard(*s, {"training-3.1.0", "gpt3", "", false}, &error);
  size_t checked = 0;
  for (const auto& row : t1->find("rows")->items) {
    for (const auto& r : board) {
      if (row.find("system")->find("href")->s != "../../results/" + std::to_string(r.result_id) + ".html") continue;
      ++checked;
      double hours = 0;
      REQUIRE(submissions::accelerator_hours(r, &hours));
      CHECK(num(row.find("accelerator_hours")) == doctest::Approx(hours));
      CHECK(num(row.find("cost")) == doctest::Approx(hours * 2.5));
      CHECK(row.find("review")->s == submissions::review_status_text(r));
      CHECK(row.find("verdict")->s == (r.pass ? "pass" : "fail"));
      if (r.result_id == id) CHECK(num(row.find("energy_kwh")) == doctest::Approx(2.0));
      else CHECK(row.find("energy_kwh")->kind == mllog::Json::Kind::Null);
    }
  }
  CHECK(checked == board.size());
  // The power view: the results with an energy figure, energy against minutes, and the Energy column shown.
  const mllog::Json* power = by_id(page, "charts", "energy");
  REQUIRE(power != nullptr);
  const auto& points = power->find("spec")->find("data")->find("values")->items;
  REQUIRE(points.size() == 1);
  CHECK(num(points[0].find("energy_kwh")) == doctest::Approx(2.0));
  bool power_section = false;
  for (const auto& sec : page.find("sections")->items)
    if (sec.find("title")->s == "Power and energy") power_section = sec.find("charts")->items.at(0).s == "energy";
  CHECK(power_section);
  for (const auto& c : t1->find("columns")->items)
    if (c.find("key")->s == "energy_kwh") CHECK(c.find("optional") == nullptr);
  // A leaderboard without energy figures has no power view.
  mllog::Json no_power = page_model(render_ok(*s, "rounds/training-3.1.0/bert.html", o));
  CHECK(by_id(no_power, "charts", "energy") == nullptr);
  // The review: a withdrawn result is listed, unranked, with its status; a normalised one shows its factor.
  bool saw_withdrawn = false, saw_normalised = false;
  for (const auto& row : t1->find("rows")->items) {
    const std::string& href = row.find("system")->find("href")->s;
    if (href == "../../results/" + std::to_string(withdrawn) + ".html") {
      saw_withdrawn = true;
      CHECK(row.find("rank")->kind == mllog::Json::Kind::Null);
      CHECK(row.find("review")->s == "withdrawn");
    }
    if (href == "../../results/" + std::to_string(normalised) + ".html") {
      saw_normalised = true;
      CHECK(row.find("rank")->kind != mllog::Json::Kind::Null);
      CHECK(row.find("review")->s == "normalised x1.1000");
    }
  }
  CHECK(saw_withdrawn);
  CHECK(saw_normalised);
  CHECK(contains(dump(*page.find("notes")), "was withdrawn by the review; not ranked"));
  // Without a price there is no cost column.
  mllog::Json plain = page_model(render_ok(*s, "rounds/training-3.1.0/gpt3.html"));
  CHECK_FALSE(contains(dump(*by_id(plain, "tables", "leaderboard")->find("columns")), "\"cost\""));
}

TEST_CASE("referee report: writes the site, says what it wrote, and refuses what it cannot do") {
  auto* ref = reference_store();
  if (!ref) return;
  TempDir t;
  std::string out;
  int rc = referee::testing::run_referee("report --db '" + ref->db + "' --out '" + (t.path / "site").string() +
                                             "' --price-per-accelerator-hour 2.5",
                                         &out);
  CHECK_MESSAGE(rc == 0, out);
  CHECK(contains(out, "pages"));
  CHECK(contains(out, (t.path / "site/index.html").string()));
  CHECK(fs::exists(t.path / "site/rounds/training-3.1.0/gpt3.html"));
  CHECK(contains(read(t.path / "site/rounds/training-3.1.0/gpt3.html"), "per accelerator-hour"));
  rc = referee::testing::run_referee("report --db '" + ref->db + "' --out '" + (t.path / "two").string() +
                                         "' --round 3.1.0 --compare 3.1.0,gpt3,NVIDIA/eos_n64_ngc23.09_nemo,NVIDIA/eos_n96_ngc23.09_nemo",
                                     &out);
  CHECK_MESSAGE(rc == 0, out);
  CHECK_FALSE(fs::exists(t.path / "two/rounds/training-3.0.0"));
  bool extra = false;
  for (const auto& e : fs::directory_iterator(t.path / "two/compare/training-3.1.0/gpt3"))
    extra = extra || read(e.path()).find("eos_n64_ngc23.09_nemo vs NVIDIA/eos_n96_ngc23.09_nemo") != std::string::npos;
  CHECK(extra);
  rc = referee::testing::run_referee("report --db '" + ref->db + "' --out '" + (t.path / "three").string() +
                                         "' --compare 3.1.0,gpt3,NVIDIA/nothing,NVIDIA/eos_n96_ngc23.09_nemo", &out);
  CHECK(rc == 2);
  CHECK(contains(out, "matches 'NVIDIA/nothing'"));
  CHECK_FALSE(fs::exists(t.path / "three"));
  rc = referee::testing::run_referee("report --db '" + ref->db + "' --out '" + (t.path / "three").string() + "' --compare 3.1.0,gpt3", &out);
  CHECK(rc == 2);
  CHECK(contains(out, "expected ROUND,BENCHMARK,ORG/SYSTEM,ORG/SYSTEM"));
  rc = referee::testing::run_referee("report --db '" + ref->db + "' --out '" + (t.path / "site").string() + "' --round 9.9.0", &out);
  CHECK(rc == 2);
  CHECK(contains(out, "round 9.9.0 is not in the store"));
  std::ofstream(t.path / "file") << "x";
  rc = referee::testing::run_referee("report --db '" + ref->db + "' --out '" + (t.path / "file").string() + "'", &out);
  CHECK(rc == 2);
  CHECK(contains(out, "is a file"));
  rc = referee::testing::run_referee("report --db '" + (t.path / "file").string() + "' --out '" + (t.path / "x").string() + "'", &out);
  CHECK(rc == 2);
  CHECK_FALSE(fs::exists(t.path / "x"));
}

TEST_CASE("referee report leaves rounds under review out unless asked, and marks every page of them when asked") {
  auto* ref = reference_store();
  if (!ref) return;
  TempDir t;
  const std::string db = (t.path / "embargo.db").string();
  fs::copy_file(ref->db, db);
  std::string out, error;
  int rc = referee::testing::run_referee("round schedule 3.1.0 --from-deadline 2026-12-15 --db '" + db + "' 2>&1", &out);
  REQUIRE_MESSAGE(rc == 0, out);
  // By default: the round is left out, and the run says so.
  const std::string site = (t.path / "site").string();
  rc = referee::testing::run_referee("report --db '" + db + "' --out '" + site + "' 2>&1", &out);
  CHECK_MESSAGE(rc == 0, out);
  CHECK(contains(out, "left out, not yet published (under review): training-3.1.0 (state review)"));
  CHECK(contains(out, "--include-under-review"));
  CHECK(fs::exists(t.path / "site/rounds/training-3.0.0/index.html"));
  CHECK_FALSE(fs::exists(t.path / "site/rounds/training-3.1.0"));
  for (const auto& e : fs::recursive_directory_iterator(t.path / "site"))
    if (e.is_regular_file()) CHECK_MESSAGE(!contains(read(e.path()), "training-3.1.0"), e.path().string());
  // Naming the round without the flag is refused.
  rc = referee::testing::run_referee("report --db '" + db + "' --out '" + (t.path / "one").string() + "' --round 3.1.0 2>&1", &out);
  CHECK(rc == 2);
  CHECK(contains(out, "round training-3.1.0 is not yet published"));
  CHECK_FALSE(fs::exists(t.path / "one"));
  rc = referee::testing::run_referee("report --db '" + db + "' --page rounds/training-3.1.0/gpt3.html 2>&1", &out);
  CHECK(rc == 2);
  CHECK(contains(out, "--include-under-review"));
  // Asked for: written, and every page showing the round says so, in the HTML and in the page model.
  rc = referee::testing::run_referee("report --db '" + db + "' --out '" + site + "' --include-under-review 2>&1", &out);
  CHECK_MESSAGE(rc == 0, out);
  CHECK(contains(out, "not yet published, included as asked: training-3.1.0"));
  size_t marked = 0, unmarked = 0;
  for (const auto& e : fs::recursive_directory_iterator(t.path / "site")) {
    if (!e.is_regular_file() || e.path().extension() != ".html") continue;
    std::string html = read(e.path());
    mllog::Json page = page_model(html);
    bool shows = contains(dump(*page.find("meta")->find("rulesets")), "training-3.1.0");
    bool banner = contains(html, "Under review, not for publication:</strong> training-3.1.0 (state review)");
    const mllog::Json* ur = page.find("meta")->find("under_review");
    CHECK_MESSAGE(banner == shows, e.path().string());
    CHECK_MESSAGE((ur != nullptr) == shows, e.path().string());
    (shows ? marked : unmarked) += 1;
  }
  CHECK(marked > 50);   // the round's pages, and the pages across rounds that show it
  CHECK(unmarked > 10); // 3.0's own pages
  CHECK(contains(read(t.path / "site/rounds/training-3.1.0/gpt3.html"), "<title>[under review] "));
  // A result of the round under review links nothing in the consortium's repository (it is not there yet);
  // a result of the published round does.
  {
    size_t under = 0, published = 0;
    for (const auto& e : fs::directory_iterator(t.path / "site/results")) {
      mllog::Json page = page_model(read(e.path()));
      const bool review = page.find("meta")->find("under_review") != nullptr;
      const bool links = by_id(page, "tables", "published") != nullptr;
      CHECK_MESSAGE(links == !review, e.path().string());
      (review ? under : published) += 1;
    }
    CHECK(under > 10);
    CHECK(published > 10);
  }
  // A published round is not marked.
  {
    auto s = submissions::Store::open(db, &error);
    REQUIRE_MESSAGE(s, error);
    REQUIRE(s->exec("UPDATE round_reviews SET state = 'published'", &error));
  }
  rc = referee::testing::run_referee("report --db '" + db + "' --out '" + site + "' 2>&1", &out);
  CHECK_MESSAGE(rc == 0, out);
  CHECK_FALSE(contains(out, "not yet published"));
  CHECK_FALSE(contains(read(t.path / "site/rounds/training-3.1.0/gpt3.html"), "under-review"));
}

TEST_CASE("referee report: --compare pages are linked and printed; round names that are no round are said so") {
  auto* ref = reference_store();
  if (!ref) return;
  TempDir t;
  std::string out;
  int rc = referee::testing::run_referee("report --db '" + ref->db + "' --out '" + (t.path / "site").string() +
                                             "' --compare 3.1.0,gpt3,NVIDIA/eos_n64_ngc23.09_nemo,NVIDIA/eos_n96_ngc23.09_nemo 2>&1",
                                         &out);
  CHECK_MESSAGE(rc == 0, out);
  size_t at = out.find("head to head: ");
  REQUIRE_MESSAGE(at != std::string::npos, out);
  std::string path = out.substr(at + 14, out.find('\n', at) - at - 14);
  CHECK(fs::exists(path));
  std::string name = fs::path(path).filename().string();
  CHECK(contains(name, "--"));
  // The leaderboard and the round page link it.
  for (const char* page : {"rounds/training-3.1.0/gpt3.html", "rounds/training-3.1.0/index.html"})
    CHECK_MESSAGE(contains(read(t.path / "site" / page), name), page);
  rc = referee::testing::run_referee("report --db '" + ref->db + "' --out '" + (t.path / "x").string() + "' --round '' 2>&1", &out);
  CHECK(rc == 2);
  CHECK(contains(out, "no round given"));
  CHECK_FALSE(contains(out, "--round \n"));
  rc = referee::testing::run_referee("report --db '" + ref->db + "' --out '" + (t.path / "x").string() + "' --round 3.1 2>&1", &out);
  CHECK(rc == 2);
  CHECK(contains(out, "did you mean training-3.1.0?"));
  CHECK_FALSE(contains(out, "--round 3.1\n"));
  CHECK_FALSE(fs::exists(t.path / "x"));
}

}  // TEST_SUITE
