// Inside reports/: the page model being built (sections, tables, charts),
// a JSON tree to build it with, and what turns a page into files (HTML,
// CSV, JSON). Not part of the library's interface (reports/site.h is).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mllog/json.h"
#include "reports/site.h"
#include "submissions/queries.h"

namespace referee::reports {

using mllog::Json;

// Building JSON values.
Json jstr(std::string_view s);
Json jnum(double d);
Json jint(long long i);
Json jbool(bool b);
Json jnull();
Json jarr(std::vector<Json> items = {});
Json jobj();
// Sets (or replaces) `key` of an object.
Json& set(Json& obj, const std::string& key, Json value);
// {"text": text, "href": href}
Json jlink(const std::string& text, const std::string& href);
// Compact JSON text (UTF-8); `indent` > 0 lays it out for people (golden files).
std::string dump(const Json& j, int indent = 0);

// A path segment made safe, one for each name: [A-Za-z0-9._-] kept (a '.'
// not first), any other byte written ~XX (two lowercase hex digits);
// "Azure+NVIDIA" is "Azure~2bNVIDIA". "" is "~". One longer than 160 bytes
// is cut to about 120 and ends "~~" and 16 hex digits of its SHA-256.
std::string safe_name(const std::string& s);

struct Column {
  Column(std::string k, std::string l, std::string t, int d = -1)
      : key(std::move(k)), label(std::move(l)), type(std::move(t)), digits(d) {}
  std::string key, label, type;  // text | number | percent | link | minutes
  int digits = -1;               // -1: not given
  // Shown on demand: the page hides it until the reader ticks it under
  // "Columns" (every column can be hidden or shown there), so that a table's
  // key columns fit a laptop screen.
  bool optional = false;
};

struct Table {
  std::string id, title;
  std::vector<Column> columns;
  std::vector<Json> rows;  // objects keyed by column key
  std::vector<std::string> filters;
  std::string baseline_value, baseline_label;  // "" = no baseline switch
};

struct Chart {
  std::string id, title;
  Json spec;    // Vega-Lite v5, data inline
  Json values;  // the chart's data (array of objects): its CSV and JSON files
};

// A headline number of a dashboard: "Results" "1,214" ("in 6 rounds").
struct Figure {
  std::string label, value, detail;
};

struct Section {
  Section(std::string t, std::vector<std::string> n = {}, std::vector<std::string> c = {}, std::vector<std::string> tb = {})
      : title(std::move(t)), notes(std::move(n)), charts(std::move(c)), tables(std::move(tb)) {}
  std::string title;
  std::vector<std::string> notes, charts, tables;
  std::vector<Figure> figures;  // shown above the notes, as a row of numbers
  // Notes a reader rarely needs (results left out of the pairs, one line
  // each): folded under `folded_title`, one click away.
  std::string folded_title;
  std::vector<std::string> folded;
};

struct Page {
  std::string path;     // site path of the HTML file
  std::string data_of;  // the page whose data files these are ("" = path): a page served under another name
  std::string kind, title;
  std::vector<std::string> rounds;  // rounds whose data the page shows (meta: rule sets, data time)
  std::vector<std::pair<std::string, std::string>> nav;  // text, href relative to the page
  std::vector<std::string> notes;
  std::vector<Section> sections;
  std::vector<Chart> charts;
  std::vector<Table> tables;

  // "../" per folder of `path`: from this page to the site's root.
  std::string root() const;
  // A site path as seen from this page.
  std::string href(const std::string& site_path) const;
  // Data files of a table or chart: data/<path without .html>/<id>.csv|json.
  std::string data_path(const std::string& id, const char* ext) const;
};

struct Meta {
  std::string referee_version, generated_at, data_time;
  std::vector<std::string> rulesets;
  // Rounds of the page not yet published ("training-3.1.0 (state review)"):
  // the page is marked "under review, not for publication".
  std::vector<std::string> under_review;
  // Whether the page's data files exist (Options::data_files): the page
  // model names them and page_files makes them.
  bool data_files = false;
};

// The page's JSON (the page model, "referee.page/1").
Json page_json(const Page& page, const Meta& meta);
// The HTML file of a page (reports/html.cc).
std::string page_html(const Page& page, const Meta& meta, const std::string& page_json_text);

// Text for HTML: & < > " ' as entities.
std::string html_escape(const std::string& s);
// RFC 4180 CSV of a table / of chart values; text cells that would start a
// formula (= + - @, tab, CR) get a leading '.
std::string table_csv(const Table& t);
std::string values_csv(const Json& values);
std::string csv_cell(const Json& v);

// A relative link of the file `from_file` (site paths), as seen from
// `to_file`: the same target. Absolute ones (a scheme, '/', '#') as they are.
std::string rebase_href(const std::string& from_file, const std::string& to_file, const std::string& href);

// Every file of one page: the HTML and, with meta.data_files, each table's
// and chart's CSV and JSON (links in a table's JSON file are relative to
// that file).
std::vector<File> page_files(const Page& page, const Meta& meta);

}  // namespace referee::reports
