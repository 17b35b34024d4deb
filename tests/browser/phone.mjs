// phone.mjs -- every page of the dashboard at 375 px, in both themes,
// with long names (set up by tests/serve_browser_phone.sh); prints TAP.
// First it takes each page at 1280 px: these and the 375 px ones are the
// screenshots contrib/refresh-screenshots copies to contrib/screenshots/.
// Environment: URL, USER_NAME (an admin), PASSWORD, SCHEDULE and DBSCHEDULE
// (an INI schedule's and a database schedule's names), GROUP_ID (a group),
// DEAD_DEP (a dead job others wait for), WAITER (a job of the group that
// waits for two), SQL_SH, SHOTS, CHROMIUM, PROFILE.
import { WAIT, collectErrors, finish, is, launch, noHScroll, ok, overflow375, press, shot as shotOf, logIn as logInAs } from "./lib.mjs";

const { URL: BASE, USER_NAME, PASSWORD, SCHEDULE, DBSCHEDULE, GROUP_ID, DEAD_DEP, WAITER } = process.env;
const { browser, page } = await launch();
const errors = collectErrors(page);
const shot = (name) => shotOf(page, name);

// The controls a thumb must hit, shorter or narrower than 40 px:
// buttons, the menu's links, the shell's controls and form fields (a
// checkbox by the label around it, which takes its taps).  Links inside
// tables and text are part of their line, as on any page.
const smallTargets = () => page.evaluate(() => [...document.querySelectorAll(
  "button, nav a, header a, input:not([type=hidden]), select, textarea, summary")]
  .map((e) => (/^(checkbox|radio)$/.test(e.type) && e.closest("label")) || e)
  .filter((e) => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && (r.height < 39.5 || r.width < 39.5);
  })
  .map((e) => `${e.tagName.toLowerCase()}${e.id ? "#" + e.id : ""} "${(e.textContent || e.name || "").trim().slice(0, 20)}" ` +
    `${Math.round(e.getBoundingClientRect().width)}x${Math.round(e.getBoundingClientRect().height)}`)
  .slice(0, 8));
// The header's controls on one line, and the menu's links (visible
// ones) each on a line of its own.
const headerLines = () => page.$$eval("header.top > a, header.top > button, header.top .tools > button",
  (es) => new Set(es.filter((e) => e.getBoundingClientRect().width > 0)
    .map((e) => Math.round(e.getBoundingClientRect().top))).size);
const navShown = () => page.$$eval("#nav a", (as) => as.filter((a) => a.getBoundingClientRect().width > 0)
  .map((a) => [a.textContent, Math.round(a.getBoundingClientRect().top), Math.round(a.getBoundingClientRect().height)]));

// The actions in a job's audit trail split inside their one word (as
// "can cel" beside a long user name): one line box each when whole.
const splitActions = () => page.$$eval("#audit td.action", (tds) => tds.filter((td) => {
  const r = document.createRange();
  r.selectNodeContents(td);
  return !/\s/.test(td.textContent) && r.getClientRects().length > 1;
}).map((td) => td.textContent));

// The pages, and an element each shows once drawn.
const pages = () => [["/", "#totals"], ["/jobs", "#jobs-table"], ["/jobs/1", "#payload"],
  ["/jobs/3", "#payload"], ["/failed", "#failed-table"], ["/jobs/9001", "#payload"], ["/jobs/9100", "#gone-note"],
  ["/jobs/9200", "#gone-note"], ["/jobs/9201", "#gone-note"], ["/jobs/9300", "#cancel-requested"], ["/jobs/9301", "#expires"],
  ["/history", "#history-table"], ["/history?q=quarterly", "#groups-found a"], ["/groups", "#groups-table"], [`/groups/${GROUP_ID}`, "#group-legend"],
  [`/jobs/${WAITER}`, "#waits-for"], [`/jobs/${DEAD_DEP}`, "#retry-note"],
  ["/charts", "#chart-run svg"], ["/workers", "#workers-table"],
  ["/enqueue", "#enqueue-form"], ["/schedules", "#schedules-table"], [`/schedules/${SCHEDULE}`, "#schedule-info"],
  [`/schedules/${DBSCHEDULE}`, "#preview-next li"], ["/users", "#sessions-table"], ["/audit", "#audit-list"]];
const shotName = (path) => path === "/" ? "overview" :
  path.slice(1).replace(DBSCHEDULE, "db").replace(SCHEDULE, "ini").replace(/\//g, "-").replace(/[?=]/g, "-");

const logIn = () => logInAs(page, USER_NAME);

// Each page at 1280 px in the light theme, the overview and a job in the
// dark one: screenshots only (dashboard.mjs tests the desk).
async function desk() {
  await page.setViewport({ width: 1280, height: 900 });
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
  await page.goto(BASE + "/login", { waitUntil: "networkidle0" });
  await page.waitForSelector("#login-form", WAIT);
  await shot("desktop-login-light");
  await logIn();
  for (const [path, sel] of pages()) {
    await page.goto(BASE + path, { waitUntil: "networkidle0" });
    await page.waitForSelector(sel, WAIT);
    await shot(`desktop-${shotName(path)}-light`);
  }
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
  for (const [path, sel] of [["/", "#totals"], ["/jobs/1", "#payload"]]) {
    await page.goto(BASE + path, { waitUntil: "networkidle0" });
    await page.waitForSelector(sel, WAIT);
    await shot(`desktop-${shotName(path)}-dark`);
  }
  ok(true, "every page drawn at 1280 px");
}

async function sweep(path, sel, theme) {
  await page.goto(BASE + path, { waitUntil: "networkidle0" });
  await page.waitForSelector(sel, WAIT);
  const where = `${path} (${theme})`;
  ok(await noHScroll(page), `no sideways scroll at 375 px on ${where}`);
  is((await overflow375(page)).join(", "), "", `nothing drawn past the screen or wider than its box on ${where}`);
  is((await smallTargets()).join(", "), "", `every control is 40 px or more on ${where}`);
  if (await page.$("#audit"))
    is((await splitActions()).join(", "), "", `the audit trail's actions stay whole on ${where}`);
  if (path === "/jobs")
    is(await page.$$eval("#jobs-bulk button", (bs) => bs.map((b) => b.textContent).join(", ")),
      "Delete all waiting jobs, Release all stale, Cancel all", `the bulk actions, Cancel all among them, are there on ${where}`);
  if (path !== "/login") {
    is(await headerLines(), 1, `the header's controls fit on one line on ${where}`);
    is((await navShown()).length, 0, `the menu's links wait behind the Menu button on ${where}`);
  }
  await shot(`phone-${shotName(path)}-${theme}`);
}

// A toast that names the longest queue (Pause on the overview) wraps
// inside its box, whole; then Resume, and the queue is as it was.
async function toastFits() {
  const card = "div.card.queue:not([data-queue='default'])";
  await page.goto(BASE + "/", { waitUntil: "networkidle0" });
  ok(/^every mail, SMS and push .* runbook https:\/\/wiki\.example\.com\//.test(
    await page.$eval(`${card} .queue-description`, (e) => e.textContent)),
    "the overview shows the queue's description under its name");
  await press(page, `${card} button.pause`);
  await page.waitForFunction(() => /paused: workers/.test(document.querySelector("#toast").textContent), WAIT);
  is((await overflow375(page)).join(", "), "", "the toast naming the queue fits the screen, whole");
  await shot("phone-toast");
  await press(page, `${card} button.primary.pause`);
  await page.waitForFunction(() => / resumed$/.test(document.querySelector("#toast").textContent), WAIT);
}

// At 768 px (a tablet: the tables are still tables) a long error's
// first line must not take the dead letter's width from its queue and
// type, squeezed to a letter a line.
async function tablet() {
  await page.setViewport({ width: 768, height: 1024 });
  await page.goto(BASE + "/failed", { waitUntil: "networkidle0" });
  await page.waitForSelector("#failed-table", WAIT);
  const narrow = await page.$$eval("#failed-table tbody tr:first-child td", (tds) => tds.slice(2, 4)
    .map((td) => Math.round(td.getBoundingClientRect().width)).filter((w) => w < 80));
  is(narrow.join(", "), "", "the dead letter's queue and type columns keep 80 px or more at 768 px");
  await shot("tablet-failed");
}

try {
  await desk();
  await tablet();
  await page.setViewport({ width: 375, height: 800, isMobile: true, hasTouch: true });
  for (const theme of ["light", "dark"]) {
    await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: theme }]);
    /* Off the dashboard first: a live redraw of the page left open would
     * ask with the cookie gone and log a 401. */
    await page.goto("about:blank");
    await page.deleteCookie(...(await page.cookies(BASE)));
    await sweep("/login", "#login-form", theme);
    await page.type("#login-user", USER_NAME);
    await page.type("#login-password", PASSWORD);
    await page.click("#login-submit");
    await page.waitForSelector("#totals", WAIT);

    // The menu: a button opens the list, one page per line, every page
    // there; choosing one goes there and closes it.
    await page.click("#menu");
    const links = await navShown();
    is(links.map((l) => l[0]).join(","), "Overview,Jobs,History,Groups,Charts,Dead letter,Workers,Schedules,Enqueue,Users,Audit",
      `Menu opens the list of every page (${theme})`);
    is(new Set(links.map((l) => l[1])).size, links.length, `one page per line (${theme})`);
    ok(links.every((l) => l[2] >= 40), `each line is 40 px or more high (${theme})`, JSON.stringify(links));
    is((await overflow375(page)).join(", "), "", `the open menu fits the screen (${theme})`);
    await shot(`phone-menu-${theme}`);
    await page.click('#nav a[href="/workers"]');
    await page.waitForSelector("#workers-table", WAIT);
    is((await navShown()).length, 0, `choosing Workers opens it and closes the menu (${theme})`);

    for (const [path, sel] of pages())
      await sweep(path, sel, theme);
  }
  await toastFits();
  is(errors.join("\n"), "", "no script error, failed request or console error");
} catch (e) {
  ok(false, "the browser run finished", e.stack);
}
await finish(browser);
