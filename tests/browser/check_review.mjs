// The review pages in headless Chromium (/usr/bin/chromium, driven by
// playwright-core from reports/web/node_modules), against a running
// `referee serve` whose store run_report_browser.sh review prepared: NVIDIA's
// round-3.1 RetinaNet results without the committee's scaling.json, beside
// Azure and Azure+NVIDIA; a chair and members alice (Azure), bob (NVIDIA),
// carol (Azure+NVIDIA) and eve (Google, which did not submit).
//
//   node tests/browser/check_review.mjs --url URL --tokens DIR [--artifacts DIR]
//
// The committee's whole path, each step checked on the page a member sees:
// sign in, audit, file an objection from a finding, a validation message
// beside its field, respond as the accused, a stale form ("changed since you
// opened it") that loses nothing, votes from three organisations, the
// decision by a neutral chair, and the leaderboard after; what each role is
// offered and refused; forms without the anti-forgery value or from another
// site refused; every field labelled and reachable by the keyboard.
// Exit 0 when every check holds, 1 with the failures listed, 2 on bad usage.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../../reports/web/package.json"));

function usage(msg) {
  console.error(`check_review: ${msg}\nusage: node tests/browser/check_review.mjs --url URL --tokens DIR [--artifacts DIR]`);
  process.exit(2);
}
const args = process.argv.slice(2);
let base = null, tokensDir = null, artifacts = path.resolve("build/test-artifacts/report-browser/review");
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--url") base = String(args[++i] ?? usage("--url needs a URL")).replace(/\/$/, "");
  else if (args[i] === "--tokens") tokensDir = args[++i] ?? usage("--tokens needs a folder");
  else if (args[i] === "--artifacts") artifacts = path.resolve(args[++i] ?? usage("--artifacts needs a folder"));
  else usage(`unknown argument ${args[i]}`);
}
if (!base || !tokensDir) usage("--url and --tokens are required");
const token = (who) => fs.readFileSync(path.join(tokensDir, who), "utf8").trim();
const chromiumPath = process.env.REFEREE_CHROMIUM || "/usr/bin/chromium";
let chromium;
try {
  ({ chromium } = require("playwright-core"));
} catch (err) {
  usage(`playwright-core is not installed in reports/web/node_modules (run scripts/setup.sh): ${err.message}`);
}
fs.mkdirSync(artifacts, { recursive: true });

const failures = [];
let passed = 0;
function check(ok, what) {
  if (ok) passed++;
  else failures.push(what);
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
}

const browser = await chromium.launch({
  executablePath: chromiumPath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"],
});

// A member's own browser: a context of its own (cookies), signed in through the form.
async function member(who) {
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
  const page = await context.newPage();
  page.on("pageerror", (e) => failures.push(`${who}: script error ${e.message}`));
  const first = await page.goto(`${base}/review/`);
  check(first.status() === 401 && (await page.locator('form[action="/reports/login"] input[name="next"]').getAttribute("value")) === "/review/",
        `${who}: /review/ without signing in is the sign-in form, which comes back to /review/`);
  await page.fill('input[name="token"]', token(who));
  await Promise.all([page.waitForURL(`${base}/review/`), page.click('form[action="/reports/login"] button[type="submit"]')]);
  return { who, context, page };
}

async function shot(m, name) {
  await m.page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });
}

// Submits the form `selector` on m's page and waits for the answer page.
async function submit(m, selector) {
  const [resp] = await Promise.all([
    m.page.waitForNavigation(),
    m.page.locator(`${selector} button[type="submit"]`).first().click(),
  ]);
  return resp;
}

const text = async (m) => (await m.page.locator("main").innerText());

try {
  // ---- alice (Azure) reviews NVIDIA: the dashboard, the round, the audit, the finding filed.
  const alice = await member("alice");
  let t = await text(alice);
  check(t.includes("training-3.1.0") && /Required reviews not done: 1/.test(t), "alice: the dashboard shows the round and her one required review");
  check(/objections_due .*\((in|passed) /.test(t), "alice: the next deadline with the time left");
  await shot(alice, "01-alice-dashboard");
  await Promise.all([alice.page.waitForURL(/\/review\/3\.1\.0\/$/), alice.page.click('a[href="/review/3.1.0/"]')]);
  t = await text(alice);
  check(t.includes("Required reviews") && t.includes("Deadlines"), "alice: the round page shows deadlines and required reviews");
  await submit(alice, 'form[action="/review/3.1.0/audit"]');
  t = await text(alice);
  check(/the RCP check fails/.test(t), "alice: the audit's finding on NVIDIA's RetinaNet at 256 nodes is listed");
  await shot(alice, "02-alice-findings");
  const fileForm = 'form[action="/review/3.1.0/objections"]:has(input[name="finding"])';
  await alice.page.fill(`${fileForm} input[name="title"]`, "RetinaNet at 256 nodes converges faster than the RCPs allow");
  await submit(alice, fileForm);
  const objectionUrl = alice.page.url();
  check(/\/review\/objections\/\d+$/.test(objectionUrl), `alice: filing from the finding opens the objection (${objectionUrl})`);
  t = await text(alice);
  check(t.includes("RetinaNet at 256 nodes converges faster") && /\bopen\b/.test(t), "alice: the objection is open, with its title");
  check(/olympic mean of the runs' convergence/.test(t) && /Above the 2% waiver threshold/.test(t),
        "alice: the evidence quotes the check and the score impact is set against the 2% threshold");
  check(await alice.page.locator('#form-decide').count() === 0 && await alice.page.locator('#form-respond').count() === 0,
        "alice: the objector is offered neither the decision nor the response");
  check(await alice.page.locator('#form-withdraw').count() === 1 && await alice.page.locator('#form-vote').count() === 1,
        "alice: the objector may withdraw and vote");
  // A value the API refuses: its message beside the field, the input kept.
  await alice.page.selectOption('#form-vote select[name="vote"]', "uphold");
  await alice.page.selectOption('#form-vote select[name="remedy"]', "normalise");
  await alice.page.fill('#form-vote input[name="factor"]', "-2");
  let resp = await submit(alice, "#form-vote");
  const err = await alice.page.locator("#form-vote .form-error").innerText().catch(() => "");
  check(resp.status() === 400 && /factor/.test(err) && (await alice.page.inputValue('#form-vote input[name="factor"]')) === "-2",
        `alice: a factor of -2 is refused beside the vote form, what she typed kept (${resp.status()}: ${err})`);
  await shot(alice, "03-alice-validation");
  // Every field has a label; the first form is reached with the keyboard.
  const unlabelled = await alice.page.$$eval("main input:not([type=hidden]), main select, main textarea",
                                             (els) => els.filter((e) => !e.closest("label") && !e.getAttribute("aria-label")).length);
  check(unlabelled === 0, `alice: every field of the objection page has a label (${unlabelled} without)`);
  let reached = false;
  for (let i = 0; i < 40 && !reached; i++) {
    await alice.page.keyboard.press("Tab");
    reached = await alice.page.evaluate(() => document.activeElement && document.activeElement.closest("#form-comment") !== null);
  }
  check(reached, "alice: the comment form is reached with the Tab key");
  // The page as alice opened it, before bob answers: a stale form later.
  await alice.page.goto(objectionUrl);

  // ---- bob (NVIDIA), the accused, responds.
  const bob = await member("bob");
  await bob.page.goto(objectionUrl);
  check(await bob.page.locator("#form-respond").count() === 1 && await bob.page.locator("#form-decide").count() === 0 &&
        await bob.page.locator("#form-withdraw").count() === 0, "bob: the accused is offered the response, not the decision nor the withdrawal");
  await bob.page.fill("#form-respond textarea[name=text]", "The runs are compliant; we ask for the RCP checker's factor.");
  await bob.page.selectOption("#form-respond select[name=remedy]", "normalise");
  await bob.page.fill("#form-respond input[name=factor]", "1.07575758");
  await submit(bob, "#form-respond");
  t = await text(bob);
  check(t.includes("we ask for the RCP checker's factor") && /\bresponded\b/.test(t), "bob: the response is in the thread, the objection responded");
  await bob.page.fill("#form-comment textarea[name=text]", "Logs of the 256-node runs attached to the package.");
  await submit(bob, "#form-comment");
  check((await text(bob)).includes("Logs of the 256-node runs attached"), "bob: a comment joins the discussion");

  // ---- alice's form, opened before the response: stale, and nothing lost.
  await alice.page.selectOption("#form-vote select[name=vote]", "uphold");
  await alice.page.selectOption("#form-vote select[name=remedy]", "normalise");
  await alice.page.fill("#form-vote input[name=factor]", "1.07575758");
  resp = await submit(alice, "#form-vote");
  t = await text(alice);
  check(resp.status() === 409 && t.includes("Changed since you opened it") && t.includes("we ask for the RCP checker's factor") &&
        (await alice.page.inputValue("#form-vote input[name=factor]")) === "1.07575758",
        `alice: a vote sent from a page older than the response is 409, shown with the new state and her vote kept (${resp.status()})`);
  await shot(alice, "04-alice-stale");
  resp = await submit(alice, "#form-vote");
  check(resp.status() === 200 && /Azure\s+uphold\s+normalise/.test(await text(alice)), "alice: sent again, her vote counts");

  // ---- votes from NVIDIA and Azure+NVIDIA.
  await bob.page.goto(objectionUrl);
  await bob.page.selectOption("#form-vote select[name=vote]", "uphold");
  await bob.page.selectOption("#form-vote select[name=remedy]", "normalise");
  await bob.page.fill("#form-vote input[name=factor]", "1.07575758");
  await submit(bob, "#form-vote");
  const carol = await member("carol");
  t = await text(carol);
  check(t.includes("Votes Azure+NVIDIA still owes") && t.includes("RetinaNet at 256 nodes"), "carol: her dashboard lists the vote she owes");
  await carol.page.goto(objectionUrl);
  await carol.page.selectOption("#form-vote select[name=vote]", "uphold");
  await carol.page.selectOption("#form-vote select[name=remedy]", "normalise");
  await carol.page.fill("#form-vote input[name=factor]", "1.07575758");
  await submit(carol, "#form-vote");
  t = await text(carol);
  check(/Not voted yet: nobody/.test(t) && /carried by 3 vote/.test(t), "carol: three votes cast, the standing says the remedy is carried");
  check(await carol.page.locator("#form-comment").count() === 0, "carol: a voter who is neither party nor chair is not offered the discussion");
  // One machine, several members: the server takes 8 connections from one address, so each leaves when done.
  await carol.context.close();
  await bob.context.close();

  // ---- eve (Google, not in the round) sees nothing of it.
  const eve = await member("eve");
  check((await text(eve)).includes("No round you may see is under review"), "eve: no round under review on her dashboard");
  resp = await eve.page.goto(objectionUrl);
  check(resp.status() === 404, `eve: the objection is not found for her (${resp.status()})`);
  resp = await eve.page.goto(`${base}/review/3.1.0/`);
  check(resp.status() === 404, `eve: the round is not found for her (${resp.status()})`);
  await eve.context.close();

  // ---- the leaderboard before the decision, then the chair decides.
  const board = `${base}/reports/rounds/training-3.1.0/ssd.html`;
  await alice.page.goto(board);
  const before = await text(alice);
  const chair = await member("chair");
  await chair.page.goto(objectionUrl);
  check(await chair.page.locator("#form-decide").count() === 1 && await chair.page.locator("#form-vote").count() === 0,
        "chair: the neutral chair is offered the decision, not a vote");
  // A vote deadline of this objection, shown on its ballot.
  const due = new Date(Date.now() + 3 * 86400e3).toISOString().slice(0, 16) + "Z";
  await chair.page.fill("#form-vote-deadline input[name=until]", due);
  await chair.page.fill("#form-vote-deadline input[name=reason]", "to be settled at Thursday's meeting");
  await submit(chair, "#form-vote-deadline");
  t = await text(chair);
  check(/Votes due .*\(in 2 d 23 h\).*\(set on this objection\)/.test(t) || /Votes due .*\(in 3 d 0 h\).*\(set on this objection\)/.test(t),
        "chair: the vote deadline set here is on the ballot with the time left");
  await chair.page.selectOption("#form-decide select[name=remedy]", "normalise");
  await chair.page.fill("#form-decide input[name=factor]", "1.07575758");
  await chair.page.fill("#form-decide textarea[name=text]", "Normalised by the RCP checker's factor.");
  await submit(chair, "#form-decide");
  t = await text(chair);
  check(/upheld, remedy normalise 1\.07575758/.test(t) && /\bdecided\b/.test(t), "chair: the decision is recorded and shown");
  await shot(chair, "05-chair-decided");
  await chair.context.close();
  await alice.page.goto(board);
  const after = await text(alice);
  check(before !== after && /0\.919/.test(after) && !/0\.919/.test(before),
        "alice: the leaderboard shows NVIDIA's 256-node RetinaNet normalised (0.919 min) after the decision, not before");
  await shot(alice, "06-leaderboard-after");

  // ---- forged forms: without the anti-forgery value, or from another site.
  resp = await alice.page.request.post(`${objectionUrl}/comment`, { form: { text: "forged" } });
  check(resp.status() === 403, `a comment without the anti-forgery value is refused (${resp.status()})`);
  const csrf = await (async () => { await alice.page.goto(objectionUrl); return alice.page.inputValue("#form-comment input[name=csrf]"); })();
  resp = await alice.page.request.post(`${objectionUrl}/comment`, { form: { text: "forged", csrf }, headers: { Origin: "http://evil.example" } });
  check(resp.status() === 403, `a comment posted from another site is refused (${resp.status()})`);
  check(!(await text(alice)).includes("forged"), "no forged comment reached the thread");
  resp = await alice.page.request.post(`${objectionUrl}/comment`, { form: { text: "Thanks, all.", csrf } });
  check(resp.status() === 200 && (await resp.text()).includes("Thanks, all."), "the same comment with the page's value is taken");
  // Another kind of Authorization header beside the cookie (a proxy's Basic credentials) is no exemption.
  resp = await alice.page.request.post(`${objectionUrl}/comment`, { form: { text: "forged" }, headers: { Authorization: "Basic YTpi" } });
  check(resp.status() === 403, `a comment with the cookie and a Basic header but no anti-forgery value is refused (${resp.status()})`);
  // A long comment in a form (over the 8 KiB an HTTP library takes by default; 9,000 bytes of UTF-8).
  const long = "é".repeat(4500);
  resp = await alice.page.request.post(`${objectionUrl}/comment`, { form: { text: long, csrf } });
  check(resp.status() === 200 && (await resp.text()).includes(long), `a comment of 9,000 bytes is taken (${resp.status()})`);
  // A bearer token (no cookie, no browser) needs no anti-forgery value.
  const plain = await browser.newContext();
  resp = await plain.request.post(`${objectionUrl}/comment`, { form: { text: "by token" }, headers: { Authorization: `Bearer ${token("bob")}` } });
  check(resp.status() === 200 && (await resp.text()).includes("by token"), "a form sent with a bearer token is taken without the value");
  await plain.close();
} catch (err) {
  failures.push(`stopped: ${err.stack || err.message}`);
  console.log(`FAIL stopped: ${err.message}`);
} finally {
  await browser.close();
}

console.log(`check_review: ${passed} checks passed, ${failures.length} failed`);
if (failures.length) {
  for (const f of failures) console.log(`  - ${f}`);
  process.exit(1);
}
