#include "reports/charts.h"

#include <algorithm>
#include <set>

namespace referee::reports::charts {

namespace {

Json base(const Json& values) {
  Json s = jobj();
  set(s, "$schema", jstr("https://vega.github.io/schema/vega-lite/v5.json"));
  Json data = jobj();
  set(data, "values", values);
  set(s, "data", data);
  set(s, "width", jstr("container"));
  // Every series named in the legend (Vega's default stops at 30 and drops the rest).
  Json legend = jobj();
  set(legend, "symbolLimit", jint(0));
  Json config = jobj();
  set(config, "legend", legend);
  // Readable ticks: about six on a number axis, labels that would overlap
  // left out (a log axis otherwise labels every 2, 3, 4... of each decade).
  Json quantitative = jobj();
  set(quantitative, "tickCount", jint(6));
  set(quantitative, "labelOverlap", jstr("greedy"));
  set(config, "axisQuantitative", quantitative);
  set(s, "config", config);
  return s;
}

Json field(const std::string& name, const char* type, const std::string& title = "") {
  Json f = jobj();
  set(f, "field", jstr(name));
  set(f, "type", jstr(type));
  if (!title.empty()) set(f, "title", jstr(title));
  return f;
}

Json mark(const char* type) {
  Json m = jobj();
  set(m, "type", jstr(type));
  return m;
}

// A chart's tooltip: each figure titled with its unit and rounded as the
// tables round it (minutes to four significant digits, counts with
// separators, efficiency as a percent); other fields as text.
Json tooltips(const std::vector<std::string>& names) {
  Json t = jarr();
  for (const auto& n : names) {
    Json f;
    if (n == "minutes") {
      f = field(n, "quantitative", "Minutes");
      set(f, "format", jstr(".4r"));
    } else if (n == "accelerators") {
      f = field(n, "quantitative", "Accelerators");
      set(f, "format", jstr(",d"));
    } else if (n == "efficiency") {
      f = field(n, "quantitative", "Efficiency");
      set(f, "format", jstr(".1%"));
    } else {
      f = field(n, "nominal");
    }
    t.items.push_back(f);
  }
  return t;
}

Json log_scale() {
  Json s = jobj();
  set(s, "type", jstr("log"));
  return s;
}

Json filter_kind(const std::string& kind) {
  Json t = jobj();
  set(t, "filter", jstr("datum.kind === '" + kind + "'"));
  return jarr({t});
}

Json datum(double v) {
  Json d = jobj();
  set(d, "datum", jnum(v));
  return d;
}

// The values of `name` (numbers), and how many distinct texts it holds.
std::vector<double> numbers(const Json& values, const std::string& name) {
  std::vector<double> out;
  for (const auto& row : values.items) {
    const Json* v = row.find(name);
    if (v && v->kind == Json::Kind::Float) out.push_back(v->f);
    if (v && v->kind == Json::Kind::Int) out.push_back(static_cast<double>(v->i));
  }
  return out;
}

size_t distinct(const Json& values, const std::string& name) {
  std::set<std::string> seen;
  for (const auto& row : values.items) {
    const Json* v = row.find(name);
    if (v && v->kind == Json::Kind::String) seen.insert(v->s);
  }
  return seen.size();
}

}  // namespace

bool wide_spread(const std::vector<double>& figures) {
  double lo = 0, hi = 0;
  for (double f : figures) {
    if (!(f > 0)) return false;  // a log scale cannot show 0 or less
    if (lo == 0 || f < lo) lo = f;
    if (f > hi) hi = f;
  }
  return lo > 0 && hi / lo >= kLogSpread;
}

namespace {

// The series' colours: Vega's ten while they are enough, twenty (Tableau's
// palette) beyond; past twenty the convergence chart dashes its lines by run
// as well, so that no two runs look alike.
Json series_color(const Json& values, const std::string& name, const std::string& title) {
  Json c = field(name, "nominal", title);
  if (distinct(values, name) > 10) {
    Json sc = jobj();
    set(sc, "scheme", jstr("tableau20"));
    set(c, "scale", sc);
  }
  return c;
}

// A legend that shows and hides series: a click on an entry keeps that series
// (shift-click adds more), the others fade; a click on empty space brings them
// all back. The selection lives in one layer; every layer fades with it.
const char* const kPick = "pick";

Json legend_pick(const std::string& name) {
  Json p = jobj();
  set(p, "name", jstr(kPick));
  Json sel = jobj();
  set(sel, "type", jstr("point"));
  set(sel, "fields", jarr({jstr(name)}));
  set(p, "select", sel);
  set(p, "bind", jstr("legend"));
  return jarr({p});
}

Json faded(double shown = 1, double hidden = 0.12) {
  Json cond = jobj();
  set(cond, "param", jstr(kPick));
  set(cond, "value", jnum(shown));
  Json o = jobj();
  set(o, "condition", cond);
  set(o, "value", jnum(hidden));
  return o;
}

}  // namespace

Json bars(const Json& values, const std::string& x, const std::string& x_title, const std::string& y,
          const std::string& y_title, const std::string& color, const std::vector<std::string>& tooltip) {
  Json s = base(values);
  set(s, "mark", mark("bar"));
  Json enc = jobj();
  Json fx = field(x, "nominal", x_title);
  set(fx, "sort", jnull());
  set(enc, "x", fx);
  Json fy = field(y, "quantitative", y_title);
  if (wide_spread(numbers(values, y))) {
    set(fy, "scale", log_scale());
    set(fy, "stack", jnull());  // one bar per x: stacked bars would start at 0, which a log scale cannot show
    set(fy, "title", jstr(y_title + " (log scale)"));
  }
  set(enc, "y", fy);
  if (!color.empty()) {
    set(enc, "color", series_color(values, color, ""));
    set(enc, "opacity", faded());
    set(s, "params", legend_pick(color));
  }
  set(enc, "tooltip", tooltips(tooltip));
  set(s, "encoding", enc);
  return s;
}

Json rounds_line(const Json& values, const std::string& group_title) {
  Json s = base(values);
  Json fx = field("round", "ordinal", "Round");
  set(fx, "sort", jnull());
  Json fy = field("minutes", "quantitative", "Minutes (fastest closed result)");
  set(fy, "scale", log_scale());
  Json line = jobj();
  set(line, "mark", mark("line"));
  Json enc = jobj();
  set(enc, "x", fx);
  set(enc, "y", fy);
  Json color = series_color(values, "group", group_title);
  set(enc, "color", color);
  set(enc, "opacity", faded());
  set(line, "params", legend_pick("group"));
  set(line, "encoding", enc);
  // The points: a record carried into a round (a resubmission of an earlier
  // result) is a triangle, a new result a circle.
  Json points = jobj();
  Json pm = mark("point");
  set(pm, "size", jint(70));
  set(pm, "filled", jbool(true));
  set(points, "mark", pm);
  Json penc = jobj();
  set(penc, "x", fx);
  set(penc, "y", fy);
  set(penc, "color", color);
  set(penc, "opacity", faded());
  Json shape = field("record", "nominal", "Result");
  Json shape_scale = jobj();
  set(shape_scale, "domain", jarr({jstr("new result"), jstr("carried record")}));
  set(shape_scale, "range", jarr({jstr("circle"), jstr("triangle-up")}));
  set(shape, "scale", shape_scale);
  set(penc, "shape", shape);
  set(penc, "tooltip", tooltips({"group", "round", "system", "accelerator", "accelerators", "minutes", "result"}));
  set(points, "encoding", penc);
  set(s, "layer", jarr({line, points}));
  return s;
}

Json scaling(const Json& values) {
  Json s = base(values);
  Json x = field("accelerators", "quantitative", "Accelerators");
  set(x, "scale", log_scale());
  Json y = field("minutes", "quantitative", "Minutes");
  set(y, "scale", log_scale());
  Json measured = jobj();
  set(measured, "transform", filter_kind("measured"));
  Json m = mark("line");
  set(m, "point", jbool(true));
  set(measured, "mark", m);
  Json enc = jobj();
  set(enc, "x", x);
  set(enc, "y", y);
  Json color = series_color(values, "series", "Series");
  set(enc, "color", color);
  set(enc, "opacity", faded());
  set(enc, "tooltip", tooltips({"series", "system", "accelerators", "minutes", "efficiency"}));
  set(measured, "params", legend_pick("series"));
  set(measured, "encoding", enc);
  Json ideal = jobj();
  set(ideal, "transform", filter_kind("ideal"));
  Json dashed = mark("line");
  set(dashed, "strokeDash", jarr({jint(4), jint(4)}));
  set(ideal, "mark", dashed);
  Json enc2 = jobj();
  set(enc2, "x", x);
  set(enc2, "y", y);
  set(enc2, "color", color);
  set(enc2, "opacity", faded(0.6, 0.05));
  set(enc2, "detail", field("series", "nominal"));
  set(ideal, "encoding", enc2);
  set(s, "layer", jarr({measured, ideal}));
  return s;
}

Json runs(const Json& values) {
  Json s = base(values);
  Json dots = jobj();
  set(dots, "transform", filter_kind("run"));
  Json m = mark("point");
  set(m, "filled", jbool(true));
  set(m, "size", jint(80));
  set(dots, "mark", m);
  Json enc = jobj();
  // Minutes from near the fastest run, not from 0 (runs that differ by seconds
  // would crowd at one end); system names in full, without an axis title.
  Json x = field("minutes", "quantitative", "Minutes");
  Json xs = jobj();
  set(xs, "zero", jbool(false));
  set(xs, "nice", jbool(false));
  set(xs, "padding", jint(12));
  std::vector<double> minutes;
  for (const auto& row : values.items) {
    const Json* k = row.find("kind");
    if (k && k->s == "run") {
      const Json* m = row.find("minutes");
      if (m && m->kind == Json::Kind::Float) minutes.push_back(m->f);
      if (m && m->kind == Json::Kind::Int) minutes.push_back(static_cast<double>(m->i));
    }
  }
  if (wide_spread(minutes)) {
    // A log scale has no zero to leave out (Vega-Lite warns of a "zero" it drops).
    xs = jobj();
    set(xs, "type", jstr("log"));
    set(xs, "nice", jbool(false));
    set(x, "title", jstr("Minutes (log scale)"));
  }
  set(x, "scale", xs);
  // A height in pixels, not a step per system: a chart as wide as its
  // container with a discrete height is one Vega-Lite cannot fit (it warns).
  set(s, "height", jint(static_cast<long long>(24 * std::max<size_t>(2, distinct(values, "system")))));
  Json y = field("system", "nominal");
  Json ya = jobj();
  set(ya, "labelLimit", jint(0));
  set(ya, "title", jnull());  // the labels are the systems; a title would sit over the long ones
  set(y, "axis", ya);
  set(enc, "x", x);
  set(enc, "y", y);
  set(enc, "color", field("status", "nominal", "Run"));
  set(enc, "tooltip", tooltips({"system", "file", "minutes", "status"}));
  set(dots, "encoding", enc);
  Json score = jobj();
  set(score, "transform", filter_kind("score"));
  Json t = mark("tick");
  set(t, "thickness", jint(3));
  set(t, "color", jstr("black"));
  set(score, "mark", t);
  Json enc2 = jobj();
  set(enc2, "x", x);
  set(enc2, "y", y);
  set(enc2, "tooltip", tooltips({"system", "minutes", "status"}));
  set(score, "encoding", enc2);
  set(s, "layer", jarr({dots, score}));
  return s;
}

Json energy(const Json& values) {
  Json s = base(values);
  Json m = mark("point");
  set(m, "filled", jbool(true));
  set(m, "size", jint(90));
  set(s, "mark", m);
  Json enc = jobj();
  Json x = field("minutes", "quantitative", "Minutes to train");
  Json y = field("energy_kwh", "quantitative", "Energy to train (kWh)");
  for (auto* axis : {&x, &y}) {
    const std::string name = axis->find("field")->s;
    Json sc = jobj();
    if (wide_spread(numbers(values, name))) set(sc, "type", jstr("log"));  // a log scale has no zero to leave out
    else set(sc, "zero", jbool(false));
    set(*axis, "scale", sc);
  }
  set(enc, "x", x);
  set(enc, "y", y);
  set(enc, "color", series_color(values, "submitter", "Submitter"));
  set(enc, "opacity", faded());
  Json tips = tooltips({"system", "minutes", "accelerators"});
  Json kwh = field("energy_kwh", "quantitative", "Energy (kWh)");
  set(kwh, "format", jstr(",.1f"));
  tips.items.push_back(kwh);
  set(enc, "tooltip", tips);
  set(s, "params", legend_pick("submitter"));
  set(s, "encoding", enc);
  return s;
}

Json convergence(const Json& values, const std::string& x_title, const std::string& metric, bool has_target,
                 double target, const RcpLines& rcp) {
  Json s = base(values);
  Json layers = jarr();
  // The band and rules carry one datum of their own: on the chart's data they
  // would be drawn once per row, and a light band over 40 rows is opaque.
  auto one = [] {
    Json d = jobj();
    set(d, "values", jarr({jobj()}));
    return d;
  };
  // The RCP's mean ± stdev first, so that the runs are drawn over it.
  if (rcp.has_rcp) {
    Json band = jobj();
    set(band, "data", one());
    Json r = mark("rect");
    set(r, "color", jstr("#888888"));
    set(r, "opacity", jnum(0.18));
    set(band, "mark", r);
    Json e = jobj();
    set(e, "x", datum(rcp.mean - rcp.stdev));
    set(e, "x2", datum(rcp.mean + rcp.stdev));
    set(band, "encoding", e);
    layers.items.push_back(band);
  }
  Json lines = jobj();
  Json m = mark("line");
  set(m, "point", jbool(true));
  set(lines, "mark", m);
  Json enc = jobj();
  set(enc, "x", field("x", "quantitative", x_title));
  Json y = field("metric", "quantitative", metric);
  Json sc = jobj();
  set(sc, "zero", jbool(false));
  set(y, "scale", sc);
  set(enc, "y", y);
  set(enc, "color", series_color(values, "run", "Run"));
  set(enc, "opacity", faded());
  if (distinct(values, "run") > 20) set(enc, "strokeDash", field("run", "nominal", "Run"));
  set(enc, "tooltip", tooltips({"run", "x", "metric"}));
  set(lines, "params", legend_pick("run"));
  set(lines, "encoding", enc);
  layers.items.push_back(lines);
  // The reference lines are black and grey, labelled where they are drawn:
  // the runs take the colours, so no run is mistaken for a reference.
  auto rule = [&one](const char* axis, double v, const char* color, bool dash) {
    Json l = jobj();
    set(l, "data", one());
    Json r = mark("rule");
    set(r, "color", jstr(color));
    set(r, "strokeWidth", jnum(1.5));
    if (dash) set(r, "strokeDash", jarr({jint(6), jint(4)}));
    set(l, "mark", r);
    Json e = jobj();
    set(e, axis, datum(v));
    set(l, "encoding", e);
    return l;
  };
  auto label = [&one](const char* axis, double v, const std::string& text, int offset) {
    Json l = jobj();
    set(l, "data", one());
    Json t = mark("text");
    set(t, "text", jstr(text));
    set(t, "color", jstr("#222222"));
    set(t, "fontSize", jint(11));
    set(t, "align", jstr("left"));
    set(t, "dx", jint(4));
    set(t, "dy", jint(axis[0] == 'y' ? -6 : 0));
    set(l, "mark", t);
    Json e = jobj();
    set(e, axis, datum(v));
    Json px = jobj();
    set(px, "value", jint(offset));
    set(e, axis[0] == 'y' ? "x" : "y", px);
    set(l, "encoding", e);
    return l;
  };
  if (has_target) {
    layers.items.push_back(rule("y", target, "#222222", true));
    layers.items.push_back(label("y", target, "target", 0));
  }
  if (rcp.has_rcp) {
    layers.items.push_back(rule("x", rcp.mean, "#222222", false));
    layers.items.push_back(label("x", rcp.mean, "RCP mean", 10));
    layers.items.push_back(rule("x", rcp.min_accepted, "#666666", true));
    layers.items.push_back(label("x", rcp.min_accepted, "least accepted", 24));
  }
  set(s, "layer", layers);
  return s;
}

}  // namespace referee::reports::charts
