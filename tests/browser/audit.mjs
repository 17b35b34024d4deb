// audit.mjs -- drives Chromium through the Audit page (/audit) and prints TAP.
// Environment: URL, USER_NAME (an admin), VIEWER_NAME, PASSWORD, SQL_SH (runs one SQL statement on the
// test database), SHOTS (screenshot folder), CHROMIUM, PROFILE.
import { WAIT, collectErrors, cspSeen, finish, is, launch, ok, press, recordCsp, shot as shotOf, sql, logIn as logInAs } from "./lib.mjs";

const { URL: BASE, USER_NAME, VIEWER_NAME, PASSWORD } = process.env;

const { browser, page } = await launch();
// Every console error counts; a 403 from /api/audit is counted apart:
// the viewer's page at the end must ask for none.
let viewer403 = 0;
const errors = collectErrors(page, { setAside: (m) => {
  const asked = / 403 /.test(m.text()) && (m.location()?.url || "").startsWith(`${BASE}/api/audit`);
  if (asked) viewer403++;
  return asked;
} });
await recordCsp(page);
const shot = (name) => shotOf(page, name);
// The ids of the cards shown, in page order.
const cardIds = () => page.$$eval("#audit-list .audit-entry", (cs) => cs.map((c) => Number(c.dataset.id)));
const cardActions = () => page.$$eval("#audit-list .audit-action", (bs) => bs.map((b) => b.textContent));
// Waits until the list shows the rows whose ids are want (the live
// refresh redraws it every 2 s, so read it again rather than hold nodes).
async function waitIds(want, what) {
  try {
    await page.waitForFunction((w) => JSON.stringify([...document.querySelectorAll("#audit-list .audit-entry")]
      .map((c) => Number(c.dataset.id))) === w, WAIT, JSON.stringify(want));
  } catch (e) { /* reported by the is() below */ }
  is(JSON.stringify(await cardIds()), JSON.stringify(want), what);
}
const dbIds = (where, limit) => sql(`SELECT id FROM jobq_audit ${where ? "WHERE " + where : ""} ORDER BY id DESC LIMIT ${limit}`)
  .split("\n").filter(Boolean).map(Number);

const logIn = (user) => logInAs(page, user);

try {
  await page.setViewport({ width: 1280, height: 900 });
  await logIn(USER_NAME);

  // ---- the menu leads there; newest first ----
  ok(!(await page.$eval('#nav a[href="/audit"]', (a) => a.hidden)), "an admin's menu has Audit");
  await page.click('#nav a[href="/audit"]');
  await page.waitForSelector("#audit-list", WAIT);
  is(new URL(page.url()).pathname, "/audit", "the link opens /audit");
  await waitIds(dbIds("", 50), "every audit row, newest first (the browser's own login on top)");
  is((await cardActions())[0], "login", "the newest row is this login");
  await shot("audit");

  // ---- filter by action ----
  // (chosen and sent in one step: a redraw between the two would put
  // back the choice the address holds)
  await page.waitForSelector("form.filters", WAIT);
  await page.$eval("form.filters", (f) => {
    f.elements.action.value = "enqueue";
    f.querySelector('button[type="submit"]').click();
  });
  await page.waitForFunction(() => location.search === "?action=enqueue", WAIT);
  ok(true, "filtering by action puts it in the address");
  await waitIds(dbIds("action = 'enqueue'", 50), "only the enqueue rows");
  is((await cardActions()).join(","), "enqueue", "each card says enqueue");

  // ---- a job link ----
  const jobId = sql("SELECT job_id FROM jobq_audit WHERE action = 'enqueue' ORDER BY id DESC LIMIT 1");
  is(await page.$eval("#audit-list a.job-link", (a) => a.getAttribute("href")), `/jobs/${jobId}`, "the row links to its job");
  await press(page, "#audit-list a.job-link");
  await page.waitForFunction((id) => location.pathname === `/jobs/${id}` &&
    document.querySelector("main h1")?.textContent.startsWith(`Job #${id}`), WAIT, jobId);
  ok(true, "following the link shows the job's page");
  await page.goBack();
  await page.waitForFunction(() => location.pathname === "/audit", WAIT);
  await page.waitForSelector("#audit-list", WAIT);
  is(JSON.stringify(await cardActions()), JSON.stringify(["enqueue"]), "Back returns to the filtered list");

  // ---- paging by keyset, and data only as text ----
  // 60 more rows: a page holds 50.  One carries markup in its user and
  // detail, one a detail of 1,000 characters with no blank (to wrap).
  sql("INSERT INTO jobq_audit (username, address, action, detail) SELECT 'admin', '192.0.2.7', 'logout', CONCAT('row ', seq) " +
    "FROM (SELECT a.n * 10 + b.n AS seq FROM (SELECT 0 n UNION SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5) a, " +
    "(SELECT 0 n UNION SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5 UNION SELECT 6 UNION SELECT 7 UNION SELECT 8 UNION SELECT 9) b) s ORDER BY seq");
  sql("INSERT INTO jobq_audit (username, action, detail) VALUES ('<b>mallory</b>', 'login', '<img src=x id=xss>')," +
    " ('admin', 'schedule-edit', REPEAT('x', 1000))");
  await page.goto(BASE + "/audit", { waitUntil: "networkidle0" });
  const first = dbIds("", 50);
  await waitIds(first, "the first page: the newest 50 rows");
  const older = dbIds(`id < ${first[49]}`, 50);
  await press(page, "#audit-older");
  await page.waitForFunction((b) => new URLSearchParams(location.search).get("before") === b, WAIT, String(first[49]));
  ok(true, "Older puts the last row's id in the address (before=)");
  await waitIds(older, "the second page: the rows older than the first page's last, none repeated");
  ok(!(await page.$("#audit-older")), "no Older link on the last page");
  ok(await page.$("#audit-newest"), "a link back to the newest");
  await page.goto(BASE + "/audit?user=" + encodeURIComponent("<b>mallory</b>"), { waitUntil: "networkidle0" });
  await page.waitForSelector("#audit-list .audit-entry", WAIT);
  is(await page.$eval("#audit-list dd", (d) => d.textContent), "<b>mallory</b>", "a user name with markup shows as text");
  ok(!(await page.$("#xss")) && !(await page.$("main b b")), "no element made from data");
  ok((await page.$eval("#audit-list", (l) => l.textContent)).includes("<img src=x id=xss>"), "the detail shows as text");

  // ---- 375 px: no sideways scroll ----
  await page.setViewport({ width: 375, height: 800, isMobile: true, hasTouch: true });
  await page.goto(BASE + "/audit", { waitUntil: "networkidle0" });
  await page.waitForSelector("#audit-list .audit-entry", WAIT);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  ok(width <= 375, `no horizontal overflow at 375 px (scrollWidth ${width})`);
  const wide = await page.evaluate(() => [...document.querySelectorAll("main, main *")]
    .filter((e) => { const r = e.getBoundingClientRect(); return r.width > 0 && (r.right > 375.5 || r.left < -0.5); })
    .map((e) => e.tagName.toLowerCase() + (e.className ? "." + e.className : "")).slice(0, 5));
  is(wide.join(", "), "", "no element of the page drawn past 375 px (the 1,000-character detail wraps)");
  await shot("audit-375");
  await page.setViewport({ width: 1280, height: 900 });

  // ---- a viewer ----
  await page.click("#logout");
  await page.waitForSelector("#login-form", WAIT);
  await logIn(VIEWER_NAME);
  ok(await page.$eval('#nav a[href="/audit"]', (a) => a.hidden), "a viewer's menu has no Audit");
  await page.goto(BASE + "/audit", { waitUntil: "networkidle0" });
  await page.waitForFunction(() => /admin role/.test((document.getElementById("needs-admin") || {}).textContent), WAIT)
    .then(() => ok(true, "a viewer who types /audit is told on the page it needs the admin role"),
      () => ok(false, "a viewer who types /audit is told on the page it needs the admin role"));
  ok(!(await page.$("#audit-list")), "and sees no rows");

  is((await cspSeen(page)).join("\n"), "", "zero CSP violations");
  is(viewer403, 0, "the viewer's page asked the server for nothing it refuses (no 403, no toast that keeps coming back)");
  is(errors.join("\n"), "", "zero console errors");
} catch (e) {
  ok(false, "the browser run finished", e.stack);
}
await finish(browser);
