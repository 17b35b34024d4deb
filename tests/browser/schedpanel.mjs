// schedpanel.mjs -- drives Chromium through adding and removing a
// database schedule on the Schedules pages and prints TAP: the form's
// type list, live JSON check and live cron preview in the chosen zone,
// the server's refusal shown under the form, the form surviving the
// live refresh, the list's descriptions and a disabled schedule's empty
// next fire, Remove with its confirmation, the history's job links, and
// no form for a viewer; gone names (what a renamed INI section left)
// with Remove for an admin and the CLI command for a viewer, at 375 px.
// Environment: URL, USER_NAME (an admin), VIEWER_NAME, PASSWORD, GONE1
// and GONE2 (two gone names of 64 characters), SQL_SH, SHOTS, CHROMIUM,
// PROFILE.
import { WAIT, collectErrors, cspSeen, finish, is, launch, like, ok, overflow375, press, recordCsp, shot as shotOf, sleep, sql, text, logIn as logInAs } from "./lib.mjs";

const { URL: BASE, USER_NAME, VIEWER_NAME, PASSWORD, GONE1, GONE2 } = process.env;

const { browser, page } = await launch();
// Every console error counts but the answers asked for on purpose: the
// preview's 422 for a bad expression and the add's 409 for a taken name.
let refused = 0;
const errors = collectErrors(page, { setAside: (m) => {
  const url = m.location()?.url || "";
  const asked = (/ 422 /.test(m.text()) && url.startsWith(`${BASE}/api/cron`)) ||
    (/ 409 /.test(m.text()) && url.startsWith(`${BASE}/api/schedules/add`));
  if (asked) refused++;
  return asked;
} });
await recordCsp(page);
const shot = (name) => shotOf(page, name);
// Sets a field's value as typing would (an input event), in one step.
const fill = (sel, v) => page.$eval(sel, (e, v) => { e.value = v; e.dispatchEvent(new Event("input", { bubbles: true })); }, v);
const disabled = (sel) => page.$eval(sel, (b) => b.disabled);
const until = (fn, arg) => page.waitForFunction(fn, WAIT, arg).then(() => true, () => false);

const logIn = (user) => logInAs(page, user);

try {
  await page.setViewport({ width: 1280, height: 900 });
  await logIn(USER_NAME);
  await page.goto(BASE + "/schedules", { waitUntil: "networkidle0" });
  await page.waitForSelector("#schedules-table", WAIT);

  // ---- the list ----
  is(await text(page, 'tr[data-name="nightly"] .sched-desc'), "the nightly report", "the list shows a schedule's description");
  ok(!(await page.$('tr[data-name="sleepy"] time')) && /disabled/.test(await text(page, 'tr[data-name="sleepy"] .next-off')),
    "a disabled schedule shows no next fire");

  // ---- gone names: Remove for an admin ----
  const gone = (n) => `#schedules-table tr.gone[data-name="${n}"]`;
  ok(!!(await page.$(gone(GONE1))) && !!(await page.$(gone(GONE2))), "the gone names are in the list, marked gone");
  like(await text(page, `${gone(GONE1)} .next-off`), /gone/, "with no next fire");
  ok(!!(await page.$(`${gone(GONE1)} button.remove-gone`)) && !(await page.$(`${gone(GONE1)} button.run-now, ${gone(GONE1)} button.toggle`)),
    "an admin gets Remove for one, and neither Run now nor Enable");
  await page.setViewport({ width: 375, height: 800 });
  is((await overflow375(page)).join("\n"), "", "the list with 64-character gone names at 375 px: nothing scrolls sideways");
  await shot("schedules-gone-375");
  // a gone name's own page (an old link): no facts, what it is, no error
  await page.goto(BASE + "/schedules/" + GONE1, { waitUntil: "networkidle0" });
  is(await text(page, "main h1"), "No such schedule", "a gone name's page says it is no schedule");
  like(await text(page, "#gone-note"), /is gone from the INI file/, "and that it is gone from the INI file");
  is((await overflow375(page)).join("\n"), "", "that page at 375 px: nothing scrolls sideways");
  await page.setViewport({ width: 1280, height: 900 });
  await page.goto(BASE + "/schedules", { waitUntil: "networkidle0" });
  await page.waitForSelector("#schedules-table", WAIT);
  let goneAsked = "";
  page.once("dialog", (d) => { goneAsked = d.message(); d.accept(); });
  await press(page, `${gone(GONE1)} button.remove-gone`);
  ok(await until((n) => !document.querySelector(`#schedules-table tr[data-name="${n}"]`), GONE1), "Remove takes it off the list");
  like(goneAsked, /Remove what the gone schedule gone-a+ left\?/, "after a confirmation");
  is(sql(`SELECT COUNT(*) FROM jobq_schedule_state WHERE name = '${GONE1}'`) + ":" + sql(`SELECT COUNT(*) FROM jobq_schedule_runs WHERE name = '${GONE1}'`),
    "0:0", "its switch and fires are deleted");
  is(sql(`SELECT COUNT(*) FROM jobq_audit WHERE action = 'schedule-remove' AND detail = '${GONE1}'`), "1", "and audited");

  // ---- the form ----
  await press(page, "#schedule-add-box summary");
  await page.waitForSelector("#add-name", { ...WAIT, visible: true });
  is(JSON.stringify(await page.$$eval("#add-type option", (os) => os.map((o) => o.value).sort())), JSON.stringify(["boom", "echo"]),
    "the type is chosen from the handler whitelist");
  is(await page.$eval("#add-timezone", (e) => e.value), "Asia/Tokyo", "the zone starts as the [worker] one");
  await page.type("#add-name", "browser1");
  await page.select("#add-type", "echo");
  await fill("#add-payload", '{"a":');
  like(await text(page, "#add-payload-error"), /Not valid JSON/, "a bad payload is flagged as it is typed");
  ok(await disabled("#add-submit"), "and Add is disabled");
  await fill("#add-payload", '{"a": 1}');
  is(await text(page, "#add-payload-error"), "", "a JSON object clears it");
  await fill("#add-cron", "61 * * * *");
  ok(await until(() => /minute: 61 is out of range/.test(document.querySelector("#add-cron-preview")?.textContent || "")),
    "a bad expression: the preview names the field");
  ok(await disabled("#add-submit"), "and Add is disabled");
  await fill("#add-timezone", "Europe/Paris");
  await fill("#add-cron", "30 8 * * 1-5");
  ok(await until(() => document.querySelectorAll("#add-cron-preview li").length === 5 &&
    [...document.querySelectorAll("#add-cron-preview li")].every((li) => / 08:30:00 \+0[12]:00$/.test(li.textContent))),
    "a good one: its next five fires, in the chosen zone");
  like(await text(page, "#preview-desc"), /08:30/, "and what it means");
  await page.select("#add-overlap", "allow");
  await fill("#add-catch-up", "2h");
  await fill("#add-description", "from the browser");
  await sleep(2500); /* a live refresh or two */
  is(await page.$eval("#add-name", (e) => e.value), "browser1", "the live refresh leaves the form being filled in alone");
  ok(!(await disabled("#add-submit")), "Add is enabled");
  await shot("schedule-add");
  await page.setViewport({ width: 375, height: 800 });
  is((await overflow375(page)).join("\n"), "", "the form at 375 px: nothing scrolls sideways");
  await shot("schedule-add-375");
  await page.setViewport({ width: 1280, height: 900 });
  await press(page, "#add-submit");
  ok(await until(() => !!document.querySelector('#schedules-table tr[data-name="browser1"]')), "the new schedule appears in the list");
  is(sql("SELECT CONCAT_WS('|', cron, type, payload, queue, timezone, overlap, catch_up_ms, description) FROM jobq_schedules WHERE name = 'browser1'"),
    '30 8 * * 1-5|echo|{"a": 1}|default|Europe/Paris|allow|7200000|from the browser', "stored with every field of the form");
  is(sql("SELECT COUNT(*) FROM jobq_audit WHERE action = 'schedule-add' AND detail LIKE 'browser1:%'"), "1", "and audited");
  await fill("#add-name", "browser1");
  await press(page, "#add-submit");
  ok(await until(() => /already exists/.test(document.getElementById("add-error").textContent)), "a taken name: the server's refusal under the form");

  // ---- a schedule's page: Remove, the INI note, job links ----
  await page.goto(BASE + "/schedules/browser1", { waitUntil: "networkidle0" });
  await page.waitForSelector("#schedule-remove", WAIT);
  let asked = "";
  page.once("dialog", (d) => { asked = d.message(); d.accept(); });
  await press(page, "#schedule-remove");
  ok(await until(() => location.pathname === "/schedules" && !!document.getElementById("schedules-table")), "Remove goes back to the list");
  like(asked, /Remove schedule browser1\?/, "after a confirmation");
  ok(await until(() => !document.querySelector('#schedules-table tr[data-name="browser1"]')), "the schedule is gone from the list");
  is(sql("SELECT COUNT(*) FROM jobq_schedules WHERE name = 'browser1'"), "0", "and from the database");
  await page.goto(BASE + "/schedules/nightly", { waitUntil: "networkidle0" });
  await page.waitForSelector("#schedule-info", WAIT);
  ok(!(await page.$("#schedule-remove")) && /INI file/.test(await text(page, "#ini-note")), "an INI schedule has no Remove, and says why");
  const job = sql("SELECT job_id FROM jobq_schedule_runs WHERE name = 'nightly'");
  await page.waitForSelector(`#schedule-history a[href="/jobs/${job}"]`, WAIT);
  ok(true, "its history links to the job it enqueued");

  // ---- a viewer ----
  await page.click("#logout");
  await page.waitForSelector("#login-form", WAIT);
  await logIn(VIEWER_NAME);
  await page.goto(BASE + "/schedules", { waitUntil: "networkidle0" });
  await page.waitForSelector("#schedules-table", WAIT);
  ok(!(await page.$("#schedule-add-box")), "a viewer has no Add form");
  ok(!(await page.$(`${gone(GONE2)} button`)), "a viewer has no Remove for a gone name");
  is(await text(page, `${gone(GONE2)} .gone-cmd code`), `jobq schedule remove ${GONE2}`, "but the command that removes it");
  await page.setViewport({ width: 375, height: 800 });
  is((await overflow375(page)).join("\n"), "", "the viewer's list with the command at 375 px: nothing scrolls sideways");
  await shot("schedules-gone-viewer-375");
  await page.setViewport({ width: 1280, height: 900 });

  is((await cspSeen(page)).join("\n"), "", "zero CSP violations");
  ok(refused > 0, `only the refusals asked for were set aside (${refused})`);
  is(errors.join("\n"), "", "zero console errors");
} catch (e) {
  ok(false, "the browser run finished", e.stack);
}
await finish(browser);
