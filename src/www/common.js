/* common.js -- what every page of the dashboard shares, below all of
 * them: the session state, building elements, formatting (numbers,
 * durations, times, state colours), toasts, the JSON API with its CSRF
 * token and the banner that says the database cannot be reached.  It
 * imports nothing; the shell (app.js) hands it its refresh and login
 * through `shell`, so no page and no shell function is imported
 * back into here.  Every value goes into the page as text (textContent,
 * attributes), never as markup. */

export const STATES = ["ready", "delayed", "reserved", "stale", "failed"];
const SVG = "http://www.w3.org/2000/svg";
export const app = { me: null, live: true, timer: null, page: null };

/* What the shell (app.js) does for the pages: redraw the current page
 * and show the login form.  Set by app.js when it loads. */
export const shell = { refresh: null, showLogin: null };

/* el("td", {class: "num"}, "text", child...): an element; strings become
 * text nodes. */
export function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "on") for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn);
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return e;
}

export function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
}

export function badge(state) {
  return el("span", { class: "badge s-" + state }, state);
}

export function fmtNum(n) {
  return Number(n).toLocaleString("en-US");
}

/* 90061000 -> "1d 1h"; keeps the two largest units. */
export function fmtDur(ms) {
  let s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return s + "s";
  const parts = [];
  for (const [u, n] of [["d", 86400], ["h", 3600], ["m", 60], ["s", 1]]) {
    if (s >= n) { parts.push(Math.floor(s / n) + u); s %= n; }
    if (parts.length === 2) break;
  }
  return parts.join(" ");
}

export function dueIn(ms) {
  return ms > 0 ? "in " + fmtDur(ms) : fmtDur(ms) + " ago";
}

/* Formats times in the configured zone ([worker] timezone) as
 * "2026-11-30 21:26:01"; UTC when the browser does not know the zone. */
let zoneFmt = null;
function zoneFormat() {
  if (zoneFmt) return zoneFmt;
  const opts = { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
    second: "2-digit", hourCycle: "h23" };
  let tz = app.me && app.me.timezone ? app.me.timezone : "UTC";
  try { new Intl.DateTimeFormat("sv-SE", { ...opts, timeZone: tz }); } catch (e) { tz = "UTC"; }
  zoneFmt = { tz: tz, fmt: new Intl.DateTimeFormat("sv-SE", { ...opts, timeZone: tz }),
    off: new Intl.DateTimeFormat("en-US", { timeZone: tz, timeZoneName: "longOffset" }) };
  return zoneFmt;
}

/* A time (ms since 1970) in the configured zone for a chart's axis:
 * "14:05", or "Wed 14:00" when the axis spans days. */
export function zoneTime(ms, withDay) {
  const z = zoneFormat();
  const key = withDay ? "day" : "time";
  if (!z[key]) z[key] = new Intl.DateTimeFormat("en-GB", withDay
    ? { weekday: "short", hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: z.tz }
    : { hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: z.tz });
  return z[key].format(new Date(ms)).replace(",", "");
}

/* The zone's offset from UTC at d, as "+05:30" ("GMT" alone is UTC). */
function offsetAt(z, d) {
  const p = z.off.formatToParts(d).find((x) => x.type === "timeZoneName");
  const m = p ? p.value.match(/^GMT([+-]\d\d:\d\d)$/) : null;
  return m ? m[1] : "+00:00";
}

/* A time from the API (UTC, "2026-11-30 20:26:01.123456") in the
 * configured zone with its offset, as the CLI prints times for people
 * ("2026-11-30 21:26:01 +01:00", src/timefmt.c); UTC on hover. */
export function when(t) {
  if (!t) return el("span", { class: "muted" }, "—");
  /* also "2026-11-30T20:26:01+00:00", as `jobq ... --json` gives times */
  const utc = t.replace(/^(\d{4}-\d\d-\d\d)T(.*)\+00:00$/, "$1 $2").replace(/\.\d+$/, "");
  const d = new Date(utc.replace(" ", "T") + "Z");
  if (isNaN(d)) return el("span", {}, t);
  const z = zoneFormat();
  return el("time", { datetime: utc.replace(" ", "T") + "Z", title: utc + " UTC" }, z.fmt.format(d) + " " + offsetAt(z, d));
}

/* Shows msg for ms (4 s unless said): what a person must not miss, such
 * as an action that stopped part way, is given longer. */
export function toast(msg, isError, ms) {
  const t = document.getElementById("toast");
  t.className = isError ? "error" : "";
  t.textContent = msg;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.textContent = ""; }, ms || 4000);
}

/* The database's state as the API last told it.  A 503 (the server
 * cannot reach the database) shows the banner with when the outage began
 * and turns the live dot red; the numbers on the page stay, marked as
 * old; the next answer that is not a 503 takes the banner away. */
export const db = { down: false };

function dbDown(since) {
  const b = document.getElementById("banner");
  db.down = true;
  document.body.classList.add("db-down");
  document.getElementById("live").hidden = false; /* red, even on a page reloaded in the outage */
  document.getElementById("live").title = "The database cannot be reached";
  const at = since ? new Date(since.replace(" ", "T") + "Z") : null;
  b.replaceChildren(el("strong", {}, "The database cannot be reached"),
    since ? el("span", {}, " since ", when(since), isNaN(at) ? "" : " (" + fmtDur(Date.now() - at) + ")") : null,
    el("span", {}, ". The numbers below are from before it went; the page tries again every 2 seconds."));
  b.hidden = false;
}

function dbUp() {
  if (!db.down) return;
  db.down = false;
  document.body.classList.remove("db-down");
  document.getElementById("live").title = "Refresh every 2 seconds";
  document.getElementById("banner").hidden = true;
  document.getElementById("banner").replaceChildren();
}

/* What a 504 says: the answer to a change was lost after the server
 * sent it to the database (jobq's own 504, whose JSON says "unsure"), or
 * a proxy in front gave up waiting for jobq.  Either way the change may
 * have been applied: never "not done", and never sent again blindly. */
export const UNSURE = "No answer came back: this change may have been applied. " +
  "Look at the page (it is reloaded) before trying again.";

class HttpError extends Error {
  constructor(status, msg, body) { super(msg); this.status = status; this.body = body; }
}

/* Calls the API; a POST carries the session's CSRF token.  A lost
 * session shows the login form. */
export async function api(path, body) {
  const opts = { headers: {}, credentials: "same-origin" };
  if (body !== undefined) {
    opts.method = "POST";
    opts.headers["Content-Type"] = "application/json";
    opts.headers["X-CSRF-Token"] = app.me ? app.me.csrf : "";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(path, opts);
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  /* A 503 without db_down_since is another kind of busy (too many
   * logins at once): it says nothing about the database. */
  if (res.status === 503 && data && "db_down_since" in data) dbDown(data.db_down_since);
  else if (res.status !== 503) dbUp();
  if (res.status === 401 && path !== "/api/login") {
    app.me = null;
    shell.showLogin();
    throw new HttpError(401, "not logged in", data);
  }
  if (res.status === 429 && path !== "/api/login") {
    /* the session's API rate ([serve] api_rate): said once, plainly,
     * whatever the page would have made of the error */
    const wait = res.headers.get("Retry-After");
    const msg = "Too many requests from this session; try again in " + (wait || "a few") + " seconds.";
    toast(msg, true);
    const err = new HttpError(429, msg, data);
    err.retryAfter = wait;
    throw err;
  }
  if (res.status === 504) {
    const err = new HttpError(504, UNSURE, data);
    err.unsure = true;
    throw err;
  }
  if (!res.ok) {
    const err = new HttpError(res.status, (data && data.error) || ("HTTP " + res.status), data);
    err.retryAfter = res.headers.get("Retry-After");
    throw err;
  }
  return data;
}

/* Runs an admin action and reports it; an action whose answer was lost
 * (e.unsure) reloads the page, which shows whether it took.  An action
 * on many jobs that the server stopped part way (the session ended, the
 * admin role was taken away as it ran) is told by stopped(e), which
 * returns what to say, or null when e is no such stop: shown for 20 s,
 * over the login form too, and the page reloads to show what it did. */
export async function act(path, body, done, stopped) {
  try {
    const r = await api(path, body);
    if (done) toast(done(r));
    await shell.refresh();
  } catch (e) {
    const said = stopped && e.body ? stopped(e) : null;
    if (said) toast(said, true, 20000);
    else if (e.status !== 401) toast(e.status === 503 ? "Not done: " + e.message : e.message, true);
    if (e.unsure || said) await shell.refresh();
  }
}

export function isAdmin() {
  return app.me && app.me.role === "admin";
}

export function main() {
  return document.getElementById("main");
}

export function setMain(title, ...kids) {
  const m = main();
  m.replaceChildren(...kids.flat(Infinity).filter((k) => k !== null && k !== undefined && k !== false));
  labelCells(m);
  // A name in the title (a group's may hold a right-to-left override)
  // is isolated, so that it cannot turn " · jobq" around in a tab.
  document.title = "\u2068" + title + "\u2069 · jobq";
}

/* Gives every cell of the tables in root its column's heading as
 * data-label: on a narrow screen each row is drawn as a card of
 * "label  value" lines (app.css), which a table's header row cannot
 * follow. */
export function labelCells(root) {
  for (const t of root.querySelectorAll("table")) {
    const heads = [...t.querySelectorAll("thead th")].map((th) => th.textContent.trim());
    if (heads.length === 0) continue;
    t.classList.add("cards");
    for (const tr of t.querySelectorAll("tbody tr"))
      [...tr.children].forEach((td, i) => { if (heads[i]) td.dataset.label = heads[i]; });
  }
}

/* ---- shared by the pages' filters and forms ---- */

export function filterForm(fields, onSubmit) {
  const f = el("form", { class: "filters", on: { submit: (ev) => { ev.preventDefault(); onSubmit(new FormData(f)); } } },
    fields, el("button", { type: "submit" }, "Filter"));
  return f;
}

export function select(name, label, options, value) {
  return el("label", {}, label,
    el("select", { name: name },
      el("option", { value: "" }, "any"),
      options.map((o) => el("option", { value: o, selected: o === value }, o))));
}

export function params() {
  return new URLSearchParams(location.search);
}

let enqueueCache = null;
export async function enqueueOptions() {
  if (!enqueueCache) enqueueCache = await api("/api/enqueue");
  return enqueueCache;
}

/* Forgets what belongs to the previous session: the enqueue choices and
 * the time zone. */
export function resetCaches() {
  enqueueCache = null;
  zoneFmt = null;
}

export function navigate(path) {
  history.pushState(null, "", path);
  shell.refresh();
  main().focus({ preventScroll: true });
}
