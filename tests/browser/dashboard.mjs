// dashboard.mjs -- drives Chromium through the dashboard and prints TAP.
// Environment: URL, JOBQ and CONF (the program and its INI), USER_NAME, PASSWORD, SQL_SH (runs one SQL statement
// on the test database), SHOTS (screenshot folder), CHROMIUM, PROFILE.
import { execFileSync } from "node:child_process";
import { WAIT, collectErrors, cspSeen, finish, is, launch, noHScroll, ok, overflow375, press, recordCsp, shot as shotOf,
  sleep, sql, text as textOf } from "./lib.mjs";

const { URL: BASE, JOBQ, CONF, USER_NAME, PASSWORD } = process.env;
const cli = (...args) => execFileSync(JOBQ, ["-c", CONF, ...args], { encoding: "utf8" });

const { browser, page } = await launch();
// The one 4xx the pages ask for on purpose is the cron preview's 422 for
// an expression being typed (shown under the field, tested below): only
// that one is set aside, and counted.
let preview422 = 0;
const errors = collectErrors(page, { setAside: (m) => {
  const preview = / 422 /.test(m.text()) && (m.location()?.url || "").startsWith(`${BASE}/api/cron?`);
  if (preview) preview422++;
  return preview;
} });
await recordCsp(page);
const cspViolations = [];
async function collectCsp(where) {
  for (const x of await cspSeen(page)) cspViolations.push(`${where}: ${x}`);
}
const shot = (name) => shotOf(page, name);
const text = (sel) => textOf(page, sel);

try {
  await page.setViewport({ width: 1280, height: 900 });
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);

  // ---- log in ----
  await page.goto(BASE + "/", { waitUntil: "networkidle0" });
  await page.waitForSelector("#login-form", WAIT);
  ok(true, "the login form is shown to a visitor");
  await shot("login");
  await page.type("#login-user", USER_NAME);
  await page.type("#login-password", PASSWORD);
  await page.click("#login-submit");
  await page.waitForSelector("#totals", WAIT);
  ok(true, "logging in shows the overview");
  await collectCsp("login");

  // ---- counters equal the database's ----
  const counts = await page.$$eval("#totals .counter", (cs) => cs.map((c) => [c.querySelector("span").textContent, c.querySelector("b").textContent]));
  const db = {
    ready: sql("SELECT COUNT(*) FROM jobs WHERE lease_token IS NULL AND available_at <= UTC_TIMESTAMP(6)"),
    delayed: sql("SELECT COUNT(*) FROM jobs WHERE lease_token IS NULL AND available_at > UTC_TIMESTAMP(6) AND waiting_on = 0"),
    waiting: sql("SELECT COUNT(*) FROM jobs WHERE lease_token IS NULL AND waiting_on > 0"),
    reserved: sql("SELECT COUNT(*) FROM jobs WHERE lease_token IS NOT NULL AND lease_expires_at > UTC_TIMESTAMP(6)"),
    stale: sql("SELECT COUNT(*) FROM jobs WHERE lease_token IS NOT NULL AND lease_expires_at <= UTC_TIMESTAMP(6)"),
    failed: sql("SELECT COUNT(*) FROM failed_jobs"),
  };
  is(JSON.stringify(counts), JSON.stringify(Object.entries(db)), "the six counters equal the database's");
  const mail = await page.$$eval('.queue[data-queue="mail"] .counter b', (bs) => bs.map((b) => b.textContent).join(","));
  is(mail, [
    sql("SELECT COUNT(*) FROM jobs WHERE queue = 'mail' AND lease_token IS NULL AND available_at <= UTC_TIMESTAMP(6)"),
    sql("SELECT COUNT(*) FROM jobs WHERE queue = 'mail' AND lease_token IS NULL AND available_at > UTC_TIMESTAMP(6) AND waiting_on = 0"),
    sql("SELECT COUNT(*) FROM jobs WHERE queue = 'mail' AND lease_token IS NULL AND waiting_on > 0"),
    "0", "0", sql("SELECT COUNT(*) FROM failed_jobs WHERE queue = 'mail'")].join(","), "the mail queue's counters too");
  const bars = await page.$$eval("svg.chart rect", (rs) => rs.length);
  ok(bars > 0, `the runs-per-minute chart draws bars from job_runs (${bars})`);
  is(await text("#workers-alive"), "1 worker alive", "workers alive");
  await shot("overview");

  // ---- keyboard ----
  await page.goto(BASE + "/", { waitUntil: "networkidle0" });
  await page.waitForSelector("#totals", WAIT);
  await page.keyboard.press("Tab");
  is(await page.evaluate(() => document.activeElement.textContent), "Skip to content", "the first Tab reaches 'Skip to content'");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  is(await page.evaluate(() => document.activeElement.getAttribute("href")), "/", "then the menu, one link per Tab");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Enter");
  await page.waitForSelector("#jobs-table", WAIT);
  is(new URL(page.url()).pathname, "/jobs", "Enter on a menu link opens its page");
  await page.goto(BASE + "/", { waitUntil: "networkidle0" });
  await page.waitForSelector("#totals", WAIT);

  // ---- live refresh, and pausing it ----
  sql("INSERT INTO failed_jobs (id, queue, type, payload, exception) VALUES (9003, 'default', 'echo', '{}', 'late')");
  await page.waitForFunction(() => document.querySelector("#totals .counter.s-failed b").textContent === "3", WAIT);
  ok(true, "a new dead job appears in the counters without a reload");
  await page.click("#live");
  is(await page.$eval("#live", (b) => b.getAttribute("aria-pressed")), "false", "the Live button pauses");
  sql("INSERT INTO failed_jobs (id, queue, type, payload, exception) VALUES (9004, 'default', 'echo', '{}', 'later')");
  await sleep(4500);
  is(await text("#totals .counter.s-failed b"), "3", "paused: the counters stay as they were");
  await page.click("#live");
  await page.waitForFunction(() => document.querySelector("#totals .counter.s-failed b").textContent === "4", WAIT);
  ok(true, "resumed: they catch up");
  sql("DELETE FROM failed_jobs WHERE id IN (9003, 9004)");

  // ---- a page opened while a redraw is in flight ----
  // The live refresh's request for the overview is held; meanwhile the
  // menu opens Workers and Live is paused, so no later tick can mend
  // what the held redraw leaves: the Workers page must come all the same.
  let held = null;
  const hold = (r) => {
    if (!held && r.url().startsWith(`${BASE}/api/overview`)) held = r;
    else r.continue();
  };
  await page.setRequestInterception(true);
  page.on("request", hold);
  for (let t = 0; !held && t < 100; t++) await sleep(100);
  ok(held, "a live refresh of the overview is in flight");
  await page.click('#nav a[href="/workers"]');
  await page.click("#live");
  await held?.continue();
  const opened = await page.waitForSelector("#workers-table", WAIT).then(() => true, () => false);
  ok(opened && (await text("main h1")) === "Workers", "the page opened during it is drawn once it ends, not the old one");
  page.off("request", hold);
  await page.setRequestInterception(false);
  await page.click("#live");
  await page.goto(BASE + "/", { waitUntil: "networkidle0" });
  await page.waitForSelector("#totals", WAIT);

  // ---- pausing a queue from its card (as jobq pause) ----
  await press(page, '.queue[data-queue="mail"] button.pause');
  await page.waitForSelector('.queue[data-queue="mail"] .paused', WAIT);
  is(sql("SELECT COUNT(*) FROM jobq_paused WHERE queue = 'mail'"), "1", "Pause on the mail card pauses the queue in the database");
  is(await text('.queue[data-queue="mail"] button.pause'), "Resume", "the card says paused and offers Resume");
  await press(page, '.queue[data-queue="mail"] button.pause');
  await page.waitForFunction(() => !document.querySelector('.queue[data-queue="mail"] .paused'), WAIT);
  is(sql("SELECT COUNT(*) FROM jobq_paused WHERE queue = 'mail'"), "0", "Resume lets workers take it again");

  // ---- a job from the list ----
  await page.click('#nav a[href="/jobs"]');
  await page.waitForSelector("#jobs-table", WAIT);
  const listed = await page.$$eval("#jobs-table tbody tr", (rs) => rs.map((r) => r.dataset.id).join(","));
  is(listed, sql("SELECT GROUP_CONCAT(id ORDER BY id) FROM jobs"), "the jobs list shows every job, by id");
  await shot("jobs");
  const staleId = sql("SELECT id FROM jobs WHERE lease_token = REPEAT('c', 32)");
  await press(page, `#jobs-table tr[data-id="${staleId}"] a`);
  await page.waitForFunction((id) => document.querySelector("h1")?.textContent.startsWith(`Job #${id}`), WAIT, staleId);
  is(new URL(page.url()).pathname, `/jobs/${staleId}`, "clicking a job opens its shareable address");
  ok((await text("h1")).includes("stale"), "the detail shows the job's state");
  // Times: in the configured zone (Asia/Kolkata, UTC+05:30), UTC on hover.
  const [shown, hover] = await page.$eval("dl.kv time", (t) => [t.textContent, t.title]);
  const created = sql(`SELECT DATE_FORMAT(created_at, '%Y-%m-%d %H:%i:%s') FROM jobs WHERE id = ${staleId}`);
  const local = sql(`SELECT DATE_FORMAT(created_at + INTERVAL 330 MINUTE, '%Y-%m-%d %H:%i:%s') FROM jobs WHERE id = ${staleId}`);
  is(hover, `${created} UTC`, "a time shows UTC on hover");
  is(shown, `${local} +05:30`, "and the configured time zone on the page, with its offset as the CLI prints it");
  await shot("job");
  await collectCsp("jobs");

  // ---- a job through its address ----
  const readyId = sql("SELECT id FROM jobs WHERE type = 'send_email' AND available_at <= UTC_TIMESTAMP(6)");
  await page.goto(`${BASE}/jobs/${readyId}`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#payload", WAIT);
  is(await text("#payload"), JSON.stringify({ to: "a@example.com" }, null, 2), "the address /jobs/ID shows the job's payload, pretty-printed");

  // ---- a finished job: kept as its runs, shown, nothing to act on ----
  await page.goto(`${BASE}/jobs/424242`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#gone-note", WAIT);
  is(await text("h1 .badge"), "done", "a done job's page says done");
  is(await text("#payload"), JSON.stringify({ to: "ops@example.com" }, null, 2), "with the payload its done run kept");
  is(await page.$eval("main pre.result", (e) => e.textContent), JSON.stringify({ sent: 1 }, null, 2), "and the handler's result");
  is(await page.$$eval("#follow-ups a", (as) => as.map((a) => a.getAttribute("href")).join(" ")), "/jobs/1 /jobs/9002",
    "and links to the follow-ups its handler enqueued");
  is(await page.$$eval("main button", (bs) => bs.length), 0, "and no action buttons");

  // ---- the history: a search across the queue, the dead letter and done jobs ----
  await page.goto(`${BASE}/history`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#history-table", WAIT);
  await page.type("#h-text", "ops@EXAMPLE");
  // the list before the search is marked, so the wait below sees the new one
  await page.$eval("#history-table", (t) => { t.dataset.old = "1"; });
  await page.$eval("main form.filters", (f) => f.requestSubmit());
  // A text search reads 15,000 rows of each place a request; 40,000 old
  // runs of other jobs lie before job 424242, and the page walks on by
  // itself for a moment: it is found, at most a few "Search further" away
  // on a slow machine.
  let further = 0;
  for (;;) {
    await page.waitForFunction(() => location.search.includes("q=ops") &&
      (document.querySelector("#history-table:not([data-old])") || document.querySelector("main p.empty")), WAIT);
    if (await page.$('#history-table tr[data-id="424242"]') || !(await page.$("#history-next")) || further > 17) break;
    const at = await page.$eval("#searched-to", (e) => e.textContent);
    await press(page, "#history-next");
    await page.waitForFunction((t) => document.querySelector("#searched-to")?.textContent !== t, WAIT, at);
    further++;
  }
  is(await page.$eval("#history-table tbody tr", (r) => r.dataset.id + " " + r.cells[1].textContent), "424242 done",
    `History: the payload text finds the done job, whatever the case (after ${further} "Search further")`);
  await press(page, '#history-table tr[data-id="424242"] a');
  await page.waitForSelector("#gone-note", WAIT);
  is(new URL(page.url()).pathname, "/jobs/424242", "and its row opens the job's page");

  // ---- charts: jobs by outcome, wait and run time, with their scales ----
  // The runs were planted before the server started; its roll-up counts
  // them within seconds (the page says when some are still uncounted).
  const doneHour = sql("SELECT COUNT(*) FROM job_runs WHERE outcome = 'done' AND started_at > UTC_TIMESTAMP() - INTERVAL 58 MINUTE");
  await page.goto(`${BASE}/charts`, { waitUntil: "networkidle0" });
  await page.waitForFunction((n) => document.querySelector("#chart-jobs .legend .s-done")?.textContent === "■ done " + n,
    WAIT, doneHour);
  ok(true, `Charts: the last hour's done jobs in the legend equal the database's (${doneHour})`);
  const scale = await page.$$eval("#chart-jobs svg text", (ts) => ts.map((t) => t.textContent));
  ok(scale.includes("0") && scale.some((t) => /^[1-9][0-9,]*$/.test(t)), `a count scale on the left (${scale.slice(0, 4).join(" ")})`);
  ok(scale.filter((t) => /^\d\d:\d\d$/.test(t)).length >= 3, `times along the bottom (${scale.filter((t) => t.includes(":")).join(" ")})`);
  const bar = await page.$eval("#chart-jobs rect.bar-done title", (t) => t.textContent);
  ok(/^\d\d:\d\d: \d+ done$/.test(bar), `each bar names its minute and count on hover (${bar})`);
  const runP50 = await text("#chart-run .legend .p50");
  ok(/^● p50 1[0-9](\.\d)? ms$/.test(runP50), `the run-time chart's p50 is about the runs' 12 ms (${runP50})`);
  ok((await page.$$eval("#chart-run svg circle", (cs) => cs.length)) > 0, "with a point per minute that had runs");
  is(await text("#chart-wait .legend .p50"), "● p50 —", "runs written without a wait (planted by SQL) leave the wait chart empty");
  await shot("charts");
  await page.select("main form.filters select[name=range]", "7d");
  await page.select("main form.filters select[name=queue]", "mail");
  await page.$eval("main form.filters", (f) => f.requestSubmit());
  await page.waitForFunction(() => location.search.includes("range=7d") &&
    document.querySelector("main h2")?.textContent === "Jobs per 2 hours", WAIT);
  is(await text("#chart-jobs .legend .s-done"), "■ done " +
    sql("SELECT COUNT(*) FROM job_runs WHERE queue = 'mail' AND outcome = 'done' AND started_at > UTC_TIMESTAMP() - INTERVAL 6 DAY"),
    "the last 7 days of queue mail: its done jobs");
  ok((await text("#chart-scope")).startsWith("Last 7 days, queue mail, every type."), "the page says what it shows");

  // ---- retry a dead job ----
  await page.goto(`${BASE}/failed`, { waitUntil: "networkidle0" });
  await page.waitForSelector('#failed-table tr[data-id="9001"]', WAIT);
  ok(true, "the dead letter lists job 9001");
  is(await page.$eval('#failed-table tr[data-id="9001"] .first-line', (e) => e.textContent), "smtp: 550 no such user", "with the first line of its exception");
  await shot("failed");
  await press(page, '#failed-table tr[data-id="9001"] .retry-one');
  await page.waitForFunction(() => !document.querySelector('#failed-table tr[data-id="9001"]'), WAIT);
  ok(true, "retried, job 9001 leaves the dead-letter list");
  is(sql("SELECT CONCAT((SELECT COUNT(*) FROM failed_jobs WHERE id = 9001), '/', (SELECT COUNT(*) FROM jobs WHERE id = 9001))"), "0/1", "and is back in the queue");
  is(sql("SELECT CONCAT(username, ' ', action) FROM jobq_audit WHERE job_id = 9001"), `${USER_NAME} retry`, "the retry is audited");
  // retry selected: tick the box of 9002, press the button
  // (clicked inside the page: the list re-renders on its own every 2 s, and
  // a handle taken before a re-render would be detached by the click)
  await page.waitForFunction(() => {
    const box = document.querySelector('#failed-table tr[data-id="9002"] input[type="checkbox"]');
    if (box && !box.checked) box.click();
    return box?.checked && !document.querySelector("#retry-selected").disabled;
  }, WAIT);
  await press(page, "#retry-selected");
  await page.waitForFunction(() => !document.querySelector('#failed-table tr[data-id="9002"]'), WAIT);
  is(sql("SELECT CONCAT((SELECT COUNT(*) FROM failed_jobs), '/', (SELECT COUNT(*) FROM jobs WHERE id = 9002))"), "0/1", "retry selected: 9002 left the dead letter for the queue");
  sql("INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception, exit_status, reason) VALUES (9005, 'mail', 'send_email', '{}', 5, 'smtp: 554 rejected', 'exit 65', 'permanent exit status')");
  await collectCsp("failed");

  // ---- bulk actions on a filter: the exact count is asked, then done ----
  sql("INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception) SELECT 9100 + seq, 'default', 'echo', '{}', 1, 'bad' FROM seq_1_to_3");
  await page.goto(`${BASE}/failed?queue=default`, { waitUntil: "networkidle0" });
  await page.waitForSelector('#failed-table tr[data-id="9103"]', WAIT);
  let bulkAsked = "";
  page.once("dialog", (d) => { bulkAsked = d.message(); d.accept(); });
  await press(page, "#retry-all");
  await page.waitForFunction(() => !document.querySelector('#failed-table tr[data-id="9101"]'), WAIT);
  is(bulkAsked, "Retry 3 dead jobs in queue default?", "Retry all matching asks with the exact count of the filter");
  is(sql("SELECT CONCAT((SELECT COUNT(*) FROM jobs WHERE id BETWEEN 9101 AND 9103), '/', (SELECT COUNT(*) FROM jobq_audit WHERE action = 'retry' AND job_id BETWEEN 9101 AND 9103))"),
    "3/3", "and the 3 are back in the queue, each audited");
  sql("INSERT INTO jobs (queue, type, payload, available_at) SELECT 'default', 'echo', '{\"bulk\": 1}', UTC_TIMESTAMP(6) + INTERVAL 2 DAY FROM seq_1_to_2");
  await page.goto(`${BASE}/jobs?queue=default&state=delayed`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#jobs-table", WAIT);
  page.once("dialog", (d) => { bulkAsked = d.message(); d.accept(); });
  await press(page, "#delete-all");
  await page.waitForFunction(() => document.querySelector("main p.empty"), WAIT);
  is(bulkAsked, "Delete for good 2 delayed jobs in queue default?", "Delete all delayed jobs asks with the count");
  is(sql("SELECT COUNT(*) FROM jobs WHERE payload LIKE '%bulk%'"), "0", "and they are gone");

  // ---- run now and delete (with its confirmation) on a job's page ----
  // A job that others wait for offers Cancel, not Delete (its dependents
  // would never see it end); the job deleted is one nothing waits for.
  const waitedFor = sql("SELECT id FROM jobs WHERE has_waiters > 0 AND waiting_on = 0");
  await page.goto(`${BASE}/jobs/${waitedFor}`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#act-cancel", WAIT);
  is(await page.$("#act-delete"), null, `job ${waitedFor}, which another job waits for, offers no Delete`);
  sql("INSERT INTO jobs (queue, type, payload, available_at) VALUES ('mail', 'send_email', '{\"later\": 2}', UTC_TIMESTAMP(6) + INTERVAL 1 HOUR)");
  const laterId = sql("SELECT id FROM jobs WHERE available_at > UTC_TIMESTAMP(6) + INTERVAL 10 MINUTE AND waiting_on = 0 AND has_waiters = 0");
  await page.goto(`${BASE}/jobs/${laterId}`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#act-run", WAIT);
  await press(page, "#act-run");
  await page.waitForFunction(() => document.querySelector("h1 .badge")?.textContent === "ready", WAIT);
  is(sql(`SELECT available_at <= UTC_TIMESTAMP(6) FROM jobs WHERE id = ${laterId}`), "1", "run now: the delayed job is due, and the page says ready");
  let asked = "";
  page.once("dialog", (d) => { asked = d.message(); d.accept(); });
  await press(page, "#act-delete");
  await page.waitForFunction(() => location.pathname === "/jobs" && document.querySelector("#jobs-table"), WAIT);
  ok(asked.startsWith(`Delete job ${laterId}`), `delete asks first ("${asked}"), then shows the jobs list`);
  is(sql(`SELECT COUNT(*) FROM jobs WHERE id = ${laterId}`), "0", "and the job is gone");
  is(sql(`SELECT GROUP_CONCAT(action ORDER BY id) FROM jobq_audit WHERE job_id = ${laterId}`), "run-now,delete", "both actions are audited");

  // ---- cancel: a job's page, a filter; a queued job's expiry and a pending cancel ----
  sql("INSERT INTO jobs (queue, type, payload, available_at) VALUES ('default', 'echo', '{\"cancel\": 1}', UTC_TIMESTAMP(6) + INTERVAL 1 DAY)");
  const cancelId = sql("SELECT id FROM jobs WHERE payload LIKE '%cancel%'");
  await page.goto(`${BASE}/jobs/${cancelId}`, { waitUntil: "networkidle0" });
  page.once("dialog", (d) => { asked = d.message(); d.accept(); });
  await press(page, "#act-cancel");
  await page.waitForFunction((id) => document.querySelector("#toast").textContent === `Job ${id} cancelled`, WAIT, cancelId);
  is(asked, `Cancel job ${cancelId} (echo)?`, "Cancel on a delayed job's page asks first, then says it is cancelled");
  is(sql(`SELECT CONCAT((SELECT COUNT(*) FROM jobs WHERE id = ${cancelId}), ' ', (SELECT GROUP_CONCAT(CONCAT(outcome, ' by ', worker))
    FROM job_runs WHERE job_id = ${cancelId}), ' ', (SELECT GROUP_CONCAT(action) FROM jobq_audit WHERE job_id = ${cancelId}))`),
    `0 cancelled by ${USER_NAME} cancel`, "the job left jobs for one run, cancelled by the admin, and the cancel is audited");
  await page.reload({ waitUntil: "networkidle0" });
  await page.waitForSelector("#gone-note", WAIT);
  ok((await text("h1 .badge")) === "cancelled" && (await text("#gone-note")).startsWith("Cancelled: "),
    "reloaded, its page says cancelled, and what became of it");
  is(await page.$$eval("main button", (bs) => bs.length), 0, "with nothing left to act on");
  sql("INSERT INTO jobs (queue, type, payload, available_at) SELECT 'mail', 'send_email', '{}', UTC_TIMESTAMP(6) + INTERVAL seq HOUR FROM seq_1_to_2");
  const mailIds = sql("SELECT GROUP_CONCAT(id) FROM jobs WHERE queue = 'mail'"), inMail = mailIds.split(",").length;
  await page.goto(`${BASE}/jobs?queue=mail`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#jobs-table", WAIT);
  page.once("dialog", (d) => { bulkAsked = d.message(); d.accept(); });
  await press(page, "#cancel-all");
  await page.waitForFunction(() => document.querySelector("main p.empty"), WAIT);
  is(bulkAsked, `Cancel ${inMail} jobs in queue mail (running ones are stopped)?`, "Cancel all of queue mail asks with the count");
  is(sql(`SELECT CONCAT((SELECT COUNT(*) FROM jobs WHERE queue = 'mail'), '/',
    (SELECT COUNT(*) FROM job_runs WHERE outcome = 'cancelled' AND job_id IN (${mailIds})))`), `0/${inMail}`, "and cancels those jobs");
  sql(`INSERT INTO jobs (queue, type, payload, expires_at) VALUES ('default', 'echo', '{}', UTC_TIMESTAMP(6) + INTERVAL 2 HOUR);
       INSERT INTO jobs (queue, type, payload, attempts, lease_token, reserved_by, reserved_at, lease_expires_at, cancel_by, cancel_at, expires_at)
         VALUES ('default', 'echo', '{}', 1, REPEAT('d', 32), 'host1:4242', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL 1 HOUR,
                 'ops-lead', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`);
  const [expiresId, requestedId] = sql("SELECT GROUP_CONCAT(id ORDER BY id) FROM jobs WHERE expires_at IS NOT NULL").split(",");
  await page.goto(`${BASE}/jobs/${expiresId}`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#expires", WAIT);
  is(await text("#expires"), sql(`SELECT DATE_FORMAT(expires_at + INTERVAL 330 MINUTE, '%Y-%m-%d %H:%i:%s') FROM jobs WHERE id = ${expiresId}`) +
    " +05:30 (it never starts after)", "a queued job with an expiry shows when it expires");
  await page.goto(`${BASE}/jobs/${requestedId}`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#cancel-requested", WAIT);
  ok(/^requested by ops-lead at \S+ \S+ \+05:30: its worker is stopping it$/.test(await text("#cancel-requested")) &&
    !(await page.$("#expires")), `a running job with a cancel request says so, not when it expires (${await text("#cancel-requested")})`);

  // ---- enqueue from the form ----
  await page.goto(`${BASE}/enqueue`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#enqueue-form", WAIT);
  await page.select("#enq-type", "send_email");
  is(await page.$eval("#enq-queue", (s) => s.value), "mail", "choosing a type picks its queue");
  await page.$eval("#enq-payload", (t) => { t.value = ""; });
  await page.type("#enq-payload", '{"to": "browser');
  ok(await page.$eval("#enq-submit", (b) => b.disabled), "a payload that is not JSON disables the button");
  ok((await text("#enq-payload-error")).startsWith("Not valid JSON"), "and says why");
  await page.type("#enq-payload", '@example.com"}');
  ok(!(await page.$eval("#enq-submit", (b) => b.disabled)), "valid JSON enables it");
  await shot("enqueue");
  await press(page, "#enq-submit");
  await page.waitForSelector("#enq-result a", WAIT);
  const newId = (await text("#enq-result a")).replace(/\D/g, "");
  is(sql(`SELECT CONCAT(type, ' ', queue, ' ', payload) FROM jobs WHERE id = ${newId}`), 'send_email mail {"to": "browser@example.com"}', "the job is in the database as typed");
  // an enqueue of many: every job's page shows it (not only the first's)
  await page.$eval("#enq-count", (c) => { c.value = "3"; });
  await press(page, "#enq-submit");
  await page.waitForFunction((id) => document.querySelector("#enq-result a")?.textContent.replace(/\D/g, "") !== id, WAIT, newId);
  const firstOf3 = (await text("#enq-result a")).replace(/\D/g, "");
  const lastOf3 = sql(`SELECT MAX(id) FROM jobs WHERE id >= ${firstOf3}`);
  await page.goto(`${BASE}/jobs/${lastOf3}`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#audit", WAIT);
  ok((await text("#audit")).includes("enqueue (one of 3 jobs)"), `the page of job ${lastOf3}, the last of 3 enqueued at once, shows the enqueue`);

  // ---- workers ----
  await page.goto(`${BASE}/workers`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#workers-table", WAIT);
  ok((await text("#workers-table tbody")).includes("host1 / 4242"), "the workers page lists the registered worker");
  await shot("workers");
  await collectCsp("workers");

  // ---- schedules ----
  await page.goto(`${BASE}/schedules`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#schedules-table", WAIT);
  const cliList = JSON.parse(cli("schedule", "--list", "--json"));
  const rowsShown = await page.$$eval("#schedules-table tbody tr", (rs) => rs.map((r) => [r.dataset.name, r.querySelector("code").textContent, r.querySelector("td:nth-child(2) div").textContent]));
  is(JSON.stringify(rowsShown), JSON.stringify(cliList.map((x) => [x.name, x.cron, x.when])), "the schedules page lists what jobq schedule --list shows: name, expression, description");
  ok((await page.$eval('#schedules-table tr[data-name="nightly-report"] time', (t) => t.textContent)).includes(" 03:00:00 +0"),
    "the next fire is shown in the schedule's zone (03:00 Paris time)");
  ok((await text("#cron-card")).includes("day-of-week"), "the cron syntax card is on the page");
  await shot("schedules");
  await press(page, '#schedules-table tr[data-name="nightly-report"] .run-now');
  await page.waitForFunction(() => document.querySelector("#toast").textContent.includes("enqueued as job"), WAIT);
  is(sql("SELECT CONCAT(status, ',', manual) FROM jobq_schedule_runs WHERE name = 'nightly-report'"), "enqueued,1", "Run now enqueues a manual fire");
  is(sql("SELECT CONCAT(username, ' ', detail) FROM jobq_audit WHERE action = 'schedule-run-now'"), `${USER_NAME} nightly-report`, "and is audited");
  await press(page, '#schedules-table tr[data-name="nightly-report"] .toggle');
  await page.waitForFunction(() => document.querySelector('#schedules-table tr[data-name="nightly-report"] .toggle')?.textContent === "Enable", WAIT);
  is(JSON.parse(cli("schedule", "--list", "--json")).find((x) => x.name === "nightly-report").enabled, false, "Disable switches it off (as jobq schedule --list sees it)");
  await press(page, '#schedules-table tr[data-name="nightly-report"] .toggle');
  await page.waitForFunction(() => document.querySelector('#schedules-table tr[data-name="nightly-report"] .toggle')?.textContent === "Disable", WAIT);
  is(sql("SELECT GROUP_CONCAT(action ORDER BY id) FROM jobq_audit WHERE detail = 'nightly-report'"), "schedule-run-now,schedule-disable,schedule-enable", "each action is audited");
  await collectCsp("schedules");

  await press(page, '#schedules-table tr[data-name="cleanup"] a');
  await page.waitForSelector("#cron-input", WAIT);
  is(new URL(page.url()).pathname, "/schedules/cleanup", "a schedule has its own address");
  await page.waitForSelector("#preview-next li", WAIT);
  is(await page.$$eval("#history-failed tbody tr", (rs) => rs.length), 1, "history: the dead-lettered fire is under Failures");
  is(await page.$$eval("#history-succeeded tbody tr", (rs) => rs.length), 1, "history: the done fire is under Successes");
  await page.$eval("#cron-input", (i) => { i.focus(); i.select(); }); /* as a triple click, on the input there now */
  await page.keyboard.press("Backspace");
  await page.type("#cron-input", "0 25 * * *");
  await page.waitForSelector("#preview-error", WAIT);
  is(await text("#preview-error"), "hour: 25 is out of range 0-23 (column 3)", "typing a bad expression: the cron module's message, field and column");
  ok(await page.$eval("#schedule-edit button[type=submit]", (b) => b.disabled), "and Save is disabled");
  for (let i = 0; i < "25 * * *".length; i++) await page.keyboard.press("Backspace");
  await page.type("#cron-input", "4 * * 1-5");
  await page.waitForSelector("#preview-desc", WAIT);
  const wantPreview = cli("cron", "0 4 * * 1-5", "--timezone", "America/New_York", "--count", "5").trim().split("\n");
  is(await text("#preview-desc"), wantPreview[0], "a good one: the description updates as I type");
  is(JSON.stringify(await page.$$eval("#preview-next time", (ts) => ts.map((t) => t.getAttribute("datetime")))),
    JSON.stringify(wantPreview.slice(1)), "and the next five fires in the schedule's zone, as jobq cron prints them");
  await shot("schedule-edit");
  await press(page, "#schedule-edit button[type=submit]");
  await page.waitForFunction(() => !document.querySelector("#schedule-edit input") || document.querySelector("#toast").textContent.includes("saved"), WAIT);
  await page.waitForFunction(() => document.querySelector("#schedule-info code")?.textContent === "0 4 * * 1-5", WAIT);
  is(sql("SELECT cron FROM jobq_schedules WHERE name = 'cleanup'"), "0 4 * * 1-5", "Save changes the database schedule's expression");
  is(sql("SELECT detail FROM jobq_audit WHERE action = 'schedule-edit'"), "cleanup: cron '*/10 * * * *' -> '0 4 * * 1-5'", "and is audited");
  await collectCsp("schedule");

  // ---- sessions: an admin logs a user out everywhere ----
  await page.goto(BASE + "/sessions", { waitUntil: "networkidle0" });
  await page.waitForSelector("#sessions-table", WAIT);
  const sessRows = await page.$$eval("#sessions-table tbody tr", (rs) => rs.map((r) => [r.cells[0].textContent, r.cells[2].textContent]));
  ok(sessRows.some(([u, n]) => u === USER_NAME && Number(n) >= 1), "the Sessions page lists the admin's own session");
  let endAsked = "";
  page.once("dialog", (d) => { endAsked = d.message(); d.accept(); });
  await page.evaluate((u) => [...document.querySelectorAll("#sessions-table tbody tr")]
    .find((r) => r.cells[0].textContent === u).querySelector("button.end-sessions").click(), USER_NAME);
  await page.waitForSelector("#login-form", WAIT);
  is(endAsked, `End every session of ${USER_NAME}?`, "End sessions asks first");
  is(sql(`SELECT COUNT(*) FROM jobq_sessions WHERE username = '${USER_NAME}'`), "0", "and ends every session of the user: the page shows the login form");
  const endAudit = sql("SELECT detail FROM jobq_audit WHERE action = 'end-sessions'");
  ok(new RegExp(`^user ${USER_NAME}: \\d+ sessions?$`).test(endAudit), `audited (${endAudit})`);
  await page.type("#login-user", USER_NAME);
  await page.type("#login-password", PASSWORD);
  await page.click("#login-submit");
  await page.waitForSelector("#sessions-table", WAIT); /* back on the page it was on */
  await collectCsp("sessions");

  // ---- 375 px wide ----
  await page.setViewport({ width: 375, height: 800, isMobile: true, hasTouch: true });
  for (const [path, sel] of [["/", "#totals"], ["/jobs", "#jobs-table"], [`/jobs/${staleId}`, "#payload"],
    ["/failed", "#failed-table"], ["/workers", "#workers-table"], ["/enqueue", "#enqueue-form"],
    ["/schedules", "#schedules-table"], ["/schedules/cleanup", "#preview-next li"], ["/sessions", "#sessions-table"]]) {
    await page.goto(BASE + path, { waitUntil: "networkidle0" });
    await page.waitForSelector(sel, WAIT);
    ok(await noHScroll(page), `no horizontal scroll at 375 px on ${path}`);
    is((await overflow375(page)).join(", "), "", `no element drawn past 375 px or wider than its box on ${path}`);
    if (path.startsWith("/schedules")) await shot("mobile-" + path.slice(1).replace("/", "-"));
    if (path === "/" || path === "/failed" || path.startsWith("/jobs/")) await shot("mobile-" + (path === "/" ? "overview" : path.split("/")[1]));
    await collectCsp(path);
  }
  const small = await page.$$eval("button, nav a, input, select", (es) => es.filter((e) => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && (r.height < 32 || r.width < 20);
  }).map((e) => e.id || e.textContent || e.name));
  is(small.join(","), "", "touch targets are at least 32 px high on the enqueue page");
  await page.setViewport({ width: 1280, height: 900 });

  // ---- a group, a job's dependencies and dependents, the dead-letter rule (issue 23) ----
  const GROUP = "quarterly-close-2026-q4";
  execFileSync(JOBQ, ["-c", CONF, "enqueue", "--batch", "--group", GROUP, "--on-complete", "echo", "--on-success", "send_email"],
    { encoding: "utf8", input: ['{"type": "echo", "payload": {"step": "extract"}, "ref": "a"}',
      '{"type": "echo", "payload": {"step": "load"}, "ref": "b", "after": ["a"]}',
      '{"type": "echo", "payload": {"step": "report"}, "after": ["a", "b"]}'].join("\n") + "\n" });
  const gid = sql(`SELECT id FROM jobq_groups WHERE name = '${GROUP}'`);
  const [ga, gb, gc] = sql(`SELECT GROUP_CONCAT(id ORDER BY id) FROM jobs WHERE group_id = ${gid}`).split(",");
  await page.goto(`${BASE}/history`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#h-text", WAIT);
  await page.type("#h-text", "group:quarterly");
  await page.$eval("form.filters", (f) => f.requestSubmit());
  await page.waitForSelector("#groups-found a", WAIT);
  is(await text("#groups-found a"), GROUP, "the search finds a group by the start of its name (group:NAME)");
  await press(page, "#groups-found a");
  await page.waitForSelector("#group-legend", WAIT);
  is(await text("#group-name"), GROUP, "its link opens the group's page");
  is(await page.$$eval("#group-legend li", (ls) => ls.map((l) => l.dataset.state + " " + l.textContent.trim()).join(", ")),
    "ready ready 1, waiting waiting 2", "its progress: the queued jobs by state");
  is(await page.$$eval(".stack .seg", (ss) => ss.map((s) => Math.round(s.getBoundingClientRect().width / s.parentNode.clientWidth * 3)).join(",")),
    "1,2", "the bar's parts are as wide as their shares");
  ok((await text("#group-progress")).startsWith("0 of 3 jobs ended"), "and how many of its jobs ended");
  is(await page.$$eval("dl.kv dd .callback", (cs) => cs.map((c) => c.textContent).join(" | ")),
    "echo not enqueued: once every job has ended | send_email not enqueued: once every job is done", "its callbacks, not enqueued yet");
  is(await page.$$eval("#group-jobs tbody tr", (rs) => rs.map((r) => r.dataset.id).join(",")), [ga, gb, gc].join(","),
    "its jobs in the queue, each linked");
  is(await page.$$eval("#group-waiting li", (ls) => ls.map((l) => l.textContent).join(" | ")),
    `#${gb} waits for #${ga} | #${gc} waits for #${ga}, #${gb}`, "and what its waiting jobs wait for");
  await shot("group");
  await press(page, `#group-jobs tr[data-id="${gc}"] a`);
  await page.waitForSelector("#waits-for", WAIT);
  is(await page.$$eval("#waits-for li", (ls) => ls.map((l) => l.textContent).join(", ")), `#${ga} ready, #${gb} waiting`,
    "a job's page: what it waits for, with their states");
  is(await text("#job-group"), GROUP, "and its group");
  ok(!(await page.$("#dependents")), "nothing waits for it: no dependents");
  await press(page, "#job-group");
  await page.waitForSelector("#group-name", WAIT);
  ok(true, "the group link goes back to the group's page");
  // ga dead, as a worker's outcome leaves it: gb and gc, which wait for
  // it, parked under it (sql/024-parked.sql), still in the queue until
  // the sweep finalizes them.
  sql(`INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception, exit_status, reason)
         SELECT id, queue, type, payload, 3, 'boom', 'exit 65', 'permanent exit status' FROM jobs WHERE id = ${ga};
       DELETE FROM jobs WHERE id = ${ga};
       INSERT INTO jobq_parked (id, parked_by, queue, type, payload, created_at)
         SELECT id, ${ga}, queue, type, payload, created_at FROM jobs WHERE id IN (${gb}, ${gc});
       INSERT INTO jobq_parked_deps (job_id, after_id) VALUES (${gb}, ${ga}), (${gc}, ${ga}), (${gc}, ${gb})`);
  await page.goto(`${BASE}/jobs/${ga}`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#dependents", WAIT);
  is(await page.$$eval("#dependents li", (ls) => ls.map((l) => l.textContent).join(", ")), `#${gb} waiting, #${gc} waiting`,
    "a dead job's page lists the jobs that wait for it");
  is(await text("#retry-note"), `Retrying this job re-opens the 2 jobs its death cancelled (#${gb}, #${gc}) and theirs down the graph: they wait for it again.`,
    "beside Retry, the rule: a retry re-opens the jobs its death cancelled");
  ok(!!(await page.$("#act-retry")) && (await page.$$eval("#retry-note a", (as) => as.map((a) => a.getAttribute("href")).join(","))) ===
    `/jobs/${gb},/jobs/${gc}`, "each linked");
  await shot("job-dead-dependents");
  await page.goto(`${BASE}/failed`, { waitUntil: "networkidle0" });
  await page.waitForSelector(`#failed-table tr[data-id="${ga}"] a.waiters`, WAIT);
  is(await text(`#failed-table tr[data-id="${ga}"] a.waiters`), "a retry re-opens 2 jobs", "the dead letter says so on its row");
  sql(`INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status, error, enqueued_at)
         VALUES (${gc} + 1000000, 'default', 'echo', 0, 'host1:4242', UTC_TIMESTAMP(6), 0, 'cancelled', 'not started',
                 CONCAT('cancelled by dependency ${ga} (dead) at ', LEFT(UTC_TIMESTAMP(6), 19), ' UTC'), UTC_TIMESTAMP(6));
       INSERT INTO jobq_parked (id, parked_by, queue, type, payload, created_at)
         VALUES (${gc} + 1000000, ${ga}, 'default', 'echo', '{}', UTC_TIMESTAMP(6))`);
  await page.goto(`${BASE}/jobs/${Number(gc) + 1000000}`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#cancel-cause a", WAIT);
  is(await text("#cancel-cause"), `It waited for #${ga}, which ended dead: so it never ran. Retrying #${ga} from the dead letter re-opens it.`,
    "a job cancelled by its dependency's death links that job, whose retry re-opens it");
  sql(`DELETE FROM jobq_parked WHERE id = ${gc} + 1000000`);
  await page.goto(`${BASE}/failed`, { waitUntil: "networkidle0" });
  await page.waitForSelector(`#failed-table tr[data-id="${ga}"] button.retry-one`, WAIT);
  await press(page, `#failed-table tr[data-id="${ga}"] button.retry-one`);
  await page.waitForFunction(() => document.body.textContent.includes("wait for it again"), WAIT);
  is(sql(`SELECT CONCAT((SELECT COUNT(*) FROM failed_jobs WHERE id = ${ga}), '/', (SELECT COUNT(*) FROM jobq_parked), '/',
          (SELECT GROUP_CONCAT(CONCAT(id, ':', waiting_on) ORDER BY id) FROM jobs WHERE id IN (${ga}, ${gb}, ${gc})))`),
    `0/0/${ga}:0,${gb}:1,${gc}:2`, "its Retry moves it back and re-opens them: they wait for it again");
  await page.goto(`${BASE}/jobs/${Number(gc) + 1000000}`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#cancel-cause a", WAIT);
  ok((await text("#cancel-cause")).endsWith("so it never ran. It will not run again."), "a cancelled job nothing re-opens says so");
  sql(`UPDATE jobq_groups SET ended_at = UTC_TIMESTAMP(6), complete_job = 424242 WHERE id = ${gid}`);
  await page.goto(`${BASE}/groups`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#groups-table", WAIT);
  is(await page.$$eval("#groups-table tbody tr", (rs) => rs.map((r) => r.querySelector("a").textContent).join(",")), GROUP,
    "the list of groups");
  await press(page, "#groups-table a");
  await page.waitForSelector("#group-legend", WAIT);
  const ended = await page.$$eval("dl.kv dd .callback", (cs) => cs.map((c) => c.textContent).join(" | "));
  ok(/^echo enqueued as #424242 done at \S+ \S+ \+05:30 \| send_email not enqueued: not every job was done$/.test(ended) &&
    (await page.$eval("dl.kv dd .callback a", (a) => a.getAttribute("href"))) === "/jobs/424242",
    `an ended group: the callback's job, linked, its state and when it was enqueued (${ended})`);
  sql(`DELETE FROM jobs WHERE group_id = ${gid} OR id = ${ga}; DELETE FROM failed_jobs WHERE id = ${ga}; DELETE FROM jobq_deps;
       DELETE FROM jobq_parked; DELETE FROM jobq_parked_deps`);
  await collectCsp("groups");

  // ---- theme ----
  await page.goto(BASE + "/", { waitUntil: "networkidle0" });
  await page.waitForSelector("#totals", WAIT);
  const bgLight = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.click("#theme");
  is(await page.evaluate(() => document.documentElement.dataset.theme), "dark", "the toggle switches to dark");
  await page.reload({ waitUntil: "networkidle0" });
  await page.waitForSelector("#totals", WAIT);
  is(await page.evaluate(() => document.documentElement.dataset.theme), "dark", "the theme survives a reload");
  const bgDark = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  ok(bgDark !== bgLight, `and the page is drawn dark (${bgLight} -> ${bgDark})`);
  await shot("overview-dark");
  await page.goto(`${BASE}/jobs/${staleId}`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#payload", WAIT);
  await shot("job-dark");
  await collectCsp("dark");

  // ---- log out ----
  await page.click("#logout");
  await page.waitForSelector("#login-form", WAIT);
  ok(true, "logging out shows the login form");

  // ---- a viewer sees no admin controls ----
  await page.type("#login-user", "viewer");
  await page.type("#login-password", PASSWORD);
  await page.click("#login-submit");
  await page.waitForSelector("#totals", WAIT);
  ok(await page.$eval('#nav a[href="/enqueue"]', (a) => a.hidden), "a viewer's menu has no Enqueue");
  ok(await page.$eval('#nav a[href="/users"]', (a) => a.hidden), "nor Users");
  await page.goto(`${BASE}/failed`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#failed-table", WAIT);
  is(await page.$$eval("#failed-table button, #failed-table input, #retry-all, #forget-all, #clear-all", (es) => es.length), 0,
    "a viewer's dead letter has no retry, forget or clear controls");
  await page.goto(`${BASE}/jobs`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#jobs-table", WAIT);
  is(await page.$$eval("#jobs-bulk, #delete-all, #release-all", (es) => es.length), 0, "nor a jobs list bulk actions");
  await page.goto(`${BASE}/jobs/${staleId}`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#payload", WAIT);
  is(await page.$$eval("main button", (es) => es.length), 0, "a viewer's job detail has no action buttons");
  await page.click("#logout");
  await page.waitForSelector("#login-form", WAIT);
  // the login page, the one page not seen at 375 px above
  await page.setViewport({ width: 375, height: 800, isMobile: true, hasTouch: true });
  await page.goto(BASE + "/login", { waitUntil: "networkidle0" });
  await page.waitForSelector("#login-form", WAIT);
  is((await overflow375(page)).join(", "), "", "no element drawn past 375 px or wider than its box on /login");
  await page.setViewport({ width: 1280, height: 900 });

  is(cspViolations.join("\n"), "", "zero CSP violations on every page");
  ok(preview422 > 0, `the bad expression's 422 answers were the only ones set aside (${preview422})`);
  is(errors.join("\n"), "", "zero console errors on every page");
} catch (e) {
  ok(false, "the browser run finished", e.stack);
}
await finish(browser);
