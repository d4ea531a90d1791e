// referee's page script: renders the page JSON (<script id="referee-page">,
// schema referee.page/1, docs/reports.md) into #referee-main: sections, notes,
// charts (vega-embed, SVG) each with its data one click away, and tables with
// filters, sortable columns and a baseline switch.
//
// Plain ES2019, no build step. It never uses the network (everything a page
// shows is inline) and never parses data as HTML: every text goes in through
// textContent. When everything is drawn it sets
// document.body.dataset.rendered = "true"; on a failure it sets
// document.body.dataset.renderError to the message and logs it.
(function () {
  "use strict";

  var NULL_TEXT = "\u2013"; // "–"
  var SHORT_TEXT = 24;       // cells with at most this many characters do not wrap
  var LONG_TEXT = 160;       // longer cells show their first LONG_TEXT_SHOWN characters, the rest on a click
  var LONG_TEXT_SHOWN = 110;
  var body = document.body;
  var failed = false;

  window.refereeViews = {};

  function fail(message, error) {
    if (!failed) {
      failed = true;
      body.dataset.renderError = message;
    }
    console.error("referee: " + message, error === undefined ? "" : error);
  }

  window.addEventListener("error", function (event) {
    fail("script error: " + (event.message || "unknown"), event.error);
  });
  window.addEventListener("unhandledrejection", function (event) {
    var reason = event.reason;
    fail("unhandled failure: " + (reason && reason.message ? reason.message : String(reason)), reason);
  });

  // ------------------------------------------------------------ DOM helpers

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (name) {
        var value = attrs[name];
        if (value === undefined || value === null || value === false) return;
        if (name === "text") node.textContent = String(value);
        else if (name === "className") node.className = value;
        else node.setAttribute(name, value === true ? "" : String(value));
      });
    }
    (children || []).forEach(function (child) {
      if (child === null || child === undefined) return;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  // Only relative links and web addresses become links; anything else (a
  // javascript: or data: address) is shown as text.
  function safeHref(href) {
    if (typeof href !== "string" || href === "") return null;
    var scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(href);
    if (!scheme) return href;
    var s = scheme[1].toLowerCase();
    return s === "http" || s === "https" || s === "mailto" ? href : null;
  }

  function link(text, href, attrs) {
    var safe = safeHref(href);
    if (safe === null) return el("span", { text: text });
    var a = el("a", Object.assign({ href: safe }, attrs || {}), []);
    a.textContent = text;
    return a;
  }

  function slug(s) {
    return String(s).replace(/[^A-Za-z0-9_-]/g, "_");
  }

  // ------------------------------------------------------------ values

  var numberFormats = {};
  function formatNumber(value, digits) {
    var key = digits === undefined || digits === null ? "auto" : String(digits);
    if (!numberFormats[key]) {
      numberFormats[key] =
        key === "auto"
          ? new Intl.NumberFormat("en-US", { maximumFractionDigits: 6 })
          : new Intl.NumberFormat("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
    }
    return numberFormats[key].format(value);
  }

  // A score in minutes, as every sentence and terminal table prints it
  // (submissions::minutes_text): four significant digits, rounded from the
  // number's exact value as printf rounds it (toFixed), so that a sentence
  // and a table never disagree in the last digit.
  function minutesText(v) {
    var a = Math.abs(v);
    var d = a < 1 ? 4 : a < 10 ? 3 : a < 100 ? 2 : a < 1000 ? 1 : 0;
    var bound = a < 1 ? 1 : a < 10 ? 10 : a < 100 ? 100 : 1000;
    if (a < 1000 && d > 0 && Number(a.toFixed(d)) >= bound) d -= 1;
    // printf rounds an exact tie (224.25 to one decimal) to even, toFixed up: the exact expansion tells a tie.
    var exact = a.toFixed(Math.min(100, d + 60));
    var rest = exact.slice(exact.length - 60);
    if (/^50*$/.test(rest)) {
      var kept = exact.slice(0, exact.length - 60);
      if (d === 0) kept = kept.slice(0, -1);  // "1234." -> "1234"
      var last = kept.charCodeAt(kept.length - 1) - 48;
      if (last % 2 === 0) return (v < 0 ? "-" : "") + kept;
    }
    return v.toFixed(d);
  }

  function isNull(value) {
    return value === null || value === undefined || (typeof value === "number" && !isFinite(value));
  }

  // The text a cell shows (also what filters list and what text sorts by).
  function cellText(column, value) {
    if (isNull(value)) return NULL_TEXT;
    switch (column.type) {
      case "number":
        return typeof value === "number" ? formatNumber(value, column.digits) : String(value);
      case "minutes":
        return typeof value === "number" ? minutesText(value) : String(value);
      case "percent":
        return typeof value === "number"
          ? formatNumber(value * 100, column.digits === undefined ? 1 : column.digits) + "%"
          : String(value);
      case "change": // a signed percent, as the terminal prints a change: +7.4%, -36.3%
        return typeof value === "number"
          ? (value >= 0 ? "+" : "") + formatNumber(value * 100, column.digits === undefined ? 1 : column.digits) + "%"
          : String(value);
      case "link":
        return typeof value === "object" ? String(value.text === undefined ? "" : value.text) : String(value);
      default:
        return typeof value === "object" ? JSON.stringify(value) : String(value);
    }
  }

  // What a filter compares: the shown text of a link, the value otherwise.
  function plainText(value) {
    if (isNull(value)) return NULL_TEXT;
    if (typeof value === "object") return String(value.text === undefined ? JSON.stringify(value) : value.text);
    return String(value);
  }

  function sortKey(column, value) {
    if (isNull(value)) return null;
    if (column.type === "link") return plainText(value);
    return value;
  }

  function compareKeys(a, b) {
    if (a === null && b === null) return 0;
    if (a === null) return 1; // empty cells last, whichever the direction
    if (b === null) return -1;
    if (typeof a === "number" && typeof b === "number") return a - b;
    return String(a).localeCompare(String(b), "en", { numeric: true });
  }

  function formatRatio(r) {
    return formatNumber(r, 2) + "x";
  }

  // ------------------------------------------------------------ charts

  // Every inline data set of a spec, its layers and concatenations.
  function inlineValues(spec, out) {
    out = out || [];
    if (!spec || typeof spec !== "object") return out;
    if (spec.data && Array.isArray(spec.data.values)) out.push(spec.data.values);
    ["layer", "concat", "hconcat", "vconcat"].forEach(function (k) {
      if (Array.isArray(spec[k])) spec[k].forEach(function (s) { inlineValues(s, out); });
    });
    if (spec.spec) inlineValues(spec.spec, out);
    return out;
  }

  function dataTable(rows) {
    var keys = [];
    rows.forEach(function (row) {
      if (row && typeof row === "object") {
        Object.keys(row).forEach(function (k) { if (keys.indexOf(k) < 0) keys.push(k); });
      }
    });
    var head = el("tr", null, keys.map(function (k) { return el("th", { scope: "col", text: k }); }));
    var tbody = el("tbody");
    rows.forEach(function (row) {
      tbody.appendChild(el("tr", null, keys.map(function (k) {
        var v = row ? row[k] : undefined;
        var text = isNull(v) ? NULL_TEXT : typeof v === "object" ? JSON.stringify(v) : String(v);
        return el("td", { className: typeof v === "number" ? "num" : null, text: text });
      })));
    });
    return el("table", { className: "data-table" }, [el("thead", null, [head]), tbody]);
  }

  var currentPage = {};  // the page model being drawn (render)

  // A CSV cell as referee writes one (RFC 4180): numbers as numbers, a link
  // as its text, a text that a spreadsheet would run as a formula (= + - @,
  // tab, carriage return first) after a "'", quoted where it holds a comma,
  // a quote or a line break.
  function csvCell(v) {
    var text;
    var isText = false;
    if (v === null || v === undefined) return "";
    if (typeof v === "boolean") return v ? "true" : "false";
    if (typeof v === "number") return isFinite(v) ? String(v) : "";
    if (typeof v === "string") {
      text = v;
      isText = true;
    } else if (typeof v === "object" && !Array.isArray(v) && typeof v.text === "string") {
      text = v.text;
      isText = true;
    } else {
      text = JSON.stringify(v);
    }
    if (isText && /^[=+\-@\t\r]/.test(text)) text = "'" + text;
    if (/[,"\r\n]/.test(text)) text = '"' + text.replace(/"/g, '""') + '"';
    return text;
  }

  function csvText(keys, rows) {
    var lines = [keys.map(csvCell).join(",")];
    rows.forEach(function (row) {
      lines.push(keys.map(function (k) { return csvCell(row ? row[k] : null); }).join(","));
    });
    return lines.join("\r\n") + "\r\n";
  }

  // The keys of a chart's data rows, in the order they first appear.
  function rowKeys(rows) {
    var keys = [];
    rows.forEach(function (row) {
      if (row && typeof row === "object") {
        Object.keys(row).forEach(function (k) { if (keys.indexOf(k) < 0) keys.push(k); });
      }
    });
    return keys;
  }

  // A file made from what the page holds, handed to the browser as a download.
  function offer(name, type, text) {
    var url = URL.createObjectURL(new Blob([text], { type: type }));
    var a = el("a", { href: url, download: name, hidden: "hidden" });
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 60000);
  }

  // The page's name for its downloads: its path in the site, folders joined
  // with "-" ("rounds-R-gpt3" for rounds/R/gpt3.html), so that the same
  // table of two rounds never gets one file name. The page model's root
  // ("../../") says how many folders deep the page is.
  function pageStem(page) {
    var depth = (String(page.root || "").match(/\.\.\//g) || []).length;
    var parts = location.pathname.split("/").filter(function (p) { return p; });
    var mine = parts.slice(Math.max(0, parts.length - depth - 1)).map(function (p) { return decodeURIComponent(p); });
    return mine.join("-").replace(/\.html?$/, "") || "index";
  }

  // Where the report has data files (`referee report --data-files`, and a
  // served page), links to them; otherwise buttons that make the same CSV
  // and JSON from the page's own data. `make` gives {keys, rows, json}.
  function downloads(item, make) {
    var p = el("p", { className: "downloads" }, ["Download: "]);
    var parts = [];
    if (item.csv || item.json) {
      if (item.csv) parts.push(link("CSV", item.csv, { download: "" }));
      if (item.json) parts.push(link("JSON", item.json, { download: "" }));
    } else {
      var stem = pageStem(currentPage) + "-" + item.id;
      var csv = el("button", { type: "button", className: "download", "data-download": "csv", text: "CSV" });
      csv.addEventListener("click", function () {
        var d = make();
        offer(stem + ".csv", "text/csv;charset=utf-8", csvText(d.keys, d.rows));
      });
      var json = el("button", { type: "button", className: "download", "data-download": "json", text: "JSON" });
      json.addEventListener("click", function () {
        offer(stem + ".json", "application/json", JSON.stringify(make().json));
      });
      parts.push(csv, json);
    }
    parts.forEach(function (a, i) {
      if (i) p.appendChild(document.createTextNode(" \u00b7 "));
      p.appendChild(a);
    });
    return p;
  }

  // The spec handed to vega-embed: a copy without "$schema", so that the
  // bundled Vega-Lite compiles it without a version warning (the spec is
  // Vega-Lite in any case; mode says so).
  function embeddable(spec) {
    var copy = Object.assign({}, spec);
    delete copy.$schema;
    return copy;
  }

  // The chart's specification with its main data back in place: the page
  // writes that data once per key (chart.rows: blocks of {fields, values}).
  function fullSpec(chart) {
    if (!Array.isArray(chart.rows)) return chart.spec;
    var values = [];
    chart.rows.forEach(function (block) {
      (block.values || []).forEach(function (row) {
        var o = {};
        block.fields.forEach(function (k, i) { o[k] = row[i]; });
        values.push(o);
      });
    });
    var spec = Object.assign({}, chart.spec);
    spec.data = { values: values };
    return spec;
  }

  function renderChart(chart) {
    var view = el("div", { className: "chart-view", id: "chart-" + slug(chart.id), role: "img",
                           "aria-label": chart.title || chart.id });
    var spec = fullSpec(chart);
    var values = inlineValues(spec);
    var rows = values.length ? values[0] : [];
    if (values.length > 1) rows = values.reduce(function (all, v) { return all.concat(v); }, []);
    var details = el("details", { className: "chart-data" }, [
      el("summary", { text: "Data" }),
      el("div", { className: "table-scroll" }, [dataTable(rows)]),
      downloads(chart, function () {
        // The chart's main data (what its data file holds), else everything it draws.
        var main = spec.data && Array.isArray(spec.data.values) ? spec.data.values : rows;
        return { keys: rowKeys(main), rows: main, json: main };
      })
    ]);
    var figure = el("figure", { className: "chart", "data-chart": chart.id }, [
      chart.title ? el("figcaption", { text: chart.title }) : null,
      view,
      details
    ]);
    var done;
    if (typeof window.vegaEmbed !== "function") {
      done = Promise.reject(new Error("vega-embed is not loaded (assets/vega-embed.min.js)"));
    } else {
      done = Promise.resolve().then(function () {
        return window.vegaEmbed(view, embeddable(spec), { renderer: "svg", actions: false, mode: "vega-lite" });
      }).then(function (result) {
        window.refereeViews[chart.id] = result.view;
      });
    }
    return {
      node: figure,
      done: done.catch(function (err) {
        throw new Error("chart " + chart.id + ": " + (err && err.message ? err.message : String(err)));
      })
    };
  }

  // ------------------------------------------------------------ tables

  // ------------------------------------------------------------ the view in the address

  // A table's filters, search, sort and baseline live in the address's
  // fragment (#speedups.f.group=NVIDIA&speedups.sort=speedup), so that a view
  // can be shared and survives a reload. A fragment without "=" is an anchor
  // (#head-to-head), not state.
  function hashParams() {
    var h = location.hash.slice(1);
    if (h.indexOf("=") < 0) return new URLSearchParams("");
    return new URLSearchParams(h);
  }

  function saveHash(prefix, entries) {
    var p = hashParams();
    var old = [];
    p.forEach(function (v, k) { if (k.indexOf(prefix) === 0) old.push(k); });
    old.forEach(function (k) { p.delete(k); });
    entries.forEach(function (e) { p.set(prefix + e[0], e[1]); });
    var text = p.toString();
    var next = text ? "#" + text : location.pathname + location.search;
    if (("#" + text) === location.hash || (!text && !location.hash)) return;
    try {
      history.replaceState(history.state, "", next);
    } catch (e) {
      location.replace(text ? "#" + text : "#");  // file:// pages in browsers that refuse replaceState there
    }
  }

  function renderTable(table) {
    var columns = Array.isArray(table.columns) ? table.columns : [];
    var rows = Array.isArray(table.rows) ? table.rows : [];
    var filters = (Array.isArray(table.filters) ? table.filters : []).filter(function (key) {
      return rows.some(function (r) { return Object.prototype.hasOwnProperty.call(r, key); });
    });
    var baseline = table.baseline && table.baseline.value ? table.baseline : null;
    var id = slug(table.id);
    var state = { filter: {}, sort: null, dir: 1, base: -1, q: "" };
    var prefix = id + ".";
    var saved = hashParams();
    var ready = false;  // the first drawing reads the address; later ones write it
    // Columns the model marks optional start hidden; the reader shows or hides any column under "Columns".
    var hidden = {};
    columns.forEach(function (c) { if (c.optional) hidden[c.key] = true; });

    function columnFor(key) {
      for (var i = 0; i < columns.length; i++) if (columns[i].key === key) return columns[i];
      return { key: key, type: "text", label: key };
    }

    // Controls: a select per filter key, the baseline select, a reset button.
    var controls = el("div", { className: "controls" });
    var selects = [];
    filters.forEach(function (key) {
      var column = columnFor(key);
      var distinct = [];
      rows.forEach(function (r) {
        var t = plainText(r[key]);
        if (distinct.indexOf(t) < 0) distinct.push(t);
      });
      distinct.sort(function (a, b) { return a.localeCompare(b, "en", { numeric: true }); });
      var selectId = "filter-" + id + "-" + slug(key);
      var select = el("select", { id: selectId, "data-filter": key },
        [el("option", { value: "", text: "All" })].concat(distinct.map(function (v) {
          return el("option", { value: v, text: v });
        })));
      var want = saved.get(prefix + "f." + key);
      if (want !== null && distinct.indexOf(want) >= 0) {
        state.filter[key] = want;
        select.value = want;
      }
      select.addEventListener("change", function () {
        state.filter[key] = select.value;
        update();
      });
      selects.push(select);
      controls.appendChild(el("span", { className: "control" }, [
        el("label", { "for": selectId, text: column.label || key }), select
      ]));
    });

    // Each row's name as a baseline: its label column, and where several rows
    // share that label (one system fastest overall and for its submitter, or
    // in two rounds) the text cells that tell them apart (round, group, ...).
    var baseNames = [];
    if (baseline) {
      var nameColumn = columnFor(baseline.label);
      var plain = rows.map(function (r) { return cellText(nameColumn, r[baseline.label]); });
      baseNames = rows.map(function (r, i) {
        var same = [];
        plain.forEach(function (p, j) { if (p === plain[i]) same.push(j); });
        if (same.length < 2) return plain[i];
        var parts = [];
        columns.forEach(function (c) {
          if (c.key === baseline.label || (c.type && c.type !== "text")) return;
          var mine = plainText(r[c.key]);
          if (same.some(function (j) { return plainText(rows[j][c.key]) !== mine; })) parts.push(mine);
        });
        if (!parts.length) parts.push("row " + (i + 1));
        return plain[i] + " (" + parts.join(", ") + ")";
      });
    }

    var baseSelect = null;
    if (baseline) {
      var baseId = "baseline-" + id;
      baseSelect = el("select", { id: baseId, "data-baseline": "" },
        [el("option", { value: "", text: "Absolute values" })].concat(rows.map(function (r, i) {
          return el("option", { value: String(i), text: "Relative to " + baseNames[i] });
        })));
      baseSelect.addEventListener("change", function () {
        state.base = baseSelect.value === "" ? -1 : Number(baseSelect.value);
        if (state.base < 0 && state.sort === "__relative") state.sort = null;
        update();
      });
      controls.appendChild(el("span", { className: "control" }, [
        el("label", { "for": baseId, text: "Show" }), baseSelect
      ]));
    }
    // Search: rows whose text holds every word typed (any column, any case), for tables of more than five rows.
    var search = null;
    if (rows.length > 5) {
      var searchId = "search-" + id;
      search = el("input", { type: "search", id: searchId, "data-search": "", placeholder: "Words in any column",
                             autocomplete: "off" });
      var q = saved.get(prefix + "q");
      if (q) {
        state.q = q;
        search.value = q;
      }
      search.addEventListener("input", function () {
        state.q = search.value;
        update();
      });
      controls.appendChild(el("span", { className: "control" }, [el("label", { "for": searchId, text: "Search" }), search]));
    }
    if (selects.length || search) {
      var reset = el("button", { type: "button", className: "reset", text: "Reset filters" });
      reset.addEventListener("click", function () {
        selects.forEach(function (s) { s.value = ""; });
        state.filter = {};
        if (search) search.value = "";
        state.q = "";
        update();
      });
      controls.appendChild(reset);
    }
    // The row texts the search looks in, once.
    var rowText = rows.map(function (r) {
      return columns.map(function (c) { return cellText(c, r[c.key]); }).join(" \u0001 ").toLowerCase();
    });
    if (baseSelect) {
      var b = saved.get(prefix + "base");
      if (b !== null && /^[0-9]+$/.test(b) && Number(b) < rows.length) {
        state.base = Number(b);
        baseSelect.value = String(state.base);  // "01" names row 1
      }
    }
    var sortKeyWanted = saved.get(prefix + "sort");
    if (sortKeyWanted && (sortKeyWanted === "__relative" ? state.base >= 0
                          : columns.some(function (c) { return c.key === sortKeyWanted; }))) {
      state.sort = sortKeyWanted;
      state.dir = saved.get(prefix + "dir") === "-1" ? -1 : 1;
    }

    var thead = el("thead");
    var tbody = el("tbody");
    var count = el("p", { className: "row-count", "aria-live": "polite" });
    var tableNode = el("table", { className: "referee-table", id: "table-" + id, "data-table": table.id }, [
      table.title ? el("caption", { text: table.title }) : null, thead, tbody
    ]);

    function relativeColumn() {
      var label = rows[state.base] ? baseNames[state.base] : "";
      return { key: "__relative", label: "Speedup vs " + label, type: "ratio" };
    }

    function relativeValue(row) {
      var base = rows[state.base] ? rows[state.base][baseline.value] : null;
      var v = row[baseline.value];
      if (typeof base !== "number" || typeof v !== "number" || v === 0) return null;
      return base / v;
    }

    function shownColumns() {
      var cols = columns.filter(function (c) { return !hidden[c.key]; });
      if (baseline && state.base >= 0) {
        var rel = relativeColumn();
        var at = -1;
        for (var i = 0; i < cols.length; i++) if (cols[i].key === baseline.value) at = i;
        cols.splice(at + 1, 0, rel);
      }
      return cols;
    }

    function header(cols) {
      thead.textContent = "";
      var tr = el("tr");
      cols.forEach(function (col) {
        var sorted = state.sort === col.key;
        var th = el("th", {
          scope: "col",
          className: col.type === "text" || col.type === "link" ? null : "num",
          "aria-sort": sorted ? (state.dir > 0 ? "ascending" : "descending") : "none"
        });
        var button = el("button", { type: "button", className: "sort", "data-sort": col.key }, [
          col.label || col.key,
          el("span", { className: "sort-mark", "aria-hidden": "true", text: sorted ? (state.dir > 0 ? " \u25b2" : " \u25bc") : "" })
        ]);
        button.addEventListener("click", function () {
          if (state.sort === col.key) state.dir = -state.dir;
          else { state.sort = col.key; state.dir = 1; }
          update();
        });
        th.appendChild(button);
        tr.appendChild(th);
      });
      thead.appendChild(tr);
    }

    function cell(col, row) {
      if (col.key === "__relative") {
        var r = relativeValue(row);
        return el("td", { className: "num relative", text: r === null ? NULL_TEXT : formatRatio(r) });
      }
      var value = row[col.key];
      var text = cellText(col, value);
      // Short texts (names, rounds) stay on one line; long ones wrap.
      var short = text.length <= SHORT_TEXT ? "short" : null;
      if (col.type === "link" && value && typeof value === "object" && value.href) {
        return el("td", { className: short || "name" }, [link(text, value.href)]);
      }
      var numeric = col.type === "number" || col.type === "percent" || col.type === "change" || col.type === "minutes";
      // A long text (a reason, a note) shows its start; the rest opens in place, so that rows stay short.
      if (!numeric && text.length > LONG_TEXT) {
        return el("td", { className: "long" }, [
          el("details", {}, [el("summary", { text: text.slice(0, LONG_TEXT_SHOWN) + "\u2026" }), el("span", { text: text })])
        ]);
      }
      return el("td", { className: numeric ? "num" : short, text: text });
    }

    function update() {
      var cols = shownColumns();
      header(cols);
      var words = state.q.toLowerCase().split(/\s+/).filter(function (w) { return w; });
      var order = rows.map(function (r, i) { return i; }).filter(function (i) {
        return filters.every(function (key) {
          var want = state.filter[key];
          return !want || plainText(rows[i][key]) === want;
        }) && words.every(function (w) { return rowText[i].indexOf(w) >= 0; });
      });
      if (state.sort) {
        var col = state.sort === "__relative" ? { key: "__relative", type: "ratio" } : columnFor(state.sort);
        order.sort(function (a, b) {
          var ka = col.key === "__relative" ? relativeValue(rows[a]) : sortKey(col, rows[a][col.key]);
          var kb = col.key === "__relative" ? relativeValue(rows[b]) : sortKey(col, rows[b][col.key]);
          var c = ka === null || kb === null ? compareKeys(ka, kb) : state.dir * compareKeys(ka, kb);
          return c || a - b;
        });
      }
      tbody.textContent = "";
      order.forEach(function (i) {
        var tr = el("tr", { "data-row": String(i), className: i === state.base ? "baseline-row" : null });
        cols.forEach(function (col) { tr.appendChild(cell(col, rows[i])); });
        tbody.appendChild(tr);
      });
      count.textContent = order.length === rows.length
        ? rows.length + (rows.length === 1 ? " row" : " rows")
        : order.length + " of " + rows.length + " rows";
      if (ready) {
        var entries = [];
        filters.forEach(function (key) { if (state.filter[key]) entries.push(["f." + key, state.filter[key]]); });
        if (state.q) entries.push(["q", state.q]);
        if (state.sort) entries.push(["sort", state.sort]);
        if (state.sort && state.dir < 0) entries.push(["dir", "-1"]);
        if (state.base >= 0) entries.push(["base", String(state.base)]);
        saveHash(prefix, entries);
      }
    }

    // The column choice: a checkbox per column, the optional ones unticked.
    var chooser = null;
    if (columns.length > 4) {
      var boxes = columns.map(function (c) {
        var boxId = "column-" + id + "-" + slug(c.key);
        var box = el("input", { type: "checkbox", id: boxId, "data-column": c.key });
        box.checked = !hidden[c.key];
        box.addEventListener("change", function () {
          hidden[c.key] = !box.checked;
          if (hidden[c.key] && state.sort === c.key) state.sort = null;
          update();
        });
        return el("label", { "for": boxId, className: "column-choice" }, [box, " " + (c.label || c.key)]);
      });
      var optional = columns.filter(function (c) { return c.optional; }).length;
      chooser = el("details", { className: "columns" }, [
        el("summary", { text: "Columns" + (optional ? " (" + optional + " more)" : "") })
      ].concat(boxes));
    }

    update();
    ready = true;
    return el("div", { className: "table-block", "data-table-block": table.id }, [
      controls.childNodes.length ? controls : null,
      chooser,
      el("div", { className: "table-scroll" }, [tableNode]),
      count,
      downloads(table, function () {
        var keys = columns.map(function (c) { return c.key; });
        return { keys: keys, rows: rows, json: { title: table.title, columns: keys, rows: rows } };
      })
    ]);
  }

  // ------------------------------------------------------------ page

  function notes(list) {
    return (Array.isArray(list) ? list : []).map(function (text) {
      return el("p", { className: "note", text: String(text) });
    });
  }

  // A dashboard's headline numbers: label, the number large, a line under it.
  function figures(list) {
    return el("dl", { className: "figures" }, list.map(function (f) {
      return el("div", { className: "figure" }, [
        el("dt", { text: String(f.label) }),
        el("dd", { className: "figure-value", text: String(f.value) }),
        f.detail ? el("dd", { className: "figure-detail", text: String(f.detail) }) : null
      ]);
    }));
  }

  function render(page) {
    currentPage = page;
    var main = document.getElementById("referee-main");
    if (!main) throw new Error("the page has no #referee-main");
    if (!main.querySelector("h1") && page.title) main.appendChild(el("h1", { text: page.title }));

    var charts = {};
    (page.charts || []).forEach(function (c) { charts[c.id] = c; });
    var tables = {};
    (page.tables || []).forEach(function (t) { tables[t.id] = t; });
    var used = {};
    var pending = [];

    notes(page.notes).forEach(function (p) { main.appendChild(p); });

    function addChart(container, id) {
      var chart = charts[id];
      if (!chart) throw new Error("section names chart '" + id + "', which the page does not have");
      used["c:" + id] = true;
      var r = renderChart(chart);
      container.appendChild(r.node);
      pending.push(r.done);
    }
    function addTable(container, id) {
      var table = tables[id];
      if (!table) throw new Error("section names table '" + id + "', which the page does not have");
      used["t:" + id] = true;
      container.appendChild(el("div", { className: "table-section" }, [renderTable(table)]));
    }

    (page.sections || []).forEach(function (section, i) {
      var headingId = "section-" + i;
      // A section is addressable by its title ("#head-to-head"), the first of a name only.
      var anchor = section.title ? String(section.title).toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "") : "";
      if (anchor && document.getElementById(anchor)) anchor = "";
      var node = el("section", { className: "referee-section", id: anchor || null,
                                 "aria-labelledby": section.title ? headingId : null });
      if (section.title) node.appendChild(el("h2", { id: headingId, text: section.title }));
      if (Array.isArray(section.figures) && section.figures.length) node.appendChild(figures(section.figures));
      notes(section.notes).forEach(function (p) { node.appendChild(p); });
      if (section.folded && Array.isArray(section.folded.notes) && section.folded.notes.length) {
        var fold = el("details", { className: "folded-notes" }, [
          el("summary", { text: String(section.folded.title || "More notes") + " (" + section.folded.notes.length + ")" })
        ]);
        notes(section.folded.notes).forEach(function (p) { fold.appendChild(p); });
        node.appendChild(fold);
      }
      // Three charts or more (the index's one per benchmark) side by side where the screen allows.
      var chartBox = node;
      if ((section.charts || []).length > 2) {
        chartBox = el("div", { className: "chart-grid" });
        node.appendChild(chartBox);
      }
      (section.charts || []).forEach(function (id) { addChart(chartBox, id); });
      (section.tables || []).forEach(function (id) { addTable(node, id); });
      main.appendChild(node);
    });

    // Charts and tables no section names still appear, at the end.
    var rest = el("section", { className: "referee-section" });
    (page.charts || []).forEach(function (c) { if (!used["c:" + c.id]) addChart(rest, c.id); });
    (page.tables || []).forEach(function (t) { if (!used["t:" + t.id]) addTable(rest, t.id); });
    if (rest.childNodes.length) main.appendChild(rest);

    return Promise.all(pending);
  }

  function start() {
    var source = document.getElementById("referee-page");
    var page;
    try {
      if (!source) throw new Error("the page has no <script id=\"referee-page\"> with its data");
      page = JSON.parse(source.textContent);
      if (!page || page.schema !== "referee.page/1") {
        throw new Error("page data has schema " + JSON.stringify(page && page.schema) + ", expected referee.page/1");
      }
    } catch (err) {
      fail(err.message, err);
      return;
    }
    var done;
    try {
      done = render(page);
    } catch (err) {
      fail(err.message, err);
      return;
    }
    // The page is drawn after the browser looked for the address's #fragment: go there now.
    if (location.hash.length > 1 && location.hash.indexOf("=") < 0) {
      var target = null;
      try { target = document.getElementById(decodeURIComponent(location.hash.slice(1))); } catch (e) { target = null; }
      if (target) target.scrollIntoView();
    }
    done.then(function () {
      if (!failed) body.dataset.rendered = "true";
    }, function (err) {
      fail(err.message, err);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
