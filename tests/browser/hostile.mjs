// hostile.mjs -- every page that shows the hostile names and text that
// tests/serve_browser_hostile.sh puts in (markup, javascript: links, a
// right-to-left override): none of it runs, none becomes an element, no
// link leaves the dashboard, and the override reverses nothing outside
// the name that holds it.  Prints TAP.
// Environment: URL, USER_NAME (an admin), PASSWORD, GROUP_ID, GJOB (its
// job), UJOB (the job with a unique key), DEAD (the dead job), SQL_SH,
// SHOTS, CHROMIUM, PROFILE.
import { WAIT, collectErrors, cspSeen, finish, is, launch, logIn, ok, recordCsp, shot, sleep } from "./lib.mjs";

const { URL: BASE, USER_NAME, GROUP_ID, GJOB, UJOB, DEAD } = process.env;
const { browser, page } = await launch();
const errors = collectErrors(page);
const dialogs = [];
page.on("dialog", async (d) => { dialogs.push(d.message()); await d.dismiss(); });
await recordCsp(page);

const pages = [["/", "#totals"], ["/jobs", "#jobs-table"], [`/jobs/${GJOB}`, "#payload"], [`/jobs/${UJOB}`, "#payload"],
  [`/jobs/${DEAD}`, "#payload"], ["/failed", "#failed-table"], ["/history", "#history-table"],
  ["/history?q=" + encodeURIComponent("<img"), "#groups-found a"], ["/groups", "#groups-table"],
  [`/groups/${GROUP_ID}`, "#group-name"], ["/schedules", "#schedules-table"], ["/schedules/nightly", "#schedule-info"],
  ["/workers", "main h1"], ["/audit", "main h1"]];

// What data could have become on the page: an element, a script, a
// link out of the dashboard.
const planted = () => page.evaluate(() => [...document.querySelectorAll(
  "img[src='x'], main script, [onerror], a[href]:not([href^='/']):not([href^='#']), a[href^='//']")]
  .map((e) => e.outerHTML.slice(0, 80)));

// Whether the text of each element sel names reads left to right: its
// first character drawn left of its last.
const leftToRight = (sel) => page.$$eval(sel, (es) => es.map((e) => {
  const t = e.firstChild, r = document.createRange(), at = (i) => {
    r.setStart(t, i);
    r.setEnd(t, i + 1);
    return r.getBoundingClientRect().left;
  };
  return at(0) < at(t.length - 1);
}));

try {
  await page.setViewport({ width: 1280, height: 900 });
  await logIn(page, USER_NAME);
  for (const [path, sel] of pages) {
    await page.goto(BASE + path, { waitUntil: "networkidle0" });
    await page.waitForSelector(sel, WAIT);
    await sleep(200);
    is(await page.evaluate(() => window.__xss), undefined, `no script of the data ran on ${path}`);
    is((await planted()).join(", "), "", `no element or outside link made of the data on ${path}`);
    is((await cspSeen(page)).join(", "), "", `no CSP violation on ${path}`);
  }
  await page.goto(BASE + `/groups/${GROUP_ID}`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#group-name", WAIT);
  ok((await page.$eval("#group-name", (e) => e.textContent)).startsWith('<img src=x onerror="window.__xss=6">'),
    "the group's name is shown as the text it is");
  const t = await page.title();
  ok(t.startsWith("\u2068Group ") && t.endsWith("\u2069 · jobq"),
    "the page's title holds the name in a bidi isolate, ahead of ' · jobq'", JSON.stringify(t));
  await page.goto(BASE + "/history?q=" + encodeURIComponent("<img"), { waitUntil: "networkidle0" });
  await page.waitForSelector("#groups-found li .muted", WAIT);
  is((await leftToRight("#groups-found li .muted")).join(), "true",
    "the override in a group's name does not reverse the words beside it");
  await shot(page, "hostile-history-groups");
  is(dialogs.join(", "), "", "no dialog opened");
  is(errors.join("\n"), "", "no script error, failed request or console error");
} catch (e) {
  ok(false, "the browser run finished", e.stack);
}
await finish(browser);
