// form_audit.mjs -- the enqueue form at 375 px with long names (set up by
// tests/serve_form_audit_phone.sh); prints TAP.
// Environment: URL, USER_NAME (an admin), PASSWORD, TYPE and QUEUE (a
// type and its queue, as long as names may be), SQL_SH, SHOTS, CHROMIUM,
// PROFILE.
import { WAIT, collectErrors, finish, is, launch, like, logIn, noHScroll, ok, overflow375, press, shot, sql, text }
  from "./lib.mjs";

const { URL: BASE, USER_NAME, TYPE, QUEUE } = process.env;
const { browser, page } = await launch();
/* The refusals below are asked for: Chromium logs each 400 as a console error. */
let refused = 0;
const errors = collectErrors(page, { setAside: (m) => /status of 40[01]/.test(m.text()) && ++refused });

// Form fields narrower or lower than a thumb (40 px).
const small = () => page.$$eval("#enqueue-form input, #enqueue-form select, #enqueue-form textarea, #enqueue-form button",
  (es) => es.filter((e) => { const r = e.getBoundingClientRect(); return r.height < 39.5 || r.width < 39.5; })
    .map((e) => `${e.id} ${Math.round(e.getBoundingClientRect().width)}x${Math.round(e.getBoundingClientRect().height)}`));
const setValue = (sel, v) => page.$eval(sel, (e, v) => { e.value = v; e.dispatchEvent(new Event("input")); }, v);
const lastId = () => sql("SELECT COALESCE(MAX(id), 0) FROM jobs");

// Submits the form and waits for a new job (ok) or for the error line.
async function submit(wantJob) {
  const before = lastId();
  await press(page, "#enq-submit");
  if (wantJob) await page.waitForFunction((b) => document.querySelector("#enq-result a")?.textContent.replace(/\D/g, "") > b, WAIT, Number(before));
  else await page.waitForFunction(() => document.querySelector("#enq-error").textContent !== "", WAIT);
}

try {
  await page.setViewport({ width: 375, height: 800, isMobile: true, hasTouch: true });
  await logIn(page, USER_NAME);
  await page.goto(BASE + "/enqueue", { waitUntil: "networkidle0" });
  await page.waitForSelector("#enqueue-form", WAIT);
  is(await page.$eval("#enq-queue", (s) => s.value), QUEUE, "the long type picks its long queue");
  is((await overflow375(page)).join(", "), "", "the form fits 375 px with the long names");
  is((await small()).join(", "), "", "every field of the form is a touch target (40 px)");

  // A job with the options: the row jobq enqueue makes from them.
  await setValue("#enq-priority", "-7");
  await setValue("#enq-attempts", "2");
  await setValue("#enq-expires", "10m");
  await submit(true);
  const id = (await text(page, "#enq-result a")).replace(/\D/g, "");
  is(sql(`SELECT CONCAT_WS('|', type, queue, priority, max_attempts,
    ROUND(TIMESTAMPDIFF(SECOND, created_at, expires_at) / 10)) FROM jobs WHERE id = ${id}`),
    `${TYPE}|${QUEUE}|-7|2|60`, "the job has the type, queue, priority, max attempts and expiry given");

  // A refusal: under the form, naming the field, wrapped inside the screen.
  const junk = "x".repeat(180);
  await setValue("#enq-expires", junk);
  await submit(false);
  like(await text(page, "#enq-error"), /^"expires_in": bad duration 'x{20}/, "a bad expiry is refused, naming the field");
  is(lastId(), id, "and nothing is enqueued");
  ok(await noHScroll(page), "the page does not scroll sideways");
  is((await overflow375(page)).join(", "), "", "the refusal, quoting 180 unbroken characters, wraps inside 375 px");
  await shot(page, "phone-enqueue-refused");
  await setValue("#enq-expires", "");
  await submit(true);
  is(await text(page, "#enq-error"), "", "the next submit that is taken clears the refusal");

  // A unique key as long as keys may be, unbroken: the job holds it; the
  // same key again enqueues nothing and names the holder; the page still
  // fits.  Then a job after the delayed job 9100: it waits.
  const key = "k".repeat(255);
  await setValue("#enq-unique", key);
  await setValue("#enq-unique-for", "1h");
  await submit(true);
  const holder = (await text(page, "#enq-result a")).replace(/\D/g, "");
  is(sql(`SELECT CONCAT_WS('|', id, LENGTH(unique_key)) FROM jobs WHERE unique_key = '${key}'`), `${holder}|255`,
    "a 255-byte unique key: the job holds it");
  const held = lastId();
  await press(page, "#enq-submit");
  await page.waitForFunction(() => /^Not enqueued/.test(document.querySelector("#enq-result").textContent), WAIT);
  is(await text(page, "#enq-result"), `Not enqueued: the key is held by job #${holder}`, "the same key again: not enqueued, naming the holder");
  is(lastId(), held, "and nothing is enqueued");
  is((await overflow375(page)).join(", "), "", "the form with the long key fits 375 px");
  await setValue("#enq-unique", "");
  await setValue("#enq-unique-for", "");
  await setValue("#enq-after", "9100, x");
  await press(page, "#enq-submit");
  await page.waitForFunction(() => document.querySelector("#enq-error").textContent !== "", WAIT);
  is(await text(page, "#enq-error"), '"after": job ids separated by commas', "after with a word: refused in the form, naming it");
  await setValue("#enq-after", "9100");
  await submit(true);
  const waits = (await text(page, "#enq-result a")).replace(/\D/g, "");
  like(await text(page, "#enq-result"), /\(waiting for 1 job\)$/, "after the delayed job 9100: the answer says it waits");
  is(sql(`SELECT after_id FROM jobq_deps WHERE job_id = ${waits}`), "9100", "and it waits for job 9100");
  is((await small()).join(", "), "", "the new fields are touch targets too");
  await setValue("#enq-after", "");

  // Two jobs into a group as long as names may be, unbroken, with a
  // callback of the long type: the group holds both and names it; the
  // answer links the group; the page still fits.
  const gname = "g".repeat(128);
  await setValue("#enq-group", gname);
  await page.select("#enq-on-complete", TYPE);
  await setValue("#enq-count", "2");
  await submit(true);
  is(sql(`SELECT CONCAT_WS('|', g.total, g.on_complete, COUNT(j.id)) FROM jobq_groups g JOIN jobs j ON j.group_id = g.id
    WHERE g.name = '${gname}' GROUP BY g.id`), `2|${TYPE}|2`, "a group of two with its callback, from the form");
  is(await page.$eval("#enq-result a.group-name", (a) => a.getAttribute("href")), "/groups/" + gname,
    "the answer links the group's page");
  is((await overflow375(page)).join(", "), "", "the answer with the long group name fits 375 px");
  await setValue("#enq-group", "");
  await page.select("#enq-on-complete", "");
  await setValue("#enq-count", "1");

  // The session ends while the form is filled in: the submit meets the
  // login form; logging in again brings the form back as it was typed,
  // and the submit then makes the job once.
  await setValue("#enq-payload", '{"typed": "before the session ended"}');
  await setValue("#enq-priority", "3");
  await setValue("#enq-expires", "2h");
  sql(`DELETE FROM jobq_sessions`);
  const before = lastId();
  await press(page, "#enq-submit");
  await page.waitForSelector("#login-form", WAIT);
  await page.type("#login-user", USER_NAME);
  await page.type("#login-password", process.env.PASSWORD);
  await page.click("#login-submit");
  await page.waitForSelector("#enqueue-form", WAIT);
  is(await page.$eval("#enqueue-form", (f) => [f.querySelector("#enq-payload").value, f.querySelector("#enq-priority").value,
    f.querySelector("#enq-expires").value, f.querySelector("#enq-type").value].join("|")),
    `{"typed": "before the session ended"}|3|2h|${TYPE}`, "after logging in again the form holds what was typed");
  is(lastId(), before, "the submit that met the lost session enqueued nothing");
  await submit(true);
  is(sql(`SELECT CONCAT_WS('|', COUNT(*), MIN(priority), MIN(payload)) FROM jobs WHERE id > ${before}`),
    `1|3|{"typed": "before the session ended"}`, "submitted again, it makes the job once");

  // The same for a dead job's Edit and retry.
  await page.goto(BASE + "/jobs/9001", { waitUntil: "networkidle0" });
  await page.waitForSelector("#edit-retry", WAIT);
  await page.$eval("#edit-retry", (d) => { d.open = true; });
  await setValue("#edit-payload", '{"v": "fixed while the session ended"}');
  sql(`DELETE FROM jobq_sessions`);
  await press(page, "#edit-submit");
  await page.waitForSelector("#login-form", WAIT);
  await page.type("#login-user", USER_NAME);
  await page.type("#login-password", process.env.PASSWORD);
  await page.click("#login-submit");
  await page.waitForSelector("#edit-retry", WAIT);
  is(await page.$eval("#edit-retry", (d) => d.open + "|" + d.querySelector("#edit-payload").value),
    'true|{"v": "fixed while the session ended"}', "Edit and retry comes back open, holding the edited payload");
  is(sql("SELECT COUNT(*) FROM failed_jobs WHERE id = 9001"), "1", "the job is still dead");
  await press(page, "#edit-submit");
  await page.waitForFunction(() => document.querySelector("h1 .badge")?.textContent === "ready", WAIT);
  is(sql("SELECT payload FROM jobs WHERE id = 9001"), '{"v": "fixed while the session ended"}',
    "submitted again, the job is back in the queue with the edited payload");

  // Retry on the page of a dead job whose unique key job 9100 holds.
  await page.goto(BASE + "/jobs/9002", { waitUntil: "networkidle0" });
  await press(page, "#act-retry");
  await page.waitForFunction(() => document.querySelector("#toast").textContent !== "", WAIT);
  like(await text(page, "#toast"), /^Job 9002 stays dead-lettered: .*9100/, "Retry of a job whose key is held says it stays dead, naming the holder");
  is(sql("SELECT COUNT(*) FROM failed_jobs WHERE id = 9002"), "1", "and it does stay dead");
  is(refused, 3, "one 400 and two 401s, the refusals asked for");
  is(errors.join("\n"), "", "no page errors or failed requests");
} catch (e) {
  ok(false, "the script ran through", e.stack);
}
await finish(browser);
