// Loads every page of a report folder in headless Chromium (Debian's
// /usr/bin/chromium, driven by playwright-core from reports/web/node_modules)
// from file:// and checks the rendered page against its own page JSON:
//   - the page script finished (body[data-rendered]) without renderError, and
//     no console error or page error happened on the way, and no warning of
//     the chart libraries (Vega's "WARN ..."): charts compile clean;
//   - no request left the report folder (every request is routed: file://
//     under the folder goes through, anything else is aborted and fails);
//   - every chart drew SVG marks, and the marks carry the spec's numbers
//     (the datums in the vega view's scenegraph, compared exactly);
//   - every table shows as many rows as its JSON has, and at 1,366 x 768 (a
//     laptop screen) its default columns fit its box: no key column off-screen;
//   - every relative link, stylesheet and script resolves to a file in the folder;
//   - the footer names the referee version, the rule sets and the data time;
//   - assets/LICENSES.txt carries the licence texts of vega, vega-lite and vega-embed;
//   - on one page with them: a filter narrows the table to the matching rows
//     and is kept in the address's fragment (a reload shows the same view),
//     the baseline switch shows baseline / row for every row, and a number
//     column sorts both ways (empty cells last);
// and keeps a full-page screenshot of each page.
//
// With --served URL (the /reports/ of a running `referee serve`), each page is
// loaded from the server instead (REPORT_DIR, the same report written as files,
// lists the pages and their assets): every answer must carry the server's
// Content-Security-Policy, no request may leave the server, and the page must
// render with no CSP violation (a `securitypolicyviolation` event, recorded from
// before the page's first script); on the first page an inline script is
// injected, which the policy must refuse and the checker must see refused.
// --one-per-folder checks the first page of each folder only.
// A report written without data files (the default) offers each table's and
// chart's data for download from the page itself: every page must have a CSV
// and a JSON button for each. With --data-files DIR (the same report written
// with `referee report --data-files`), on the first page of each kind every
// such download is made and compared with DIR's file: the same CSV cells
// (numbers as numbers) and the same JSON (links to the same files).
//
//   node tests/browser/check_report.mjs REPORT_DIR [--artifacts DIR] [--timeout-ms N] [--jobs N]
//                                       [--served URL] [--one-per-folder]
// (--jobs: pages checked at once, each job in its own browser context; default 2)
// Exit: 0 all pages pass; 1 a check failed (each failure printed); 2 the
// checker could not run (no browser, bad arguments).
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const require = createRequire(path.join(repo, "reports/web/package.json"));

function usage(message) {
  console.error(`check_report: ${message}`);
  console.error("usage: node tests/browser/check_report.mjs REPORT_DIR [--artifacts DIR] [--timeout-ms N] [--jobs N]");
  process.exit(2);
}

const args = process.argv.slice(2);
let reportDir = null;
let artifacts = path.join(repo, "build/test-artifacts/report-browser");
let timeoutMs = 20000;
let jobs = 2;
let servedBase = null;
let onePerFolder = false;
let dataFilesDir = null;
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--artifacts") artifacts = path.resolve(args[++i] ?? usage("--artifacts needs a folder"));
  else if (args[i] === "--timeout-ms") timeoutMs = Number(args[++i]);
  else if (args[i] === "--jobs") jobs = Math.max(1, Number(args[++i]) || 1);
  else if (args[i] === "--served") servedBase = String(args[++i] ?? usage("--served needs a URL")).replace(/\/?$/, "/");
  else if (args[i] === "--one-per-folder") onePerFolder = true;
  else if (args[i] === "--data-files") dataFilesDir = path.resolve(args[++i] ?? usage("--data-files needs a folder"));
  else if (args[i].startsWith("--")) usage(`unknown option ${args[i]}`);
  else if (reportDir === null) reportDir = path.resolve(args[i]);
  else usage(`unexpected argument ${args[i]}`);
}
if (!reportDir) usage("no report folder given");
if (!fs.existsSync(reportDir) || !fs.statSync(reportDir).isDirectory()) usage(`${reportDir} is not a folder`);
const chromiumPath = process.env.REFEREE_CHROMIUM || "/usr/bin/chromium";
if (!fs.existsSync(chromiumPath)) usage(`${chromiumPath} is missing (Debian: apt-get install chromium)`);

let chromium;
try {
  ({ chromium } = require("playwright-core"));
} catch (err) {
  usage(`playwright-core is not installed in reports/web/node_modules (run scripts/setup.sh): ${err.message}`);
}

const reportRoot = fs.realpathSync(reportDir);
const rootUrl = pathToFileURL(reportRoot + path.sep).href;

function htmlPages(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...htmlPages(p));
    else if (entry.isFile() && entry.name.endsWith(".html")) out.push(p);
  }
  return out.sort();
}

// A URL inside the report (a file:// URL in the folder, or with --served one
// under the server's /reports/), as the path of its file in the folder; null otherwise.
function insideReport(url) {
  let u;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (servedBase) {
    const href = u.origin + u.pathname;
    if (!href.startsWith(servedBase)) return null;
    const rel = decodeURIComponent(href.slice(servedBase.length));
    const p = path.resolve(reportRoot, rel || "index.html");
    return p === reportRoot || p.startsWith(reportRoot + path.sep) ? p : null;
  }
  if (u.protocol !== "file:") return null;
  const p = path.resolve(fileURLToPath(u));
  return p === reportRoot || p.startsWith(reportRoot + path.sep) ? p : null;
}

// Where a page of the folder is loaded from.
function pageUrl(file) {
  if (!servedBase) return pathToFileURL(file).href;
  return servedBase + path.relative(reportRoot, file).split(path.sep).map(encodeURIComponent).join("/");
}

// --------------------------------------------------------------- in the page

// Runs in the page: for each chart of the page JSON, its SVG mark count and the
// datums of its scenegraph's mark items (axes, legends and titles left out).
function pageFacts() {
  const page = JSON.parse(document.getElementById("referee-page").textContent);
  const charts = (page.charts || []).map((chart) => {
    const view = (window.refereeViews || {})[chart.id];
    const out = { id: chart.id, hasView: !!view, svgMarks: 0, datums: [] };
    const figure = document.querySelector(`figure[data-chart="${CSS.escape(chart.id)}"]`);
    if (figure) {
      // Mark groups the SVG renderer wrote for data marks (role-mark), and their drawn children.
      for (const g of figure.querySelectorAll("svg g.role-mark")) out.svgMarks += g.querySelectorAll("path, rect, circle, line, text").length;
    }
    if (view) {
      const walk = (node) => {
        if (!node) return;
        if (node.marktype !== undefined) {
          // a mark: its items
          for (const item of node.items || []) {
            if (node.role === "mark" && node.marktype !== "group" && item.datum) {
              const d = {};
              for (const [k, v] of Object.entries(item.datum)) if (typeof v === "number" || typeof v === "string") d[k] = v;
              out.datums.push(d);
            }
            walk(item);
          }
        } else if (node.items) {
          for (const child of node.items) walk(child);
        }
      };
      walk(view.scenegraph().root);
    }
    return out;
  });
  const tables = (page.tables || []).map((t) => {
    const table = document.querySelector(`table[data-table="${CSS.escape(t.id)}"]`);
    // How far the table runs past its box with the columns shown by default (a key column off-screen).
    const box = table ? table.closest(".table-scroll") : null;
    const overflow = box ? box.scrollWidth - box.clientWidth : 0;
    return { id: t.id, found: !!table, rendered: table ? table.tBodies[0].rows.length : 0, overflow };
  });
  const refs = [];
  for (const a of document.querySelectorAll("a[href]")) refs.push({ kind: "link", ref: a.getAttribute("href"), url: a.href });
  for (const l of document.querySelectorAll("link[href]")) refs.push({ kind: "stylesheet", ref: l.getAttribute("href"), url: l.href });
  for (const s of document.querySelectorAll("script[src]")) refs.push({ kind: "script", ref: s.getAttribute("src"), url: s.src });
  for (const i of document.querySelectorAll("img[src]")) refs.push({ kind: "image", ref: i.getAttribute("src"), url: i.src });
  const footer = document.querySelector("footer");
  return { page, charts, tables, refs, footer: footer ? footer.textContent : null };
}

// --------------------------------------------------------------- the checks

// A chart's spec with its main data in place: the page model writes that
// data once per key (chart.rows, blocks of {fields, values}); read here on
// its own, not with the page script's code.
export function chartSpec(chart) {
  if (!Array.isArray(chart.rows)) return chart.spec;
  const values = [];
  for (const block of chart.rows) {
    for (const row of block.values) {
      if (row.length !== block.fields.length) throw new Error(`chart ${chart.id}: a row of ${row.length} values for ${block.fields.length} fields`);
      values.push(Object.fromEntries(block.fields.map((k, i) => [k, row[i]])));
    }
  }
  return { ...chart.spec, data: { values } };
}

function specValues(spec, out = { values: [], transformed: false }) {
  if (!spec || typeof spec !== "object") return out;
  if (spec.data && Array.isArray(spec.data.values)) out.values.push(...spec.data.values);
  if (Array.isArray(spec.transform) && spec.transform.length) out.transformed = true;
  for (const k of ["layer", "concat", "hconcat", "vconcat"]) if (Array.isArray(spec[k])) spec[k].forEach((s) => specValues(s, out));
  if (spec.spec) specValues(spec.spec, out);
  return out;
}

// The numbers each field takes in the spec's inline data and in the drawn
// datums. Every drawn number must be one of the spec's (nothing invented);
// without transforms every spec number must be drawn too (nothing lost).
export function compareChart(chart, facts) {
  const problems = [];
  const { values, transformed } = specValues(chartSpec(chart));
  if (!values.length) return problems;  // nothing inline to compare
  const want = new Map();
  for (const row of values) {
    if (!row || typeof row !== "object") continue;
    for (const [k, v] of Object.entries(row)) {
      if (typeof v !== "number") continue;
      if (!want.has(k)) want.set(k, new Set());
      want.get(k).add(v);
    }
  }
  const got = new Map();
  for (const d of facts.datums) {
    for (const [k, v] of Object.entries(d)) {
      if (!want.has(k)) continue;
      if (!got.has(k)) got.set(k, new Set());
      got.get(k).add(v);
    }
  }
  let compared = 0;
  for (const [k, spec] of want) {
    const drawn = got.get(k);
    if (!drawn) continue;
    compared++;
    for (const v of drawn) {
      if (typeof v !== "number" || !spec.has(v)) problems.push(`chart ${chart.id}: a mark carries ${k}=${JSON.stringify(v)}, which is not in the spec's data (${[...spec].join(", ")})`);
    }
    if (!transformed) {
      for (const v of spec) if (!drawn.has(v)) problems.push(`chart ${chart.id}: the spec's ${k}=${v} is on no mark`);
    }
  }
  if (want.size && !compared) {
    problems.push(`chart ${chart.id}: no drawn mark carries any of the spec's numeric fields (${[...want.keys()].join(", ")})`);
  }
  return problems;
}

// RFC 4180: records of fields, quotes doubled inside quoted fields.
export function parseCsv(text) {
  const rows = [];
  let row = [], field = "", quoted = false, i = 0;
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i += 2; continue; }
      if (c === '"') { quoted = false; i++; continue; }
      field += c; i++; continue;
    }
    if (c === '"') { quoted = true; i++; continue; }
    if (c === ",") { row.push(field); field = ""; i++; continue; }
    if (c === "\r" && text[i + 1] === "\n") { row.push(field); rows.push(row); row = []; field = ""; i += 2; continue; }
    field += c; i++;
  }
  if (field !== "" || row.length) { row.push(field); rows.push(row); }
  return rows;
}

// Two CSV texts hold the same cells: equal text, or equal numbers however written (1e+06, 1000000).
function sameCsv(got, want) {
  const a = parseCsv(got), b = parseCsv(want);
  if (a.length !== b.length) return `${a.length} records, the data file has ${b.length}`;
  for (let r = 0; r < a.length; r++) {
    if (a[r].length !== b[r].length) return `record ${r + 1} has ${a[r].length} fields, the data file's ${b[r].length}`;
    for (let c = 0; c < a[r].length; c++) {
      const x = a[r][c], y = b[r][c];
      if (x === y) continue;
      const nx = Number(x), ny = Number(y);
      if (x.trim() !== "" && y.trim() !== "" && Number.isFinite(nx) && nx === ny) continue;
      return `record ${r + 1} field ${c + 1}: ${JSON.stringify(x)}, the data file has ${JSON.stringify(y)}`;
    }
  }
  return null;
}

// Links in a JSON value as site paths, relative ones resolved against `dir` (a site folder).
function resolveLinks(v, dir) {
  if (Array.isArray(v)) return v.map((x) => resolveLinks(x, dir));
  if (v && typeof v === "object") {
    const o = {};
    for (const [k, x] of Object.entries(v)) {
      o[k] = k === "href" && typeof x === "string" && !/^[a-z]+:/i.test(x) ? path.posix.normalize(path.posix.join(dir, x)) : resolveLinks(x, dir);
    }
    return o;
  }
  return v;
}

// Each download of the page made and compared with the data file of the same report written with --data-files.
async function exerciseDownloads(page, rel, facts) {
  const problems = [];
  let made = 0;
  const pageDir = path.posix.dirname(rel.split(path.sep).join("/"));
  const stem = rel.split(path.sep).join("/").replace(/\.html$/, "");
  const items = [...(facts.page.tables || []).map((t) => ["table", t]), ...(facts.page.charts || []).map((c) => ["chart", c])];
  let sinceLoad = 0;
  for (const [kind, item] of items) {
    // The browser holds back a page's downloads after ten or so (as it would ask a reader whether to allow
    // more): a fresh load of the page every four items.
    if (sinceLoad === 4) {
      await page.reload({ waitUntil: "load" });
      await page.waitForFunction(() => document.body.dataset.rendered === "true", null, { timeout: timeoutMs });
      sinceLoad = 0;
    }
    sinceLoad++;
    const block = kind === "table" ? page.locator(`[data-table-block="${item.id}"]`) : page.locator(`figure[data-chart="${item.id}"]`);
    if (kind === "chart") await block.locator("details.chart-data > summary").click();
    for (const ext of ["csv", "json"]) {
      const button = block.locator(`button[data-download="${ext}"]`).last();
      const [download] = await Promise.all([page.waitForEvent("download", { timeout: timeoutMs }), button.click()]);
      const got = fs.readFileSync(await download.path(), "utf8");
      const name = download.suggestedFilename();
      const wantName = `${stem.split("/").join("-")}-${item.id}.${ext}`;
      if (name !== wantName) problems.push(`${kind} ${item.id}: the ${ext} download is named ${name}, expected ${wantName}`);
      const file = path.join(dataFilesDir, "data", stem, `${item.id}.${ext}`);
      if (!fs.existsSync(file)) { problems.push(`${kind} ${item.id}: no data file ${path.relative(dataFilesDir, file)} to compare the download with`); continue; }
      const want = fs.readFileSync(file, "utf8");
      made++;
      if (ext === "csv") {
        const diff = sameCsv(got, want);
        if (diff) problems.push(`${kind} ${item.id}: the CSV download differs from ${path.relative(dataFilesDir, file)}: ${diff}`);
      } else {
        const a = JSON.stringify(resolveLinks(JSON.parse(got), pageDir));
        const b = JSON.stringify(resolveLinks(JSON.parse(want), path.posix.dirname(`data/${stem}/x`)));
        if (a !== b) problems.push(`${kind} ${item.id}: the JSON download differs from ${path.relative(dataFilesDir, file)}`);
      }
    }
  }
  return { made, problems };
}

function plainText(v) {
  if (v === null || v === undefined || (typeof v === "number" && !Number.isFinite(v))) return "\u2013";
  if (typeof v === "object") return String(v.text ?? JSON.stringify(v));
  return String(v);
}

async function exerciseFilter(page, table) {
  const problems = [];
  for (const key of table.filters || []) {
    const distinct = [...new Set(table.rows.map((r) => plainText(r[key])))];
    if (distinct.length < 2) continue;
    const value = distinct.sort()[distinct.length - 1];
    const select = page.locator(`[data-table-block="${table.id}"] select[data-filter="${key}"]`);
    await select.selectOption(value);
    const want = table.rows.map((r, i) => [r, i]).filter(([r]) => plainText(r[key]) === value).map(([, i]) => String(i));
    const shown = await page.locator(`table[data-table="${table.id}"] tbody tr`).evaluateAll((trs) => trs.map((tr) => tr.dataset.row));
    if (JSON.stringify(shown.slice().sort()) !== JSON.stringify(want.slice().sort())) {
      problems.push(`table ${table.id}: filter ${key}=${value} shows rows [${shown}], expected [${want}]`);
    }
    // The view is in the address: reloaded from it, the page shows the same rows with the filter chosen.
    const hash = await page.evaluate(() => location.hash);
    const param = new URLSearchParams(hash.slice(1)).get(`${table.id}.f.${key}`);
    if (param !== value) problems.push(`table ${table.id}: after filter ${key}=${value} the address's fragment is ${JSON.stringify(hash)}`);
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.rendered === "true" || document.body.dataset.renderError !== undefined,
                               null, { timeout: 30000 });
    const again = await page.locator(`table[data-table="${table.id}"] tbody tr`).evaluateAll((trs) => trs.map((tr) => tr.dataset.row));
    if (JSON.stringify(again.slice().sort()) !== JSON.stringify(want.slice().sort())) {
      problems.push(`table ${table.id}: reloaded with ${hash}, the table shows rows [${again}], expected [${want}]`);
    }
    if (await select.inputValue() !== value) problems.push(`table ${table.id}: reloaded with ${hash}, the ${key} filter does not show ${value}`);
    // Search: every row shown holds the word typed; the word is in the address too.
    const box = page.locator(`[data-table-block="${table.id}"] input[data-search]`);
    let searched = "";
    if (await box.count()) {
      const word = value.split(/\s+/)[0].toLowerCase();
      await box.fill(word);
      const texts = await page.locator(`table[data-table="${table.id}"] tbody tr`).evaluateAll((trs) => trs.map((tr) => tr.textContent.toLowerCase()));
      if (!texts.length) problems.push(`table ${table.id}: searching ${JSON.stringify(word)} shows no row`);
      for (const t of texts) if (!t.includes(word)) problems.push(`table ${table.id}: searching ${JSON.stringify(word)} shows a row without it`);
      if (new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)).get(`${table.id}.q`) !== word) {
        problems.push(`table ${table.id}: the search ${JSON.stringify(word)} is not in the address`);
      }
      searched = `, search ${JSON.stringify(word)} (${texts.length} rows)`;
      await box.fill("");
    }
    await select.selectOption("");
    if (new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)).has(`${table.id}.f.${key}`)) {
      problems.push(`table ${table.id}: the filter ${key} was reset but the address still holds it`);
    }
    const all = await page.locator(`table[data-table="${table.id}"] tbody tr`).count();
    if (all !== table.rows.length) problems.push(`table ${table.id}: after resetting filter ${key}, ${all} rows of ${table.rows.length}`);
    return { done: `filter ${key}=${value} (${want.length} of ${table.rows.length} rows), kept in the address${searched}`, problems };
  }
  return null;
}

// Sorting by a number column: ascending on the first click (empty cells last),
// descending on the second.
async function exerciseSort(page, table) {
  const candidates = (table.columns || []).filter((c) => !c.optional && ["number", "minutes", "percent", "change"].includes(c.type) &&
    new Set(table.rows.map((r) => r[c.key]).filter((v) => typeof v === "number")).size > 1);
  // One with empty cells if there is one.
  const col = candidates.find((c) => table.rows.some((r) => typeof r[c.key] !== "number")) || candidates[0];
  if (!col) return null;
  const problems = [];
  const button = page.locator(`table[data-table="${table.id}"] thead button[data-sort="${col.key}"]`);
  const order = () => page.locator(`table[data-table="${table.id}"] tbody tr`).evaluateAll((trs) => trs.map((tr) => Number(tr.dataset.row)));
  const values = (rows) => rows.map((i) => table.rows[i][col.key]);
  const sorted = (vals, dir) => {
    const nums = vals.filter((v) => typeof v === "number");
    const tail = vals.slice(nums.length);
    return nums.every((v, i) => i === 0 || dir * (v - nums[i - 1]) >= 0) && tail.every((v) => typeof v !== "number");
  };
  for (const [dir, name] of [[1, "ascending"], [-1, "descending"]]) {
    await button.click();
    const vals = values(await order());
    if (!sorted(vals, dir)) problems.push(`table ${table.id}: sorted ${name} by ${col.key}, shows ${JSON.stringify(vals)}`);
    const aria = await page.locator(`table[data-table="${table.id}"] thead th:has(button[data-sort="${col.key}"])`).getAttribute("aria-sort");
    if (aria !== name) problems.push(`table ${table.id}: sorted ${name} by ${col.key}, aria-sort is ${aria}`);
  }
  return { done: `sort by ${col.key}`, problems };
}

async function exerciseBaseline(page, table) {
  const problems = [];
  const b = table.baseline;
  const base = table.rows.findIndex((r, i) => i > 0 && typeof r[b.value] === "number");
  if (base < 0) return null;
  const select = page.locator(`[data-table-block="${table.id}"] select[data-baseline]`);
  await select.selectOption(String(base));
  const cells = await page.locator(`table[data-table="${table.id}"] tbody tr`).evaluateAll((trs) =>
    trs.map((tr) => ({ row: tr.dataset.row, text: (tr.querySelector("td.relative") || {}).textContent })));
  const fmt = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  for (const c of cells) {
    const row = table.rows[Number(c.row)];
    const bv = table.rows[base][b.value];
    const v = row[b.value];
    const want = typeof v === "number" && v !== 0 ? fmt.format(bv / v) + "x" : "\u2013";
    if (c.text !== want) problems.push(`table ${table.id}: relative to row ${base}, row ${c.row} shows ${JSON.stringify(c.text)}, expected ${want}`);
  }
  if (cells.length !== table.rows.length) problems.push(`table ${table.id}: ${cells.length} rows in relative view, ${table.rows.length} in the JSON`);
  await select.selectOption("");
  const left = await page.locator(`table[data-table="${table.id}"] td.relative`).count();
  if (left) problems.push(`table ${table.id}: back to absolute values, ${left} relative cells remain`);
  return { done: `baseline row ${base} (${cells.length} rows)`, problems };
}

// --------------------------------------------------------------- main

let pages = htmlPages(reportRoot);
if (!pages.length) usage(`${reportRoot} has no .html page`);
if (onePerFolder) {
  const seenDirs = new Set();
  pages = pages.filter((p) => {
    const d = path.dirname(p);
    if (seenDirs.has(d)) return false;
    seenDirs.add(d);
    return true;
  });
}
fs.mkdirSync(artifacts, { recursive: true });

let browser;
try {
  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--allow-file-access-from-files"],
  });
} catch (err) {
  console.error(`check_report: cannot start ${chromiumPath}: ${err.message}`);
  process.exit(2);
}

const failures = [];
const warnings = new Map();  // console warnings (not failures): text -> {count, first page}
// The bundled libraries' licence texts travel with the report.
{
  const licenses = path.join(reportRoot, "assets/LICENSES.txt");
  const text = fs.existsSync(licenses) ? fs.readFileSync(licenses, "utf8") : null;
  if (text === null) failures.push("assets/LICENSES.txt: missing (the bundled libraries' licence texts)");
  else {
    for (const lib of ["vega", "vega-lite", "vega-embed"]) {
      if (!text.includes(`(npm package ${lib})`)) failures.push(`assets/LICENSES.txt: no licence text of ${lib}`);
    }
  }
}
let cspProbed = false;
let exercisedFilter = null;
let exercisedBaseline = null;
let exercisedSort = null;
const downloadKinds = new Set();
let downloadsMade = 0;
const t0 = Date.now();
// One browser context and page per job, reused from page to page (a new
// context per page costs more than the page's own checks); what a page
// sends, logs or throws is collected into `seen`, which each page starts afresh.
async function openTab() {
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 }, serviceWorkers: "block" });
  const page = await context.newPage();
  // Every CSP violation, recorded from before the page's own scripts (an init script is not refused by the policy).
  await page.addInitScript(() => {
    window.__cspViolations = [];
    document.addEventListener("securitypolicyviolation", (e) => {
      window.__cspViolations.push(`${e.violatedDirective} refused ${e.blockedURI || "an inline script or style"}`);
    });
  });
  const tab = { context, page, seen: { rel: "", left: new Set(), consoleErrors: [] } };
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (insideReport(url)) return route.continue();
    tab.seen.left.add(url);
    return route.abort("blockedbyclient");
  });
  page.on("request", (req) => { if (!insideReport(req.url())) tab.seen.left.add(req.url()); });
  page.on("websocket", (ws) => tab.seen.left.add(ws.url()));
  page.on("console", (m) => {
    if (m.type() === "error") tab.seen.consoleErrors.push(m.text());
    else if (m.type() === "warning") {
      const text = m.text().split("\n")[0];
      // Vega's and Vega-Lite's own warnings ("WARN ...": a dropped setting, a scale that cannot show
      // the data) are failures: the page's charts must compile clean. Others (the browser's) are listed.
      if (/^WARN\b/.test(text)) {
        tab.seen.consoleErrors.push(`chart warning: ${text}`);
      } else {
        const w = warnings.get(text) || { count: 0, page: tab.seen.rel };
        w.count++;
        warnings.set(text, w);
      }
    }
  });
  page.on("pageerror", (e) => tab.seen.consoleErrors.push(`page error: ${e.message}`));
  return tab;
}

async function checkPage(tab, file) {
  const rel = path.relative(reportRoot, file);
  const fail = (msg) => failures.push(`${rel}: ${msg}`);
  // Leave the previous page first, so nothing it does lands on this one.
  await tab.page.goto("about:blank");
  tab.seen = { rel, left: new Set(), consoleErrors: [] };
  const { page } = tab;
  const { left, consoleErrors } = tab.seen;

  try {
    const response = await page.goto(pageUrl(file), { waitUntil: "load", timeout: timeoutMs });
    if (servedBase) {
      if (!response || response.status() !== 200) fail(`the server answered ${response ? response.status() : "nothing"}`);
      else if (!(await response.allHeaders())["content-security-policy"]) fail("the server's answer has no Content-Security-Policy");
    }
    await page.waitForFunction(() => document.body.dataset.rendered === "true" || document.body.dataset.renderError !== undefined,
                               null, { timeout: timeoutMs });
    const renderError = await page.evaluate(() => document.body.dataset.renderError);
    if (renderError !== undefined) fail(`the page script failed: ${renderError}`);
    const facts = await page.evaluate(pageFacts);
    for (const v of await page.evaluate(() => window.__cspViolations || [])) fail(`Content-Security-Policy violation: ${v}`);
    if (servedBase && !cspProbed) {
      // The policy is in force and the checker sees it refuse: an inline script injected now must not run.
      cspProbed = true;
      const errorsBefore = consoleErrors.length;
      const probe = await page.evaluate(async () => {
        const before = window.__cspViolations.length;
        const s = document.createElement("script");
        s.textContent = "window.__inlineRan = true;";
        document.body.appendChild(s);
        await new Promise((r) => setTimeout(r, 200));
        const seen = window.__cspViolations.slice(before);
        window.__cspViolations.length = before;
        return { ran: window.__inlineRan === true, seen };
      });
      if (probe.ran) fail("an inline script injected into the page ran: the Content-Security-Policy does not refuse inline scripts");
      else if (!probe.seen.length) fail("an injected inline script was refused but no securitypolicyviolation was seen: the checker would miss violations");
      else console.log(`exercised the Content-Security-Policy on ${rel}: an injected inline script was refused (${probe.seen[0]})`);
      consoleErrors.splice(errorsBefore);  // the probe's own refusal, logged by the browser
    }
    // Charts: drawn, with the spec's numbers on the marks.
    for (const chart of facts.page.charts || []) {
      const f = facts.charts.find((c) => c.id === chart.id);
      if (!f.hasView) { fail(`chart ${chart.id}: no vega view in window.refereeViews`); continue; }
      if (!specValues(chartSpec(chart)).values.length && chart.spec && !(chart.spec.data && chart.spec.data.url)) {
        fail(`chart ${chart.id}: its data is empty, so it draws nothing (leave such a chart out and say why in a note)`);
        continue;
      }
      if (!f.svgMarks) fail(`chart ${chart.id}: no SVG marks drawn`);
      if (!f.datums.length) fail(`chart ${chart.id}: the scenegraph has no mark items`);
      for (const p of compareChart(chart, f)) fail(p);
    }
    // Tables: every row shown.
    for (const t of facts.page.tables || []) {
      const f = facts.tables.find((x) => x.id === t.id);
      if (!f.found) fail(`table ${t.id}: not rendered`);
      else if (f.rendered !== (t.rows || []).length) fail(`table ${t.id}: ${f.rendered} rows shown, ${(t.rows || []).length} in the JSON`);
      else if (f.overflow > 1) fail(`table ${t.id}: ${f.overflow} px wider than its box at 1,366 px with the default columns (a key column off-screen)`);
    }
    // Downloads: from the page itself where the report has no data files.
    const inlineItems = [...(facts.page.tables || []), ...(facts.page.charts || [])].filter((x) => !x.csv);
    for (const ext of ["csv", "json"]) {
      const n = await page.locator(`button[data-download="${ext}"]`).count();
      if (n !== inlineItems.length) fail(`${n} ${ext.toUpperCase()} download buttons for ${inlineItems.length} tables and charts without data files`);
    }
    if (dataFilesDir && inlineItems.length && !downloadKinds.has(facts.page.kind)) {
      downloadKinds.add(facts.page.kind);
      const r = await exerciseDownloads(page, rel, facts);
      downloadsMade += r.made;
      r.problems.forEach(fail);
    }
    // A baseline select names each row once: two rows never read alike.
    const baseOptions = await page.locator("select[data-baseline]").evaluateAll((sels) =>
      sels.map((sel) => ({ table: sel.closest("[data-table-block]") ? sel.closest("[data-table-block]").dataset.tableBlock : "?",
                           texts: [...sel.options].map((o) => o.textContent) })));
    for (const b of baseOptions) {
      const seen = new Set();
      for (const t of b.texts) {
        if (seen.has(t)) fail(`table ${b.table}: the baseline choice ${JSON.stringify(t)} appears more than once`);
        seen.add(t);
      }
    }
    // A page of a round not yet published says so where it is seen, script or not.
    if ((facts.page.meta || {}).under_review) {
      const banner = await page.locator("header p.under-review").count();
      if (!banner) fail("the page shows a round under review but its header does not say \"Under review, not for publication\"");
    }
    // Links and assets resolve to files of the report.
    for (const r of facts.refs) {
      if (/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(r.ref) || r.ref.startsWith("#")) continue;  // absolute or in-page
      const p = insideReport(r.url.split("#")[0].split("?")[0]);
      if (!p) fail(`${r.kind} ${r.ref} points outside the report folder`);
      else if (!fs.existsSync(p)) fail(`${r.kind} ${r.ref} does not resolve (${path.relative(reportRoot, p)} is missing)`);
    }
    // The footer says what made the page and from what data.
    const meta = facts.page.meta || {};
    if (facts.footer === null) fail("no footer");
    else {
      for (const [what, v] of [["referee version", meta.referee_version], ["data time", meta.data_time], ...(meta.rulesets || []).map((r) => ["rule set", r])]) {
        if (!v || !facts.footer.includes(v)) fail(`the footer does not name the ${what} ${JSON.stringify(v)}: ${JSON.stringify(facts.footer)}`);
      }
      if (!(meta.rulesets || []).length) fail("the page JSON names no rule set");
    }
    // Interactions, once each, on the first page that has them.
    for (const t of facts.page.tables || []) {
      if (!exercisedFilter && (t.filters || []).length) {
        const r = await exerciseFilter(page, t);
        if (r) { exercisedFilter = `${rel} ${r.done}`; r.problems.forEach(fail); }
      }
      if (!exercisedSort) {
        const r = await exerciseSort(page, t);
        if (r) { exercisedSort = `${rel} ${r.done}`; r.problems.forEach(fail); }
      }
      if (!exercisedBaseline && t.baseline) {
        const r = await exerciseBaseline(page, t);
        if (r) { exercisedBaseline = `${rel} ${r.done}`; r.problems.forEach(fail); }
      }
    }
    const shot = path.join(artifacts, rel.replace(/[\\/]/g, "__").replace(/\.html$/, ".png"));
    await page.screenshot({ path: shot, fullPage: true });
  } catch (err) {
    const reason = await page.evaluate(() => document.body && document.body.dataset.renderError).catch(() => undefined);
    fail(reason ? `the page script failed: ${reason}` : `${err.message.split("\n")[0]}`);
    await page.screenshot({ path: path.join(artifacts, rel.replace(/[\\/]/g, "__").replace(/\.html$/, ".failed.png")), fullPage: true }).catch(() => {});
  }
  for (const url of left) fail(`a request left the machine: ${url}`);
  for (const e of consoleErrors) fail(`console error: ${e}`);
}

const queue = pages.slice();
await Promise.all(Array.from({ length: Math.min(jobs, pages.length) }, async () => {
  let tab = await openTab();
  while (queue.length) {
    const file = queue.shift();
    try {
      await checkPage(tab, file);
    } catch (err) {
      // The tab itself broke (a crashed renderer): say so, go on in a new one.
      failures.push(`${path.relative(reportRoot, file)}: ${err.message.split("\n")[0]}`);
      await tab.context.close().catch(() => {});
      tab = await openTab();
    }
  }
  await tab.context.close();
}));
await browser.close();
failures.sort();

const seconds = ((Date.now() - t0) / 1000).toFixed(1);
if (exercisedFilter) console.log(`exercised ${exercisedFilter}`);
if (exercisedBaseline) console.log(`exercised ${exercisedBaseline}`);
if (exercisedSort) console.log(`exercised ${exercisedSort}`);
if (dataFilesDir) {
  console.log(`compared ${downloadsMade} downloads with the data files, on pages of ${downloadKinds.size} kinds (${[...downloadKinds].sort().join(", ")})`);
  if (!downloadsMade) failures.push("no download was made to compare with the data files");
}
for (const [text, w] of warnings) console.log(`console warning (not a failure) x${w.count}, first on ${w.page}: ${text}`);
console.log(`screenshots in ${artifacts}`);
if (failures.length) {
  for (const f of failures) console.log(`FAIL ${f}`);
  const rels = new Set(pages.map((f) => path.relative(reportRoot, f)));
  const bad = new Set(failures.map((f) => f.slice(0, f.indexOf(": "))));
  const badPages = [...bad].filter((r) => rels.has(r)).length;
  const other = bad.size - badPages;  // checks of the folder (assets/LICENSES.txt)
  console.log(`${pages.length - badPages} passed, ${badPages + other} failed (${pages.length} pages${other ? " and the assets" : ""}, ${seconds} s)`);
  process.exit(1);
}
console.log(`${pages.length} pages passed in ${seconds} s`);
