// trouble.mjs -- drives Chromium through the dashboard's trouble: the
// queue warnings, then the database stopped under the open page (the
// banner, the red dot, 503 JSON, a reload) and started again (the
// recovery).  Prints TAP.  Run by tests/serve_trouble.sh.
// Environment: URL, USER_NAME, PASSWORD, SQL_SH (runs one SQL statement on the test database), DB_SH
// ("stop" or "start" the test database's server), SHOTS (screenshot folder), CHROMIUM, PROFILE.
import { execFileSync } from "node:child_process";
import { WAIT, collectErrors, finish, is, launch, like, ok, shot as shotOf, sql, text as textOf } from "./lib.mjs";

const { URL: BASE, USER_NAME, PASSWORD, DB_SH } = process.env;
const db = (verb) => execFileSync(DB_SH, [verb], { encoding: "utf8" });

const { browser, page } = await launch();
// Chromium logs each 503 as a console error even when the page handles
// it; script errors are what must not happen.
const errors = collectErrors(page, { pageErrorsOnly: true });
const shot = (name) => shotOf(page, name);
const text = (sel) => textOf(page, sel);
const visible = (sel) => page.$eval(sel, (e) => !e.hidden && e.getBoundingClientRect().height > 0).catch(() => false);
// The colour of the live button's dot, and the theme's --danger and
// --done colours, all as the browser computes them ("rgb(...)").
const dot = () => page.evaluate(() => {
  const c = (v) => {
    const e = document.createElement("span");
    e.style.color = `var(${v})`;
    document.body.append(e);
    const got = getComputedStyle(e).color;
    e.remove();
    return got;
  };
  return { dot: getComputedStyle(document.getElementById("live"), "::before").backgroundColor,
    danger: c("--danger"), done: c("--done") };
});
const warned = (sel) => page.$eval(sel, (e) => e.classList.contains("warn")).catch(() => null);
const counter = (queue, state) => `.queue[data-queue="${queue}"] .counter.s-${state}`;

try {
  await page.setViewport({ width: 1280, height: 900 });
  await page.goto(BASE + "/", { waitUntil: "networkidle0" });
  await page.waitForSelector("#login-form", WAIT);
  await page.type("#login-user", USER_NAME);
  await page.type("#login-password", PASSWORD);
  await page.click("#login-submit");
  await page.waitForSelector("#totals", WAIT);
  ok(true, "logged in: the overview is shown");

  // ---- a queue with jobs waiting and no live worker ----
  ok(await page.$eval('.queue[data-queue="mail"]', (e) => e.classList.contains("unserved")),
    "the mail queue (3 ready, no worker) is marked");
  like(await text('.queue[data-queue="mail"] .warning'), /No live worker serves this queue: 3 ready waiting/,
    "its card says no live worker serves it and what waits");
  ok(!(await page.$('.queue[data-queue="default"] .warning')), "the default queue, served, has no warning");
  like(await text("#unserved"), /no live worker in: mail$/, "the totals name the unserved queue");
  like(await text('.queue[data-queue="default"] .serving'), /^1 live worker$/, "a queue card counts its live workers");

  // ---- stale and dead-letter counts that grow ----
  is(await warned(counter("default", "failed")), false, "a dead-letter count seen once has no warning colour");
  is(await warned(counter("default", "stale")), false, "nor a stale count of none");
  sql("INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception) VALUES (9002, 'default', 'echo', '{}', 1, 'boom 2');" +
    " INSERT INTO jobs (queue, type, payload, attempts, lease_token, reserved_by, reserved_at, lease_expires_at)" +
    " VALUES ('default', 'echo', '{}', 1, REPEAT('c', 32), 'host2:99', UTC_TIMESTAMP(6) - INTERVAL 2 MINUTE," +
    " UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE)");
  await page.waitForFunction((sel) => document.querySelector(sel)?.textContent.startsWith("2"), WAIT,
    counter("default", "failed"));
  is(await warned(counter("default", "failed")), true, "a dead-letter count that grew takes the warning colours");
  like(await page.$eval(counter("default", "failed"), (e) => e.title), /^grew /, "saying when it grew");
  is(await warned(counter("default", "stale")), true, "so does a stale count that grew");
  is(await warned("#totals .counter.s-failed"), true, "and the totals' dead-letter count");
  is(await warned(counter("mail", "failed")), false, "a count that did not grow keeps its colour");
  const colours = await page.$eval(counter("default", "failed"), (e) => {
    const plain = document.querySelector('.queue[data-queue="mail"] .counter.s-failed');
    return [getComputedStyle(e).backgroundColor, getComputedStyle(plain).backgroundColor,
      getComputedStyle(e.querySelector("b")).color, getComputedStyle(e).color];
  });
  ok(colours[0] !== colours[1], "the warning colours differ from a plain counter's", colours.join(" / "));
  is(colours[2], colours[3], "the number is drawn in its state's colour");
  await shot("trouble-warnings");

  // ---- the database goes under the open page ----
  const before = await dot();
  is(before.dot, before.done, "while the database answers the live dot is green");
  ok(!(await visible("#banner")), "and there is no banner");
  db("stop");
  ok(true, "the database server is stopped under the open page");
  await page.waitForSelector("#banner:not([hidden])", WAIT);
  const banner = await text("#banner");
  like(banner, /^The database cannot be reached since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d \(\d+s\)/,
    "within a refresh a banner says the database cannot be reached, and since when");
  const down = await dot();
  is(down.dot, down.danger, "the live dot turns red");
  ok(await page.$("#totals") !== null, "the last numbers stay on the page");
  const api = await page.evaluate(async () => {
    const r = await fetch("/api/overview", { credentials: "same-origin" });
    return { status: r.status, type: r.headers.get("Content-Type"), body: await r.json() };
  });
  is(api.status, 503, "an API call answers 503");
  like(api.type, /^application\/json/, "with a JSON body");
  is(api.body.error, "the database cannot be reached", "that says what is wrong");
  await shot("trouble-db-down");

  await page.reload({ waitUntil: "domcontentloaded" });
  await page.waitForSelector("#banner:not([hidden])", WAIT);
  ok(await page.$("header.top .brand") !== null, "a reload in the outage still shows the page shell");
  like(await text("#banner"), /^The database cannot be reached since /, "with the banner");
  const reloaded = await dot();
  ok(await visible("#live"), "and the live dot");
  is(reloaded.dot, reloaded.danger, "red");

  // ---- and comes back ----
  db("start");
  ok(true, "the database server is started again");
  await page.waitForSelector("#totals", WAIT);
  await page.waitForFunction(() => document.getElementById("banner").hidden, WAIT);
  ok(true, "the banner goes and the overview comes back by itself");
  const after = await dot();
  is(after.dot, after.done, "the live dot is green again");
  like(await text('.queue[data-queue="mail"] .counter.s-ready b'), /^3$/, "with the numbers of the database");
  sql("INSERT INTO jobs (queue, type, payload) VALUES ('mail', 'send_email', '{}')");
  await page.waitForFunction(() =>
    document.querySelector('.queue[data-queue="mail"] .counter.s-ready b')?.textContent === "4", WAIT);
  ok(true, "and live again: a new job shows within a refresh");
  await shot("trouble-recovered");
  is(errors.join("\n"), "", "no script error on the page");
} catch (e) {
  ok(false, "the browser run finished", e.stack);
}
await finish(browser);
