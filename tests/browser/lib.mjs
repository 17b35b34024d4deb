// lib.mjs -- what the browser scripts (dashboard.mjs, audit.mjs,
// trouble.mjs) share: TAP output, the SQL runner, Chromium launched
// through puppeteer-core, the page's errors and CSP violations, and the
// ways to read and press elements of a page the live refresh
// (src/www/app.js) redraws every 2 seconds.
// Environment: SQL_SH (runs one SQL statement on the test database),
// SHOTS (screenshot folder), CHROMIUM, PROFILE.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import puppeteer from "puppeteer-core";

const { SQL_SH, SHOTS, CHROMIUM, PROFILE } = process.env;
export const WAIT = { timeout: 20000 };

/* ---- TAP ---- */

let n = 0, failed = 0;

export function ok(cond, name, detail) {
  n++;
  console.log(`${cond ? "ok" : "not ok"} ${n} - ${name}`);
  if (!cond) {
    failed++;
    if (detail !== undefined) console.log(`#   ${String(detail).split("\n").join("\n#   ")}`);
  }
}
export function is(got, want, name) {
  ok(got === want, name, `got:  ${JSON.stringify(got)}\nwant: ${JSON.stringify(want)}`);
}
export function like(got, re, name) {
  ok(re.test(String(got)), name, `got:  ${JSON.stringify(got)}\nwant: ${re}`);
}

// Closes the browser, prints the plan and exits: 1 when a test failed.
export async function finish(browser) {
  await browser.close();
  console.log(`1..${n}`);
  process.exit(failed ? 1 : 0);
}

/* ---- the database and the browser ---- */

export const sql = (q) => execFileSync(SQL_SH, [q], { encoding: "utf8" }).trim();
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// For the tests that stop a long action part way (bulk_stop.mjs,
// failed_stop.mjs), as tests/serve_lib.sh's hold_dead: holdDead holds
// dead row id locked from a session of its own, resolving once the lock
// is taken, until releaseDead ends that session (its transaction rolls
// back), so a request waits there as long as the test needs.
const HELD = "SELECT id FROM information_schema.processlist WHERE db = DATABASE() AND TRIM(info) = 'DO SLEEP(600)'";
export async function holdDead(id) {
  spawn(SQL_SH, [`START TRANSACTION; SELECT id FROM failed_jobs WHERE id = ${id} FOR UPDATE; DO SLEEP(600); COMMIT`],
    { stdio: "ignore" });
  for (let i = 0; i < 200 && sql(HELD) === ""; i++)
    await sleep(100);
}
export function releaseDead() {
  const id = sql(HELD);
  if (id !== "") sql(`KILL ${id}`);
}
// Whether a statement of the test's database comes to wait on a lock
// within 20 s.
export async function lockWaited() {
  for (let i = 0; i < 400; i++) {
    if (sql(`SELECT COUNT(*) FROM information_schema.innodb_trx t
      JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id
      WHERE p.db = DATABASE() AND t.trx_state = 'LOCK WAIT'`) === "1") return true;
    await sleep(50);
  }
  return false;
}
// n dead jobs in queue mail, ids 1001 up, nothing else dead or queued.
export const deadJobs = (n) => sql(`DELETE FROM jobs; DELETE FROM failed_jobs;
  INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception)
  SELECT 1000 + seq, 'mail', 'send_email', '{}', 3, 'smtp 550' FROM seq_1_to_${n}`);

// Chromium, headless, with a profile of the test's own and nothing that
// talks to the network behind the test's back; and its first page.
export async function launch() {
  mkdirSync(PROFILE, { recursive: true });
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
      `--user-data-dir=${PROFILE}`],
  });
  return { browser, page: await browser.newPage() };
}

// The array that collects what goes wrong on the page: every script
// error; unless pageErrorsOnly, also every failed request and every
// console error that setAside(message) does not claim (Chromium logs each
// 4xx or 5xx answer to fetch() as a console error, even one the page
// handles: a script sets aside the ones it asks for on purpose, and
// counts them).
export function collectErrors(page, { setAside = () => false, pageErrorsOnly = false } = {}) {
  const errors = [];
  page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
  if (pageErrorsOnly) return errors;
  page.on("console", (m) => {
    if (m.type() !== "error" || setAside(m)) return;
    errors.push(`console: ${m.text()} ${m.location()?.url || ""}`);
  });
  page.on("requestfailed", (r) => errors.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  return errors;
}

// Every CSP violation is recorded by the page itself, from its first
// script on; cspSeen(page) reads what the current document recorded.
export const recordCsp = (page) => page.evaluateOnNewDocument(() => {
  window.__csp = [];
  document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
});
export const cspSeen = (page) => page.evaluate(() => window.__csp || []);

/* ---- reading and pressing ---- */

// Each of these finds its element and acts on it in one step inside the
// page: the live refresh replaces what main shows every 2 seconds, and
// an element handle taken before a redraw is detached from the document
// after it.  Wait for a state with page.waitForFunction, whose function
// looks the elements up again at every try.

export const shot = (page, name) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
export const text = (page, sel) => page.$eval(sel, (e) => e.textContent);

// Clicks the element sel names once it is there, as the page's own
// element.click(): a mouse click (page.click) finds the element, then
// presses and releases the mouse over where it was, and a redraw in
// between either detaches it ("Node is detached from document") or puts
// a new element under the mouse between press and release, which the
// browser takes as no click at all.  Use it for everything inside main;
// page.click is for the shell's own controls (the menu, Live, the theme,
// Log out) and the login form, which no refresh redraws.
export async function press(page, sel) {
  await page.waitForSelector(sel, WAIT);
  await page.$eval(sel, (e) => e.click());
}

// Presses button sel with dead row lock held (holdDead), says yes to the
// page's question (when question is not null: the question it must
// ask), calls change once the request waits on the lock, then lets the
// lock go, and resolves with the toast once the page has said the
// action stopped.
export async function pressStalled(page, sel, question, lock, change, name) {
  const toast = () => page.$eval("#toast", (e) => e.textContent);
  let asked = null;
  await holdDead(lock);
  if (question !== null) page.once("dialog", (d) => { asked = d.message(); d.accept(); });
  await press(page, sel);
  ok(await lockWaited(), `${name}: the request waits at job ${lock}`);
  is(asked, question, `${name}: the page asked ${question === null ? "nothing" : "first, with the count"}`);
  change();
  releaseDead();
  const said = await page.waitForFunction(() => /then stopped/.test(document.querySelector("#toast").textContent), WAIT)
    .then(() => true, () => false);
  ok(said, `${name}: the page says the action stopped`, `toast: ${await toast()}`);
  return toast();
}

// Logs user in through the login form (URL and PASSWORD from the
// environment) and waits for the overview.
export async function logIn(page, user) {
  await page.goto(process.env.URL + "/login", { waitUntil: "networkidle0" });
  await page.waitForSelector("#login-form", WAIT);
  await page.type("#login-user", user);
  await page.type("#login-password", process.env.PASSWORD);
  await page.click("#login-submit");
  await page.waitForSelector("#totals", WAIT);
}

export const noHScroll = (page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

// Every element that would make a 375 px screen scroll sideways, or that
// only hides it: one drawn past either edge (a mobile viewport widens to
// fit wide content, and an ancestor's overflow: hidden merely cuts it
// off), or one whose content is wider than its box (a table or a line of
// text that overflows, even inside a scroller of its own).  Form fields
// scroll their text by design and are left out.
export const overflow375 = (page) => page.evaluate(() => {
  const W = 375, out = [];
  const name = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
    (typeof e.className === "string" && e.className ? "." + e.className.trim().split(/\s+/).join(".") : "");
  for (const e of document.querySelectorAll("body, body *")) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.right > W + 0.5 || r.left < -0.5) out.push(`${name(e)} drawn at ${Math.round(r.left)}..${Math.round(r.right)}`);
    else if (!["INPUT", "TEXTAREA", "SELECT"].includes(e.tagName) && e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)
      out.push(`${name(e)} holds ${e.scrollWidth} px in ${e.clientWidth}`);
  }
  if (document.documentElement.scrollWidth > W) out.unshift(`the page is ${document.documentElement.scrollWidth} px wide`);
  return out.slice(0, 8);
});
