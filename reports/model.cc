#include "reports/model.h"

#include "base/digest.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "mllog/json_writer.h"

namespace referee::reports {

namespace {
Json of_kind(Json::Kind kind) {
  Json j;
  j.kind = kind;
  return j;
}
}  // namespace

Json jstr(std::string_view s) { Json j = of_kind(Json::Kind::String); j.s = std::string(s); return j; }
Json jnum(double d) { Json j = of_kind(Json::Kind::Float); j.f = d; return j; }
Json jint(long long i) { Json j = of_kind(Json::Kind::Int); j.i = i; return j; }
Json jbool(bool b) { Json j = of_kind(Json::Kind::Bool); j.b = b; return j; }
Json jnull() { return Json(); }
Json jarr(std::vector<Json> items) { Json j = of_kind(Json::Kind::Array); j.items = std::move(items); return j; }
Json jobj() { return of_kind(Json::Kind::Object); }
Json& set(Json& obj, const std::string& key, Json value) {
  for (auto& [k, v] : obj.fields)
    if (k == key) {
      v = std::move(value);
      return v;
    }
  obj.fields.emplace_back(key, std::move(value));
  return obj.fields.back().second;
}
Json jlink(const std::string& text, const std::string& href) {
  Json j = jobj();
  set(j, "text", jstr(text));
  set(j, "href", jstr(href));
  return j;
}

namespace {

// The shortest text that reads back as the same double (std::to_chars).
void append_number(std::string* out, double d) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  out->append(buf, r.ptr);
}

void dump_to(std::string* out, const Json& j, int indent, int depth) {
  auto nl = [&](int d) {
    if (!indent) return;
    *out += '\n';
    out->append(static_cast<size_t>(d * indent), ' ');
  };
  switch (j.kind) {
    case Json::Kind::Null: *out += "null"; break;
    case Json::Kind::Bool: *out += j.b ? "true" : "false"; break;
    case Json::Kind::Int: *out += std::to_string(j.i); break;
    case Json::Kind::Float:
      // JSON has no NaN or Infinity: such a figure is unknown.
      if (std::isfinite(j.f)) append_number(out, j.f);
      else *out += "null";
      break;
    case Json::Kind::String: mllog::append_json_string(out, j.s, mllog::JsonText::kUtf8); break;
    case Json::Kind::Array:
      *out += '[';
      for (size_t i = 0; i < j.items.size(); ++i) {
        if (i) *out += ',';
        nl(depth + 1);
        dump_to(out, j.items[i], indent, depth + 1);
      }
      if (!j.items.empty()) nl(depth);
      *out += ']';
      break;
    case Json::Kind::Object:
      *out += '{';
      for (size_t i = 0; i < j.fields.size(); ++i) {
        if (i) *out += ',';
        nl(depth + 1);
        mllog::append_json_string(out, j.fields[i].first, mllog::JsonText::kUtf8);
        *out += indent ? ": " : ":";
        dump_to(out, j.fields[i].second, indent, depth + 1);
      }
      if (!j.fields.empty()) nl(depth);
      *out += '}';
      break;
  }
}

}  // namespace

std::string dump(const Json& j, int indent) {
  std::string out;
  dump_to(&out, j, indent, 0);
  return out;
}

std::string safe_name(const std::string& s) {
  // One name, one segment: two submitters whose names differ only where a
  // byte is replaced ("Azure+NVIDIA", "Azure NVIDIA", "Azure_NVIDIA") must
  // not share a page, or one would take the other's place. Every other byte
  // is written ~XX (its hex), '~' itself included, so no two names meet.
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              (c == '.' && i > 0);  // a leading '.' would hide the file, or make "." and ".."
    if (ok) {
      out += static_cast<char>(c);
    } else {
      out += '~';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (out.empty()) out = "~";  // "~" alone is no encoding of anything else
  // A file name has at most 255 bytes: a longer one would stop the whole
  // report. Cut (not inside an escape) and marked with "~~" and the digest of
  // the whole name, which no encoding above writes.
  constexpr size_t kMax = 160, kKeep = 120;
  if (out.size() > kMax) {
    size_t cut = kKeep;
    for (size_t back = 1; back <= 2; ++back)
      if (out[cut - back] == '~') cut -= back;
    out = out.substr(0, cut) + "~~" + base::sha256_hex(s).substr(0, 16);
  }
  return out;
}

std::string Page::root() const {
  std::string r;
  for (char c : path)
    if (c == '/') r += "../";
  return r;
}

std::string Page::href(const std::string& site_path) const { return root() + site_path; }

std::string Page::data_path(const std::string& id, const char* ext) const {
  const std::string& of = data_of.empty() ? path : data_of;
  std::string stem = of.size() > 5 && of.compare(of.size() - 5, 5, ".html") == 0 ? of.substr(0, of.size() - 5) : of;
  return "data/" + stem + "/" + id + "." + ext;
}

namespace {

Json jstrs(const std::vector<std::string>& items) {
  Json a = jarr();
  for (const auto& x : items) a.items.push_back(jstr(x));
  return a;
}

// A chart's or a table's object starts with its id and title and ends with
// the addresses of its data files.
Json data_head(const std::string& id, const std::string& title) {
  Json o = jobj();
  set(o, "id", jstr(id));
  set(o, "title", jstr(title));
  return o;
}

void set_data_files(Json& o, const Page& p, const std::string& id) {
  set(o, "csv", jstr(p.root() + p.data_path(id, "csv")));
  set(o, "json", jstr(p.root() + p.data_path(id, "json")));
}

// The chart's main data (the spec's top-level data.values, when every
// value is an object) taken out of the spec and written once per key:
// consecutive values with the same keys in the same order are one block
// {"fields": [keys], "values": [[v, ...], ...]}. Null when the spec has no
// such data (it is left as it is).
Json chart_rows(Json* spec) {
  if (spec->kind != Json::Kind::Object) return jnull();
  const Json* data = spec->find("data");
  const Json* values = data && data->kind == Json::Kind::Object && data->fields.size() == 1 ? data->find("values") : nullptr;
  if (!values || values->kind != Json::Kind::Array) return jnull();
  for (const auto& v : values->items)
    if (v.kind != Json::Kind::Object) return jnull();
  Json blocks = jarr();
  std::vector<std::string> keys;
  for (const auto& v : values->items) {
    std::vector<std::string> mine;
    for (const auto& [k, x] : v.fields) mine.push_back(k);
    if (blocks.items.empty() || mine != keys) {
      keys = mine;
      Json b = jobj();
      set(b, "fields", jstrs(keys));
      set(b, "values", jarr());
      blocks.items.push_back(std::move(b));
    }
    Json row = jarr();
    for (const auto& [k, x] : v.fields) row.items.push_back(x);
    const_cast<Json*>(blocks.items.back().find("values"))->items.push_back(std::move(row));
  }
  auto& f = spec->fields;
  f.erase(std::remove_if(f.begin(), f.end(), [](const auto& kv) { return kv.first == "data"; }), f.end());
  return blocks;
}

}  // namespace

Json page_json(const Page& p, const Meta& meta) {
  Json j = jobj();
  set(j, "schema", jstr("referee.page/1"));
  set(j, "kind", jstr(p.kind));
  set(j, "title", jstr(p.title));
  Json m = jobj();
  set(m, "referee_version", jstr(meta.referee_version));
  Json rs = jstrs(meta.rulesets);
  set(m, "rulesets", rs);
  set(m, "data_time", meta.data_time.empty() ? jnull() : jstr(meta.data_time));
  set(m, "generated_at", jstr(meta.generated_at));
  if (!meta.under_review.empty()) {
    Json ur = jstrs(meta.under_review);
    set(m, "under_review", ur);
  }
  set(j, "meta", m);
  set(j, "root", jstr(p.root()));
  Json nav = jarr();
  for (const auto& [text, href] : p.nav) nav.items.push_back(jlink(text, href));
  set(j, "nav", nav);
  Json notes = jstrs(p.notes);
  set(j, "notes", notes);
  Json sections = jarr();
  for (const auto& s : p.sections) {
    Json o = jobj();
    set(o, "title", jstr(s.title));
    set(o, "notes", jstrs(s.notes));
    set(o, "charts", jstrs(s.charts));
    set(o, "tables", jstrs(s.tables));
    if (!s.figures.empty()) {
      Json figures = jarr();
      for (const auto& f : s.figures) {
        Json fo = jobj();
        set(fo, "label", jstr(f.label));
        set(fo, "value", jstr(f.value));
        set(fo, "detail", jstr(f.detail));
        figures.items.push_back(fo);
      }
      set(o, "figures", figures);
    }
    if (!s.folded.empty()) {
      Json folded = jobj();
      set(folded, "title", jstr(s.folded_title));
      set(folded, "notes", jstrs(s.folded));
      set(o, "folded", folded);
    }
    sections.items.push_back(o);
  }
  set(j, "sections", sections);
  Json charts = jarr();
  for (const auto& c : p.charts) {
    Json o = data_head(c.id, c.title);
    Json spec = c.spec;
    Json rows = chart_rows(&spec);
    set(o, "spec", spec);
    if (rows.kind == Json::Kind::Array) set(o, "rows", rows);
    if (meta.data_files) set_data_files(o, p, c.id);
    charts.items.push_back(o);
  }
  set(j, "charts", charts);
  Json tables = jarr();
  for (const auto& t : p.tables) {
    Json o = data_head(t.id, t.title);
    Json cols = jarr();
    for (const auto& c : t.columns) {
      Json co = jobj();
      set(co, "key", jstr(c.key));
      set(co, "label", jstr(c.label));
      set(co, "type", jstr(c.type));
      if (c.digits >= 0) set(co, "digits", jint(c.digits));
      if (c.optional) set(co, "optional", jbool(true));
      cols.items.push_back(co);
    }
    set(o, "columns", cols);
    set(o, "rows", jarr(t.rows));
    Json f = jstrs(t.filters);
    set(o, "filters", f);
    if (t.baseline_value.empty()) {
      set(o, "baseline", jnull());
    } else {
      Json b = jobj();
      set(b, "value", jstr(t.baseline_value));
      set(b, "label", jstr(t.baseline_label));
      set(o, "baseline", b);
    }
    if (meta.data_files) set_data_files(o, p, t.id);
    tables.items.push_back(o);
  }
  set(j, "tables", tables);
  return j;
}

std::string csv_cell(const Json& v) {
  std::string text;
  bool is_text = false;
  switch (v.kind) {
    case Json::Kind::Null: return "";
    case Json::Kind::Bool: return v.b ? "true" : "false";
    case Json::Kind::Int: return std::to_string(v.i);
    case Json::Kind::Float: {
      std::string out;
      if (std::isfinite(v.f)) append_number(&out, v.f);
      return out;
    }
    case Json::Kind::String: text = v.s; is_text = true; break;
    case Json::Kind::Object: {
      const Json* t = v.find("text");
      if (t && t->kind == Json::Kind::String) {
        text = t->s;
        is_text = true;
      } else {
        text = dump(v);
      }
      break;
    }
    case Json::Kind::Array: text = dump(v); break;
  }
  // A spreadsheet reads a cell that starts with one of these as a formula.
  if (is_text && !text.empty() && (text[0] == '=' || text[0] == '+' || text[0] == '-' || text[0] == '@' ||
                                   text[0] == '\t' || text[0] == '\r'))
    text = "'" + text;
  if (text.find_first_of(",\"\r\n") != std::string::npos) {
    std::string q = "\"";
    for (char c : text) {
      if (c == '"') q += '"';
      q += c;
    }
    return q + "\"";
  }
  return text;
}

std::string table_csv(const Table& t) {
  std::string out;
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if (i) out += ',';
    out += csv_cell(jstr(t.columns[i].key));
  }
  out += "\r\n";
  for (const auto& row : t.rows) {
    for (size_t i = 0; i < t.columns.size(); ++i) {
      const Json* v = row.find(t.columns[i].key);
      if (i) out += ',';
      if (v) out += csv_cell(*v);
    }
    out += "\r\n";
  }
  return out;
}

std::string values_csv(const Json& values) {
  std::vector<std::string> keys;
  std::set<std::string> seen;
  for (const auto& row : values.items)
    for (const auto& [k, v] : row.fields)
      if (seen.insert(k).second) keys.push_back(k);
  std::string out;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i) out += ',';
    out += csv_cell(jstr(keys[i]));
  }
  out += "\r\n";
  for (const auto& row : values.items) {
    for (size_t i = 0; i < keys.size(); ++i) {
      const Json* v = row.find(keys[i]);
      if (i) out += ',';
      if (v) out += csv_cell(*v);
    }
    out += "\r\n";
  }
  return out;
}

std::string rebase_href(const std::string& from_file, const std::string& to_file, const std::string& href) {
  if (href.empty() || href[0] == '/' || href[0] == '#' || href.find(':') != std::string::npos) return href;
  std::vector<std::string> parts;
  size_t cut = from_file.rfind('/');
  std::string joined = (cut == std::string::npos ? std::string() : from_file.substr(0, cut + 1)) + href;
  size_t start = 0;
  for (size_t i = 0; i <= joined.size(); ++i)
    if (i == joined.size() || joined[i] == '/') {
      std::string seg = joined.substr(start, i - start);
      start = i + 1;
      if (seg == "..") {
        if (parts.empty()) return href;  // above the site's root: left as it is
        parts.pop_back();
      } else if (!seg.empty() && seg != ".") {
        parts.push_back(seg);
      }
    }
  std::string out;
  for (char c : to_file)
    if (c == '/') out += "../";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "/" : "") + parts[i];
  return out;
}

std::vector<File> page_files(const Page& page, const Meta& meta) {
  std::vector<File> out;
  std::string json = dump(page_json(page, meta));
  out.push_back({page.path, "text/html; charset=utf-8", page_html(page, meta, json)});
  if (!page.data_of.empty() || !meta.data_files) return out;  // none, or those of the page it stands for
  for (const auto& t : page.tables) {
    out.push_back({page.data_path(t.id, "csv"), "text/csv; charset=utf-8", table_csv(t)});
    Json o = jobj();
    Json cols = jarr();
    for (const auto& c : t.columns) cols.items.push_back(jstr(c.key));
    set(o, "title", jstr(t.title));
    set(o, "columns", cols);
    // Links in the data file lead where the page's lead, relative to the file.
    std::string json_path = page.data_path(t.id, "json");
    std::vector<Json> rows = t.rows;
    for (auto& row : rows)
      for (auto& [key, cell] : row.fields)
        if (cell.kind == Json::Kind::Object)
          if (Json* h = const_cast<Json*>(cell.find("href")); h && h->kind == Json::Kind::String)
            h->s = rebase_href(page.path, json_path, h->s);
    set(o, "rows", jarr(std::move(rows)));
    out.push_back({json_path, "application/json", dump(o)});
  }
  for (const auto& c : page.charts) {
    out.push_back({page.data_path(c.id, "csv"), "text/csv; charset=utf-8", values_csv(c.values)});
    out.push_back({page.data_path(c.id, "json"), "application/json", dump(c.values)});
  }
  return out;
}

}  // namespace referee::reports
