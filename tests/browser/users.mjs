// users.mjs -- drives Chromium through the Users page and prints TAP: an
// admin adds a user kept in the database (the form survives the live
// refresh; a taken name is refused under it), that user logs in in a
// browser of its own, the admin makes it an admin (its next page shows
// the admin's pages), gives it a new password (its browser falls back to
// the login form) and removes it, after a confirmation; jobq.ini's users
// offer no change; the page fits 375 px.
// Environment: URL, USER_NAME (an admin of jobq.ini), PASSWORD, SQL_SH,
// SHOTS, CHROMIUM, PROFILE.
import { WAIT, collectErrors, cspSeen, finish, is, launch, like, ok, overflow375, press, recordCsp, shot as shotOf, sleep, sql, text, logIn } from "./lib.mjs";

const { URL: BASE, USER_NAME, PASSWORD } = process.env;
const NEW = "night-shift-operator";

const { browser, page } = await launch();
// The one refusal asked for on purpose: adding a name of jobq.ini (409).
let refused = 0;
const errors = collectErrors(page, { setAside: (m) => {
  const asked = / 409 /.test(m.text()) && (m.location()?.url || "").startsWith(`${BASE}/api/users/add`);
  if (asked) refused++;
  return asked;
} });
await recordCsp(page);
const shot = (name) => shotOf(page, name);
const fill = (p, sel, v) => p.$eval(sel, (e, v) => { e.value = v; e.dispatchEvent(new Event("input", { bubbles: true })); }, v);
const until = (p, fn, arg) => p.waitForFunction(fn, WAIT, arg).then(() => true, () => false);
const row = (u) => `#sessions-table tr[data-user="${u}"]`;

try {
  await page.setViewport({ width: 1280, height: 900 });
  await logIn(page, USER_NAME);
  await page.click('#nav a[href="/users"]').catch(() => page.goto(BASE + "/users"));
  await page.waitForSelector(row(USER_NAME), WAIT);
  is(await text(page, `${row(USER_NAME)} td:last-child`), "in jobq.ini", "a jobq.ini user offers no change, and says why");

  // ---- add ----
  await press(page, "#user-add-box summary");
  await page.waitForSelector("#user-name", { ...WAIT, visible: true });
  await fill(page, "#user-name", NEW);
  await fill(page, "#user-password", PASSWORD);
  await sleep(2500); /* a live refresh or two */
  is(await page.$eval("#user-name", (e) => e.value), NEW, "the live refresh leaves the form being filled in alone");
  await page.setViewport({ width: 375, height: 800 }); /* isMobile would reload the page */
  is((await overflow375(page)).join("\n"), "", "the page with its form open at 375 px: nothing scrolls sideways");
  await shot("users-add-375");
  await page.setViewport({ width: 1280, height: 900 });
  await press(page, "#user-add button[type=submit]");
  ok(await until(page, (s) => !!document.querySelector(s), row(NEW)), "the new user appears in the list");
  is(sql(`SELECT CONCAT_WS('|', role, created_by, password_hash LIKE '$argon2id$%') FROM jobq_users WHERE username = '${NEW}'`),
    `viewer|${USER_NAME}|1`, "kept in the database: a viewer, who added it, an argon2id hash");
  await press(page, "#user-add-box summary");
  await fill(page, "#user-name", USER_NAME);
  await fill(page, "#user-password", PASSWORD);
  await press(page, "#user-add button[type=submit]");
  ok(await until(page, () => /is in .*jobq\.ini/.test(document.querySelector("#user-add .field-error")?.textContent || "")),
    "a jobq.ini name: the server's refusal under the form");
  await press(page, "#user-add-box summary"); /* closed: the live refresh comes back */
  await shot("users");

  // ---- the new user, in a browser of its own ----
  const ctx = await browser.createBrowserContext();
  const other = await ctx.newPage();
  const otherErrors = collectErrors(other, { pageErrorsOnly: true });
  await other.setViewport({ width: 1280, height: 900 });
  await logIn(other, NEW);
  ok(await other.$eval('#nav a[href="/users"]', (a) => a.hidden), "it logs in, a viewer: no Users page");

  // ---- make admin ----
  await press(page, `${row(NEW)} .set-role`);
  ok(await until(page, (s) => /admin/.test(document.querySelector(s)?.cells[1].textContent || ""), row(NEW)), "Make admin: the list says admin");
  is(sql(`SELECT role FROM jobq_users WHERE username = '${NEW}'`), "admin", "and so does the database");
  await other.goto(BASE + "/", { waitUntil: "networkidle0" });
  await other.waitForSelector("#totals", WAIT);
  ok(!(await other.$eval('#nav a[href="/users"]', (a) => a.hidden)), "its next page shows the admin's pages");

  // ---- a new password ----
  await press(page, `${row(NEW)} .user-password summary`);
  await fill(page, `${row(NEW)} .user-password input`, "a-whole-new-password");
  await press(page, `${row(NEW)} .user-password button[type=submit]`);
  ok(await until(other, () => !!document.querySelector("#login-form") && !document.querySelector("#login-form").closest("[hidden]")),
    "a new password: its browser falls back to the login form");
  like(sql(`SELECT detail FROM jobq_audit WHERE action = 'session-end' AND username = '${NEW}'`), /the password changed/,
    "its session ended, audited with why");

  // ---- remove ----
  let asked = "";
  page.once("dialog", (d) => { asked = d.message(); d.accept(); });
  await press(page, `${row(NEW)} .remove-user`);
  ok(await until(page, (s) => !document.querySelector(s), row(NEW)), "Remove: the user leaves the list");
  like(asked, new RegExp(`Remove user ${NEW}\\?`), "after a confirmation");
  is(sql(`SELECT COUNT(*) FROM jobq_users WHERE username = '${NEW}'`), "0", "and the database");
  is(sql(`SELECT GROUP_CONCAT(action ORDER BY id) FROM jobq_audit WHERE username = '${USER_NAME}' AND action LIKE 'user-%'`),
    "user-add,user-role,user-password,user-remove", "every change audited, by the admin");

  is((await cspSeen(page)).join("\n"), "", "zero CSP violations");
  ok(refused > 0, `only the refusal asked for was set aside (${refused})`);
  is([...errors, ...otherErrors].join("\n"), "", "zero console errors");
  await ctx.close();
} catch (e) {
  ok(false, "the browser run finished", e.stack);
}
await finish(browser);
