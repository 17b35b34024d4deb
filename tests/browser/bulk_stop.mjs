// bulk_stop.mjs -- drives Chromium through a bulk retry that another
// admin stops half-way, and prints TAP.  A lock held on one dead row
// stops the page's second chunk there; the admin's role is taken away
// (jobq user role), then, in a second run, its sessions are ended
// (jobq sessions end).  The page must say plainly how many of the jobs
// it confirmed it retried, why it stopped, and how many it left as they
// were; the second time the login form shows, with that message too.
// Environment: URL, USER_NAME (a database admin), PASSWORD, SQL_SH,
// SHOTS, CHROMIUM, PROFILE, JOBQ, CONF.
import { spawn, execFileSync } from "node:child_process";
import { WAIT, collectErrors, finish, is, launch, like, ok, press, shot as shotOf, sleep, sql, logIn } from "./lib.mjs";

const { URL: BASE, USER_NAME, JOBQ, CONF, SQL_SH } = process.env;
const { browser, page } = await launch();
// The refusals this test brings about on purpose: a 403 or 401 from
// /api/bulk, and what the page then asks while logged out.
const errors = collectErrors(page, { setAside: (m) => / 40[13] /.test(m.text()) });
const shot = (name) => shotOf(page, name);
const jobq = (...args) => execFileSync(JOBQ, ["-c", CONF, ...args], { encoding: "utf8" });
const toastText = () => page.$eval("#toast", (e) => e.textContent);

// Holds dead row id locked for secs seconds, from a session of its own;
// resolves once the lock is taken.
async function hold(id, secs) {
  spawn(SQL_SH, [`START TRANSACTION; SELECT id FROM failed_jobs WHERE id = ${id} FOR UPDATE; DO SLEEP(${secs}); COMMIT`],
    { stdio: "ignore" });
  for (let i = 0; i < 100 && sql("SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_query LIKE 'DO SLEEP%'") !== "1"; i++)
    await sleep(100);
}
async function blocked() {
  for (let i = 0; i < 200; i++) {
    if (sql("SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT'") === "1") return true;
    await sleep(50);
  }
  return false;
}
const dead = () => sql(`DELETE FROM jobs; DELETE FROM failed_jobs; INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception)
  SELECT 1000 + seq, 'mail', 'send_email', '{}', 3, 'smtp 550' FROM seq_1_to_250`);

// Starts a bulk retry of the 250 dead jobs of mail with job 1150 locked
// (the second chunk waits there), makes change once it waits, and
// resolves with the toast once the page has said the action stopped.
async function run(change, name) {
  dead();
  await page.goto(`${BASE}/failed?queue=mail`, { waitUntil: "networkidle0" });
  await page.waitForSelector('#failed-table tr[data-id="1250"]', WAIT);
  await hold(1150, 4);
  let asked = "";
  page.once("dialog", (d) => { asked = d.message(); d.accept(); });
  await press(page, "#retry-all");
  ok(await blocked(), `${name}: the second chunk waits at job 1150`);
  is(asked, "Retry 250 dead jobs in queue mail?", `${name}: the page asked with the count`);
  change();
  const said = await page.waitForFunction(() => /then stopped/.test(document.querySelector("#toast").textContent), { timeout: 20000 })
    .then(() => true, () => false);
  ok(said, `${name}: the page says the action stopped`, `toast: ${await toastText()}`);
  return toastText();
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
