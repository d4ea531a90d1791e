// The HTML shell of a page: everything the page shows is in its JSON (the
// page script renders it); the shell carries the title, the navigation and
// the footer as plain HTML, escaped, so that a page without scripts still
// says what it is and where its data files are.
#include "reports/model.h"
#include "reports/site.h"

namespace referee::reports {

namespace {

std::string esc(const std::string& s) { return html_escape(s); }

// JSON inside <script>: '<', '>' and '&' only occur inside strings, where
// \u escapes mean the same; "</script>" can then never end the element early.
std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size() + 64);
  for (char c : json) {
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else out += c;
  }
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
  return out;
}

}  // namespace

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// The pages' icon: none, said inline (an empty data: address), so that no
// browser asks for /favicon.ico and no page load ends in a 404.
const char* const kIcon = "data:,";

std::string page_html(const Page& page, const Meta& meta, const std::string& json) {
  const std::string root = esc(page.root());
  std::string h;
  h.reserve(json.size() + 4096);
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += "<title>" + std::string(meta.under_review.empty() ? "" : "[under review] ") + esc(page.title) + " — referee</title>\n";
  h += "<link rel=\"icon\" href=\"" + std::string(kIcon) + "\">\n";
  h += "<link rel=\"stylesheet\" href=\"" + root + asset_url("assets/referee.css") + "\">\n</head>\n";
  h += "<body data-kind=\"" + esc(page.kind) + "\">\n<header><nav>";
  for (size_t i = 0; i < page.nav.size(); ++i)
    h += (i ? " | " : "") + std::string("<a href=\"") + esc(page.nav[i].second) + "\">" + esc(page.nav[i].first) + "</a>";
  h += "</nav>";
  if (!meta.under_review.empty())
    h += "\n<p class=\"under-review\" role=\"alert\"><strong>Under review, not for publication:</strong> " +
         esc(join(meta.under_review)) + " is not yet published; this page is embargoed.</p>";
  h += "</header>\n<main id=\"referee-main\">\n<h1>" + esc(page.title) + "</h1>\n<noscript><p>";
  std::vector<std::string> files;
  if (meta.data_files) {
    for (const auto& t : page.tables) files.push_back(page.root() + page.data_path(t.id, "csv"));
    for (const auto& c : page.charts) files.push_back(page.root() + page.data_path(c.id, "csv"));
  }
  if (files.empty()) {
    h += "This page needs JavaScript to show its content.";
    if (!page.tables.empty() || !page.charts.empty())
      h += " Its tables and charts are also written as CSV and JSON files by <code>referee report --data-files</code>.";
  } else {
    h += "This page needs JavaScript to draw its tables and charts; their data is in these files (each also as .json): ";
    for (size_t i = 0; i < files.size(); ++i)
      h += (i ? ", " : "") + std::string("<a href=\"") + esc(files[i]) + "\">" + esc(files[i]) + "</a>";
    h += ".";
  }
  h += "</p></noscript>\n</main>\n";
  h += "<script type=\"application/json\" id=\"referee-page\">" + script_safe(json) + "</script>\n";
  h += "<footer><p>referee " + esc(meta.referee_version) + "; rule sets: " +
       esc(meta.rulesets.empty() ? std::string("none") : join(meta.rulesets)) +
       "; data as of " + esc(meta.data_time.empty() ? std::string("(no data)") : meta.data_time) + "; generated " +
       esc(meta.generated_at) + "</p></footer>\n";
  for (const char* s : {"vega.min.js", "vega-lite.min.js", "vega-embed.min.js", "referee.js"})
    h += "<script src=\"" + root + asset_url(std::string("assets/") + s) + "\"></script>\n";
  h += "</body>\n</html>\n";
  return h;
}

}  // namespace referee::reports
