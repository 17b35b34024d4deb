// failed_stop.mjs -- drives Chromium through the dead letter's own
// actions on many jobs (Retry selected, Clear all) that another admin
// stops part way, and prints TAP.  A lock held on one dead row stalls
// the request there; the admin's role is taken away (jobq user role)
// during a retry of the selected jobs, then her sessions are ended
// (jobq sessions end) during a clear.  The page must say plainly how
// many of the jobs it did, why it stopped, and how many it left as they
// were, as a bulk action does (bulk_stop.mjs); the second time the
// login form shows, with that message too.
// Environment: URL, USER_NAME (a database admin), PASSWORD, SQL_SH,
// SHOTS, CHROMIUM, PROFILE, JOBQ, CONF.
import { execFileSync } from "node:child_process";
import { WAIT, collectErrors, deadJobs, finish, is, launch, like, logIn, ok, pressStalled, shot as shotOf, sql } from "./lib.mjs";

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

  // ---- demoted during Retry selected: 20 jobs ticked, lowest id first ----
  deadJobs(20);
  await page.goto(`${BASE}/failed?queue=mail`, { waitUntil: "networkidle0" });
  await page.waitForSelector('#failed-table tr[data-id="1020"]', WAIT);
  // ticked in one go, inside the page: the list redraws itself every 2 s
  await page.evaluate(() => {
    for (let id = 1001; id <= 1020; id++) document.querySelector(`#failed-table tr[data-id="${id}"] input[type="checkbox"]`).click();
  });
  let t = await run("#retry-selected", null, 1010, () => jobq("user", "role", USER_NAME, "viewer"), "demoted");
  is(sql("SELECT CONCAT((SELECT COUNT(*) FROM failed_jobs WHERE id > 1010), '/', (SELECT COUNT(*) FROM jobs))"), "10/10",
    "demoted: 10 retried (the job under way among them), the 10 after it left");
  is(t, "Retried 10 of 20 dead jobs, then stopped: this needs the admin role, which was taken from this user as the action ran. The other 10 were left as they were.",
    "demoted: the page says how many were retried, why it stopped, and how many were left");
  await shot("failed-stopped-demoted");
  jobq("user", "role", USER_NAME, "admin");

  // ---- logged out during Clear all: the second chunk of 1000 waits ----
  deadJobs(2500);
  await page.goto(`${BASE}/failed`, { waitUntil: "networkidle0" });
  await page.waitForFunction(() => /2,500/.test(document.querySelector("#clear-all")?.textContent || ""), WAIT);
  t = await run("#clear-all", "Delete all 2500 dead jobs in every queue for good?", 2500, () => jobq("sessions", "end", USER_NAME), "logged out");
  is(sql("SELECT COUNT(*) FROM failed_jobs"), "500", "logged out: two chunks removed, 500 left");
  ok(await page.$("#login-form") !== null, "logged out: the login form shows");
  like(t, /^Removed 2,000 of 2,500 dead jobs, then stopped: your session ended .*\. The other 500 were left as they were\.$/,
    "logged out: and the page still says how many were removed and how many were left");
  await shot("failed-stopped-logged-out");
  is(errors.join("\n"), "", "no script error, no failed request");
} catch (e) {
  ok(false, "the test ran to its end", String(e && e.stack || e));
}
await finish(browser);
