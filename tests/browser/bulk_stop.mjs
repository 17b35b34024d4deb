// bulk_stop.mjs -- drives Chromium through a bulk retry that another
// admin stops half-way, and prints TAP.  A lock held on one dead row
// stops the page's second chunk there; the admin's role is taken away
// (jobq user role), then, in a second run, its sessions are ended
// (jobq sessions end).  The page must say plainly how many of the jobs
// it confirmed it retried, why it stopped, and how many it left as they
// were; the second time the login form shows, with that message too.
// Environment: URL, USER_NAME (a database admin), PASSWORD, SQL_SH,
// SHOTS, CHROMIUM, PROFILE, JOBQ, CONF.
import { execFileSync } from "node:child_process";
import { WAIT, collectErrors, deadJobs, finish, is, launch, like, logIn, ok, pressStalled, shot as shotOf, sql } from "./lib.mjs";

const { URL: BASE, USER_NAME, JOBQ, CONF } = process.env;
const { browser, page } = await launch();
// The refusals this test brings about on purpose: a 403 or 401 from
// /api/bulk, and what the page then asks while logged out.
const errors = collectErrors(page, { setAside: (m) => / 40[13] /.test(m.text()) });
const shot = (name) => shotOf(page, name);
const jobq = (...args) => execFileSync(JOBQ, ["-c", CONF, ...args], { encoding: "utf8" });

// Starts a bulk retry of the 250 dead jobs of mail with job 1150 locked
// (the second chunk waits there), makes change once it waits, and
// resolves with the toast once the page has said the action stopped.
async function run(change, name) {
  deadJobs(250);
  await page.goto(`${BASE}/failed?queue=mail`, { waitUntil: "networkidle0" });
  await page.waitForSelector('#failed-table tr[data-id="1250"]', WAIT);
  return pressStalled(page, "#retry-all", "Retry 250 dead jobs in queue mail?", 1150, change, name);
}

try {
  await page.setViewport({ width: 1280, height: 900 });
  await logIn(page, USER_NAME);

  // ---- demoted half-way ----
  let t = await run(() => jobq("user", "role", USER_NAME, "viewer"), "demoted");
  is(sql("SELECT COUNT(*) FROM failed_jobs"), "100", "demoted: 150 retried (the job under way among them), 100 left");
  is(t, "Retried 150 of 250 dead jobs in queue mail, then stopped: this needs the admin role, which was taken from this user as the action ran. The other 100 were left as they were.",
    "demoted: the page says how many were retried, why it stopped, and how many were left");
  await shot("bulk-stopped-demoted");
  jobq("user", "role", USER_NAME, "admin");

  // ---- logged out half-way ----
  await page.goto(BASE + "/", { waitUntil: "networkidle0" });
  t = await run(() => jobq("sessions", "end", USER_NAME), "logged out");
  is(sql("SELECT COUNT(*) FROM failed_jobs"), "100", "logged out: 150 retried, 100 left");
  ok(await page.$("#login-form") !== null, "logged out: the login form shows");
  like(t, /^Retried 150 of 250 dead jobs in queue mail, then stopped: your session ended .*\. The other 100 were left as they were\.$/,
    "logged out: and the page still says how many were retried and how many were left");
  await shot("bulk-stopped-logged-out");
  is(errors.join("\n"), "", "no script error, no failed request");
} catch (e) {
  ok(false, "the test ran to its end", String(e && e.stack || e));
}
await finish(browser);
