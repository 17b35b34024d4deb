// audit.mjs -- drives Chromium through the Audit page (/audit) and prints TAP.
// Environment: URL, USER_NAME (an admin), VIEWER_NAME, PASSWORD, SQL_SH (runs one SQL statement on the
// test database), SHOTS (screenshot folder), CHROMIUM, PROFILE.
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import puppeteer from "puppeteer-core";

const { URL: BASE, USER_NAME, VIEWER_NAME, PASSWORD, SQL_SH, SHOTS, CHROMIUM, PROFILE } = process.env;
const WAIT = { timeout: 20000 };
let n = 0, failed = 0;

function ok(cond, name, detail) {
  n++;
  console.log(`${cond ? "ok" : "not ok"} ${n} - ${name}`);
  if (!cond) {
    failed++;
    if (detail !== undefined) console.log(`#   ${String(detail).split("\n").join("\n#   ")}`);
  }
}
function is(got, want, name) {
  ok(got === want, name, `got:  ${JSON.stringify(got)}\nwant: ${JSON.stringify(want)}`);
}
const sql = (q) => execFileSync(SQL_SH, [q], { encoding: "utf8" }).trim();

mkdirSync(PROFILE, { recursive: true });
const browser = await puppeteer.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    `--user-data-dir=${PROFILE}`],
});
const page = await browser.newPage();
// Every console error counts, but the viewer's 403 from /api/audit,
// asked for on purpose at the end (Chromium logs each 4xx of fetch()).
const errors = [];
let viewer403 = 0;
page.on("console", (m) => {
  if (m.type() !== "error") return;
  if (/ 403 /.test(m.text()) && (m.location()?.url || "").startsWith(`${BASE}/api/audit`)) { viewer403++; return; }
  errors.push(`console: ${m.text()} ${m.location()?.url || ""}`);
});
page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
page.on("requestfailed", (r) => errors.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
await page.evaluateOnNewDocument(() => {
  window.__csp = [];
  document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
});
const shot = (name) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
// The ids of the cards shown, in page order.
const cardIds = () => page.$$eval("#audit-list .audit-entry", (cs) => cs.map((c) => Number(c.dataset.id)));
const cardActions = () => page.$$eval("#audit-list .audit-action", (bs) => bs.map((b) => b.textContent));
// Waits until the list shows the rows whose ids are want (the live
// refresh redraws it every 2 s, so read it again rather than hold nodes).
async function waitIds(want, what) {
  try {
    await page.waitForFunction((w) => JSON.stringify([...document.querySelectorAll("#audit-list .audit-entry")]
      .map((c) => Number(c.dataset.id))) === w, WAIT, JSON.stringify(want));
  } catch (e) { /* reported by the is() below */ }
  is(JSON.stringify(await cardIds()), JSON.stringify(want), what);
}
const dbIds = (where, limit) => sql(`SELECT id FROM jobq_audit ${where ? "WHERE " + where : ""} ORDER BY id DESC LIMIT ${limit}`)
  .split("\n").filter(Boolean).map(Number);

async function logIn(user) {
  await page.goto(BASE + "/login", { waitUntil: "networkidle0" });
  await page.waitForSelector("#login-form", WAIT);
  await page.type("#login-user", user);
  await page.type("#login-password", PASSWORD);
  await page.click("#login-submit");
  await page.waitForSelector("#totals", WAIT);
}

try {
  await page.setViewport({ width: 1280, height: 900 });
  await logIn(USER_NAME);

  // ---- the menu leads there; newest first ----
  ok(!(await page.$eval('#nav a[href="/audit"]', (a) => a.hidden)), "an admin's menu has Audit");
  await page.click('#nav a[href="/audit"]');
  await page.waitForSelector("#audit-list", WAIT);
  is(new URL(page.url()).pathname, "/audit", "the link opens /audit");
  await waitIds(dbIds("", 50), "every audit row, newest first (the browser's own login on top)");
  is((await cardActions())[0], "login", "the newest row is this login");
  await shot("audit");

  // ---- filter by action ----
  await page.select('form.filters select[name="action"]', "enqueue");
  await page.click('form.filters button[type="submit"]');
  await page.waitForFunction(() => location.search === "?action=enqueue", WAIT);
  ok(true, "filtering by action puts it in the address");
  await waitIds(dbIds("action = 'enqueue'", 50), "only the enqueue rows");
  is((await cardActions()).join(","), "enqueue", "each card says enqueue");

  // ---- a job link ----
  const jobId = sql("SELECT job_id FROM jobq_audit WHERE action = 'enqueue' ORDER BY id DESC LIMIT 1");
  is(await page.$eval("#audit-list a.job-link", (a) => a.getAttribute("href")), `/jobs/${jobId}`, "the row links to its job");
  await page.click("#audit-list a.job-link");
  await page.waitForFunction((id) => location.pathname === `/jobs/${id}` &&
    document.querySelector("main h1")?.textContent.startsWith(`Job #${id}`), WAIT, jobId);
  ok(true, "following the link shows the job's page");
  await page.goBack();
  await page.waitForFunction(() => location.pathname === "/audit", WAIT);
  await page.waitForSelector("#audit-list", WAIT);
  is(JSON.stringify(await cardActions()), JSON.stringify(["enqueue"]), "Back returns to the filtered list");

  // ---- paging by keyset, and data only as text ----
  // 60 more rows: a page holds 50.  One carries markup in its user and
  // detail, one a detail of 1,000 characters with no blank (to wrap).
  sql("INSERT INTO jobq_audit (username, address, action, detail) SELECT 'admin', '192.0.2.7', 'logout', CONCAT('row ', seq) " +
    "FROM (SELECT a.n * 10 + b.n AS seq FROM (SELECT 0 n UNION SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5) a, " +
    "(SELECT 0 n UNION SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5 UNION SELECT 6 UNION SELECT 7 UNION SELECT 8 UNION SELECT 9) b) s ORDER BY seq");
  sql("INSERT INTO jobq_audit (username, action, detail) VALUES ('<b>mallory</b>', 'login', '<img src=x id=xss>')," +
    " ('admin', 'schedule-edit', REPEAT('x', 1000))");
  await page.goto(BASE + "/audit", { waitUntil: "networkidle0" });
  const first = dbIds("", 50);
  await waitIds(first, "the first page: the newest 50 rows");
  const older = dbIds(`id < ${first[49]}`, 50);
  await page.click("#audit-older");
  await page.waitForFunction((b) => new URLSearchParams(location.search).get("before") === b, WAIT, String(first[49]));
  ok(true, "Older puts the last row's id in the address (before=)");
  await waitIds(older, "the second page: the rows older than the first page's last, none repeated");
  ok(!(await page.$("#audit-older")), "no Older link on the last page");
  ok(await page.$("#audit-newest"), "a link back to the newest");
  await page.goto(BASE + "/audit?user=" + encodeURIComponent("<b>mallory</b>"), { waitUntil: "networkidle0" });
  await page.waitForSelector("#audit-list .audit-entry", WAIT);
  is(await page.$eval("#audit-list dd", (d) => d.textContent), "<b>mallory</b>", "a user name with markup shows as text");
  ok(!(await page.$("#xss")) && !(await page.$("main b b")), "no element made from data");
  ok((await page.$eval("#audit-list", (l) => l.textContent)).includes("<img src=x id=xss>"), "the detail shows as text");

  // ---- 375 px: no sideways scroll ----
  await page.setViewport({ width: 375, height: 800, isMobile: true, hasTouch: true });
  await page.goto(BASE + "/audit", { waitUntil: "networkidle0" });
  await page.waitForSelector("#audit-list .audit-entry", WAIT);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  ok(width <= 375, `no horizontal overflow at 375 px (scrollWidth ${width})`);
  const wide = await page.evaluate(() => [...document.querySelectorAll("main, main *")]
    .filter((e) => { const r = e.getBoundingClientRect(); return r.width > 0 && (r.right > 375.5 || r.left < -0.5); })
    .map((e) => e.tagName.toLowerCase() + (e.className ? "." + e.className : "")).slice(0, 5));
  is(wide.join(", "), "", "no element of the page drawn past 375 px (the 1,000-character detail wraps)");
  await shot("audit-375");
  await page.setViewport({ width: 1280, height: 900 });

  // ---- a viewer ----
  await page.click("#logout");
  await page.waitForSelector("#login-form", WAIT);
  await logIn(VIEWER_NAME);
  ok(await page.$eval('#nav a[href="/audit"]', (a) => a.hidden), "a viewer's menu has no Audit");
  await page.goto(BASE + "/audit", { waitUntil: "networkidle0" });
  await page.waitForFunction(() => /admin role/.test(document.getElementById("toast").textContent), WAIT)
    .then(() => ok(true, "a viewer who types /audit is told it needs the admin role"),
      () => ok(false, "a viewer who types /audit is told it needs the admin role"));
  ok(!(await page.$("#audit-list")), "and sees no rows");

  is((await page.evaluate(() => window.__csp || [])).join("\n"), "", "zero CSP violations");
  ok(viewer403 > 0, `the viewer's 403 answers were the only ones set aside (${viewer403})`);
  is(errors.join("\n"), "", "zero console errors");
} catch (e) {
  ok(false, "the browser run finished", e.stack);
}
await browser.close();
console.log(`1..${n}`);
process.exit(failed ? 1 : 0);
