// failed_stop.mjs -- drives Chromium through the dead letter's own
// actions on many jobs (Retry selected, Clear all) that another admin
// stops part way, and prints TAP.  A lock held on one dead row stalls
// the request there; the admin's role is taken away (jobq user role)
// during a retry of the selected jobs, then her sessions are ended
// (jobq sessions end) during a clear.  The page must say plainly how
// many of the jobs it did, why it stopped, and how many it left as they
// were, as a bulk action does (bulk_stop.mjs); the second time the
// login form shows, with that message too.  Before that, Forget
// selected on three ticked rows: asked once, those three gone from the
// table and the list, each audited.
// Environment: URL, USER_NAME (a database admin), PASSWORD, SQL_SH,
// SHOTS, CHROMIUM, PROFILE, JOBQ, CONF.
import { execFileSync } from "node:child_process";
import { WAIT, collectErrors, deadJobs, finish, is, launch, like, logIn, ok, press, pressStalled, shot as shotOf, sql } from "./lib.mjs";

const { URL: BASE, USER_NAME, JOBQ, CONF } = process.env;
const { browser, page } = await launch();
// The refusals this test brings about on purpose: a 403 or 401 from
// /api/failed/..., and what the page then asks while logged out.
const errors = collectErrors(page, { setAside: (m) => / 40[13] /.test(m.text()) });
const shot = (name) => shotOf(page, name);
const jobq = (...args) => execFileSync(JOBQ, ["-c", CONF, ...args], { encoding: "utf8" });
// run(sel, question, lock, change, name): see pressStalled in lib.mjs.
const run = (...args) => pressStalled(page, ...args);

try {
  await page.setViewport({ width: 1280, height: 900 });
  await logIn(page, USER_NAME);

  // ---- Forget selected: three rows ticked, asked once, gone for good ----
  deadJobs(6);
  await page.goto(`${BASE}/failed?queue=mail`, { waitUntil: "networkidle0" });
  await page.waitForSelector('#failed-table tr[data-id="1006"]', WAIT);
  ok(await page.$eval("#forget-selected", (b) => b.disabled), "forget selected: off while nothing is ticked");
  await page.evaluate(() => {
    for (const id of [1002, 1004, 1005]) document.querySelector(`#failed-table tr[data-id="${id}"] input[type="checkbox"]`).click();
  });
  let asked = null;
  page.once("dialog", (d) => { asked = d.message(); d.accept(); });
  await press(page, "#forget-selected");
  await page.waitForFunction(() => /Forgot/.test(document.querySelector("#toast")?.textContent || ""), WAIT);
  is(asked, "Forget 3 dead job(s) for good?", "forget selected: the page asks first, with the count");
  is(await page.$eval("#toast", (e) => e.textContent), "Forgot 3", "forget selected: the page says 3 were forgotten");
  is(sql("SELECT GROUP_CONCAT(id ORDER BY id) FROM failed_jobs"), "1001,1003,1006", "forget selected: those 3 left the dead letter, the others stay");
  is(sql(`SELECT GROUP_CONCAT(job_id ORDER BY job_id) FROM jobq_audit WHERE action = 'forget' AND username = '${USER_NAME}'`),
    "1002,1004,1005", "forget selected: one audit row each, in the admin's name");
  await page.waitForFunction(() => [...document.querySelectorAll("#failed-table tbody tr")].map((r) => r.dataset.id).join() === "1006,1003,1001", WAIT)
    .then(() => ok(true, "forget selected: the list drops them"),
      async () => ok(false, "forget selected: the list drops them",
        await page.evaluate(() => [...document.querySelectorAll("#failed-table tbody tr")].map((r) => r.dataset.id).join())));
  ok(await page.$eval("#forget-selected", (b) => b.disabled), "forget selected: off again, nothing ticked");
  is(await page.$eval("#failed-total", (e) => e.textContent), "3 of 3", "forget selected: the count says 3 (of 3 in every queue)");

  // ---- demoted during Retry selected: 20 jobs ticked, lowest id first ----
  deadJobs(20);
  await page.goto(`${BASE}/failed?queue=mail`, { waitUntil: "networkidle0" });
  await page.waitForSelector('#failed-table tr[data-id="1020"]', WAIT);
  // ticked in one go, inside the page: the list redraws itself every 2 s
  await page.evaluate(() => {
    for (let id = 1001; id <= 1020; id++) document.querySelector(`#failed-table tr[data-id="${id}"] input[type="checkbox"]`).click();
  });
  // meanwhile another admin forgets 3 of the ticked jobs after it: not "left as they were"
  let t = await run("#retry-selected", null, 1010, () => {
    sql("DELETE FROM failed_jobs WHERE id BETWEEN 1016 AND 1018");
    jobq("user", "role", USER_NAME, "viewer");
  }, "demoted");
  is(sql("SELECT CONCAT((SELECT COUNT(*) FROM failed_jobs WHERE id > 1010), '/', (SELECT COUNT(*) FROM jobs))"), "7/10",
    "demoted: 10 retried (the job under way among them), 7 of the 10 after it left (3 forgotten by another)");
  is(t, "Retried 10 of 20 dead jobs, then stopped: this needs the admin role, which was taken from this user as the action ran. The other 7 were left as they were (3 more had changed meanwhile).",
    "demoted: the page says how many were retried, why it stopped, how many were left, and how many others changed");
  await shot("failed-stopped-demoted");
  jobq("user", "role", USER_NAME, "admin");

  // ---- logged out during Clear all: the second chunk of 1000 waits ----
  deadJobs(2500);
  await page.goto(`${BASE}/failed`, { waitUntil: "networkidle0" });
  await page.waitForFunction(() => /2,500/.test(document.querySelector("#clear-all")?.textContent || ""), WAIT);
  // meanwhile another admin retries the last 100 of them: not "left as they were"
  t = await run("#clear-all", "Delete all 2500 dead jobs in every queue for good?", 2500, () => {
    sql("DELETE FROM failed_jobs WHERE id > 3400");
    jobq("sessions", "end", USER_NAME);
  }, "logged out");
  is(sql("SELECT COUNT(*) FROM failed_jobs"), "400", "logged out: two chunks removed, 400 left (100 gone by another's hand)");
  ok(await page.$("#login-form") !== null, "logged out: the login form shows");
  like(t, /^Removed 2,000 of 2,500 dead jobs, then stopped: your session ended .*\. The other 400 were left as they were \(100 more had changed meanwhile\)\.$/,
    "logged out: and the page still says how many were removed and how many were left");
  await shot("failed-stopped-logged-out");
  is(errors.join("\n"), "", "no script error, no failed request");
} catch (e) {
  ok(false, "the test ran to its end", String(e && e.stack || e));
}
await finish(browser);
