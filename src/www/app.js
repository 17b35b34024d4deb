/* jobq dashboard.  Plain JavaScript, no framework, no build step.
 * The server sends JSON; every value goes into the page as text
 * (textContent, attributes), never as markup. */
"use strict";

/* The theme is set before the page is drawn: the remembered choice, or
 * the system's. */
(function () {
  try {
    const t = localStorage.getItem("jobq-theme");
    if (t === "light" || t === "dark") document.documentElement.dataset.theme = t;
  } catch (e) { /* storage may be disabled */ }
})();

const REFRESH_MS = 2000;
const STATES = ["ready", "delayed", "reserved", "stale", "failed"];
const SVG = "http://www.w3.org/2000/svg";
const app = { me: null, live: true, timer: null, page: null, busy: false };

/* el("td", {class: "num"}, "text", child...): an element; strings become
 * text nodes. */
function el(tag, attrs, ...kids) {
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

function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
}

function badge(state) {
  return el("span", { class: "badge s-" + state }, state);
}

function fmtNum(n) {
  return Number(n).toLocaleString("en-US");
}

/* 90061000 -> "1d 1h"; keeps the two largest units. */
function fmtDur(ms) {
  let s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return s + "s";
  const parts = [];
  for (const [u, n] of [["d", 86400], ["h", 3600], ["m", 60], ["s", 1]]) {
    if (s >= n) { parts.push(Math.floor(s / n) + u); s %= n; }
    if (parts.length === 2) break;
  }
  return parts.join(" ");
}

function dueIn(ms) {
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
  zoneFmt = { tz: tz, fmt: new Intl.DateTimeFormat("sv-SE", { ...opts, timeZone: tz }) };
  return zoneFmt;
}

/* A time from the API (UTC, "2026-11-30 20:26:01.123456") in the
 * configured zone, UTC on hover. */
function when(t) {
  if (!t) return el("span", { class: "muted" }, "—");
  const utc = t.replace(/\.\d+$/, "");
  const d = new Date(utc.replace(" ", "T") + "Z");
  if (isNaN(d)) return el("span", {}, t);
  const z = zoneFormat();
  return el("time", { datetime: utc.replace(" ", "T") + "Z", title: utc + " UTC" }, z.fmt.format(d));
}

function firstLine(s) {
  return (s || "").split("\n")[0];
}

function toast(msg, isError) {
  const t = document.getElementById("toast");
  t.className = isError ? "error" : "";
  t.textContent = msg;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.textContent = ""; }, 4000);
}

class HttpError extends Error {
  constructor(status, msg, body) { super(msg); this.status = status; this.body = body; }
}

/* Calls the API; a POST carries the session's CSRF token.  A lost
 * session shows the login form. */
async function api(path, body) {
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
  if (res.status === 401 && path !== "/api/login") {
    app.me = null;
    showLogin();
    throw new HttpError(401, "not logged in", data);
  }
  if (!res.ok) {
    const err = new HttpError(res.status, (data && data.error) || ("HTTP " + res.status), data);
    err.retryAfter = res.headers.get("Retry-After");
    throw err;
  }
  return data;
}

/* Runs an admin action and reports it. */
async function act(path, body, done) {
  try {
    const r = await api(path, body);
    if (done) toast(done(r));
    await refresh();
  } catch (e) {
    if (e.status !== 401) toast(e.message, true);
  }
}

function isAdmin() {
  return app.me && app.me.role === "admin";
}

function main() {
  return document.getElementById("main");
}

function setMain(title, ...kids) {
  const m = main();
  m.replaceChildren(...kids.flat(Infinity).filter((k) => k !== null && k !== undefined && k !== false));
  document.title = title + " · jobq";
}

/* ---- overview ---- */

function counter(state, n) {
  return el("div", { class: "counter s-" + state }, el("b", {}, fmtNum(n)), el("span", {}, state));
}

function chart(rpm) {
  const W = 600, H = 150, pad = 4, n = rpm.done.length;
  const total = (i) => rpm.done[i] + rpm.retry[i] + rpm.dead[i];
  let max = 1;
  for (let i = 0; i < n; i++) max = Math.max(max, total(i));
  const s = svg("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none", role: "img",
    "aria-label": "Runs per minute over the last hour by outcome" });
  const bw = (W - pad) / n;
  for (let i = 0; i < n; i++) {
    /* minute i ago is drawn at the right, i from the right edge */
    const x = W - (i + 1) * bw;
    let y = H - pad;
    for (const k of ["done", "retry", "dead"]) {
      const h = (rpm[k][i] / max) * (H - 2 * pad);
      if (h <= 0) continue;
      y -= h;
      const r = svg("rect", { class: "bar-" + k, x: x + 1, y: y, width: Math.max(bw - 2, 1), height: h });
      const t = svg("title", {});
      t.textContent = `${i === 0 ? "this minute" : i + " min ago"}: ${rpm[k][i]} ${k}`;
      r.append(t);
      s.append(r);
    }
  }
  s.append(svg("line", { class: "axis", x1: 0, x2: W, y1: H - pad, y2: H - pad }));
  return s;
}

async function pageOverview() {
  const d = await api("/api/overview");
  const tot = { ready: 0, delayed: 0, reserved: 0, stale: 0, failed: 0 };
  let done = 0;
  for (const q of d.queues) {
    for (const s of STATES) tot[s] += q[s];
    done += q.done_last_hour;
  }
  const sum = (k) => d.runs_per_minute[k].reduce((a, b) => a + b, 0);
  setMain("Overview",
    el("h1", {}, "Overview"),
    el("div", { class: "card totals", id: "totals" },
      el("div", { class: "strip" }, STATES.map((s) => counter(s, tot[s]))),
      el("div", { class: "facts" },
        el("span", {}, fmtNum(done) + " done in the last hour"),
        el("span", { id: "workers-alive" }, fmtNum(d.workers_alive) + " worker" + (d.workers_alive === 1 ? "" : "s") + " alive"))),
    el("h2", {}, "Runs per minute"),
    el("div", { class: "card" }, chart(d.runs_per_minute),
      el("div", { class: "axis-labels muted" }, el("span", {}, "60 min ago"), el("span", {}, "now")),
      el("div", { class: "legend" },
        el("span", { class: "s-done" }, "■ done " + sum("done")),
        el("span", { class: "s-retry" }, "■ retry " + sum("retry")),
        el("span", { class: "s-dead" }, "■ dead " + sum("dead")))),
    el("h2", {}, "Queues"),
    el("div", { class: "grid" }, d.queues.map((q) =>
      el("div", { class: "card queue", "data-queue": q.queue },
        el("div", { class: "row" },
          el("a", { class: "queue-name", href: "/jobs?queue=" + encodeURIComponent(q.queue) }, q.queue),
          q.paused ? el("span", { class: "badge s-stale paused" }, "paused") : null,
          isAdmin() ? el("button", { class: q.paused ? "primary pause" : "pause", on: { click: () =>
            act("/api/queues/" + (q.paused ? "resume" : "pause"), { queue: q.queue },
              (r) => "Queue " + r.queue + (r.paused ? " paused: workers take no new job from it" : " resumed")) } },
            q.paused ? "Resume" : "Pause") : null),
        el("div", { class: "strip" }, STATES.map((s) => counter(s, q[s]))),
        el("div", { class: "facts" },
          el("span", {}, fmtNum(q.done_last_hour) + " done last hour"),
          el("span", {}, q.oldest_ready_s === null ? "nothing waiting"
            : "oldest ready " + fmtDur(q.oldest_ready_s * 1000) + " ago"))))));
}

/* ---- jobs ---- */

function filterForm(fields, onSubmit) {
  const f = el("form", { class: "filters", on: { submit: (ev) => { ev.preventDefault(); onSubmit(new FormData(f)); } } },
    fields, el("button", { type: "submit" }, "Filter"));
  return f;
}

function select(name, label, options, value) {
  return el("label", {}, label,
    el("select", { name: name },
      el("option", { value: "" }, "any"),
      options.map((o) => el("option", { value: o, selected: o === value }, o))));
}

function params() {
  return new URLSearchParams(location.search);
}

async function pageJobs() {
  const p = params();
  const q = new URLSearchParams();
  for (const k of ["queue", "type", "state", "after"]) if (p.get(k)) q.set(k, p.get(k));
  const [d, form] = await Promise.all([api("/api/jobs?" + q), enqueueOptions()]);
  const go = (fd) => {
    const n = new URLSearchParams();
    for (const [k, v] of fd) if (v) n.set(k, v);
    navigate("/jobs" + (n.toString() ? "?" + n : ""));
  };
  const rows = d.jobs.map((j) => el("tr", { "data-id": j.id },
    el("td", { class: "num" }, el("a", { href: "/jobs/" + j.id }, "#" + j.id)),
    el("td", {}, badge(j.state)),
    el("td", { class: "wide" }, j.queue),
    el("td", {}, j.type),
    el("td", { class: "num" }, j.attempts + "/" + (j.max_attempts || "—"),
      j.last_failed ? el("span", { class: "mark", title: "the last attempt failed" }, " ✕") : null),
    el("td", { class: "num" }, j.state === "ready" || j.state === "delayed" ? dueIn(j.due_in_ms) : "—"),
    el("td", { class: "wide mono" }, j.reserved_by || "")));
  const next = new URLSearchParams(p);
  if (d.next_after !== null) next.set("after", d.next_after);
  const first = new URLSearchParams(p);
  first.delete("after");
  setMain("Jobs",
    el("h1", {}, "Jobs"),
    filterForm([
      select("queue", "Queue", form.queues, p.get("queue")),
      el("label", {}, "Type", el("input", { name: "type", value: p.get("type") || "", list: "types", size: 14 })),
      el("datalist", { id: "types" }, form.types.map((t) => el("option", { value: t.type }))),
      select("state", "State", STATES.slice(0, 4), p.get("state")),
    ], go),
    rows.length === 0 ? el("p", { class: "empty" }, "No jobs match.") :
      el("table", { id: "jobs-table" },
        el("thead", {}, el("tr", {},
          el("th", { class: "num" }, "ID"), el("th", {}, "State"), el("th", { class: "wide" }, "Queue"),
          el("th", {}, "Type"), el("th", { class: "num" }, "Attempts"), el("th", { class: "num" }, "Due"),
          el("th", { class: "wide" }, "Reserved by"))),
        el("tbody", {}, rows)),
    el("div", { class: "row" },
      p.get("after") ? el("a", { class: "button", href: "/jobs?" + first }, "First page") : null,
      d.next_after !== null ? el("a", { class: "button", href: "/jobs?" + next, id: "next-page" }, "Next page") : null));
}

let enqueueCache = null;
async function enqueueOptions() {
  if (!enqueueCache) enqueueCache = await api("/api/enqueue");
  return enqueueCache;
}

/* ---- one job ---- */

function pretty(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text; }
}

function jobActions(j) {
  if (!isAdmin()) return null;
  const id = j.id, b = [];
  if (j.state === "failed") {
    b.push(el("button", { class: "primary", id: "act-retry", on: { click: () =>
      act("/api/failed/retry", { ids: [id] }, () => "Job " + id + " is back in the queue") } }, "Retry"));
    b.push(el("button", { class: "danger", on: { click: () => {
      if (confirm("Forget dead job " + id + " for good?"))
        act("/api/failed/forget", { ids: [id] }, () => "Job " + id + " forgotten");
    } } }, "Forget"));
    return el("div", { class: "row" }, b);
  }
  if (j.state === "ready" || j.state === "delayed")
    b.push(el("button", { class: "primary", id: "act-run", on: { click: () =>
      act("/api/jobs/" + id + "/run-now", {}, () => "Job " + id + " is due now") } }, "Run now"));
  if (j.state === "stale")
    b.push(el("button", { on: { click: () =>
      act("/api/jobs/" + id + "/release", {}, () => "Job " + id + " released") } }, "Release"));
  if (j.state !== "reserved")
    b.push(el("button", { class: "danger", on: { click: () => {
      if (confirm("Delete job " + id + " (" + j.type + ")? It will not run."))
        api("/api/jobs/" + id + "/delete", {}).then(() => {
          toast("Job " + id + " deleted");
          navigate("/jobs"); /* its own page would only say it is gone */
        }, (e) => { if (e.status !== 401) toast(e.message, true); });
    } } }, "Delete"));
  return el("div", { class: "row" }, b);
}

function kv(pairs) {
  return el("dl", { class: "kv" }, pairs.filter((p) => p[1] !== null && p[1] !== undefined && p[1] !== "")
    .map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
}

async function pageJob(id) {
  let d;
  try {
    d = await api("/api/jobs/" + id);
  } catch (e) {
    if (e.status !== 404) throw e;
    setMain("Job " + id, el("h1", {}, "Job " + id),
      el("p", { class: "empty" }, "Job " + id + " is not in the queue or the dead letter: it finished, was deleted or forgotten."));
    return;
  }
  const j = d.job;
  setMain("Job " + id,
    el("h1", {}, "Job #" + j.id, badge(j.state), el("span", { class: "muted" }, j.type)),
    jobActions(j),
    el("h2", {}, "Details"),
    el("div", { class: "card" }, kv([
      ["Queue", j.queue], ["Type", j.type], ["Priority", String(j.priority)],
      ["Attempts", j.attempts + " of " + (j.max_attempts || "—")],
      ["Unique key", j.unique_key],
      ["Progress", j.progress !== undefined ? el("span", { id: "progress" },
        el("progress", { max: 100, value: j.progress }), " " + j.progress + "%" + (j.progress_note ? " " + j.progress_note : "")) : null],
      ["Created", when(j.created_at)],
      ["Available", j.available_at ? el("span", {}, when(j.available_at), " (" + dueIn(j.available_in_ms) + ")") : null],
      ["Reserved by", j.reserved_by], ["Reserved at", j.reserved_at ? when(j.reserved_at) : null],
      ["Lease expires", j.lease_expires_at ? when(j.lease_expires_at) : null],
      ["Next backoff", j.next_backoff_ms !== undefined ? fmtDur(j.next_backoff_ms) + " if this attempt fails" : null],
      ["Failed at", j.failed_at ? when(j.failed_at) : null], ["Exit status", j.exit_status], ["Reason", j.reason],
    ])),
    el("h2", {}, "Payload"), el("pre", { id: "payload" }, pretty(j.payload)),
    j.last_error ? [el("h2", {}, "Last error"), el("pre", {}, j.last_error)] : null,
    j.exception ? [el("h2", {}, "Exception"), el("pre", { id: "exception" }, j.exception)] : null,
    el("h2", {}, "Runs"),
    d.runs.length === 0 ? el("p", { class: "empty" }, "No runs yet.") :
      el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, "#"), el("th", {}, "Started"),
        el("th", { class: "num" }, "Took"), el("th", {}, "Outcome"), el("th", { class: "wide" }, "Exit"), el("th", {}, "Output"))),
      el("tbody", {}, d.runs.map((r) => el("tr", {},
        el("td", {}, String(r.attempt)), el("td", {}, when(r.started_at)),
        el("td", { class: "num" }, r.duration_ms < 1000 ? r.duration_ms + " ms" : fmtDur(r.duration_ms)), el("td", {}, badge(r.outcome)),
        el("td", { class: "wide" }, r.exit_status || ""),
        el("td", {}, r.error ? el("details", {}, el("summary", {}, "stderr: " + firstLine(r.error)), el("pre", {}, r.error)) : null,
          r.output ? el("details", {}, el("summary", {}, "stdout"), el("pre", {}, r.output)) : null,
          r.result ? el("details", {}, el("summary", {}, "result"), el("pre", { class: "result" }, pretty(r.result))) : null))))),
    el("h2", {}, "Audit"),
    d.audit.length === 0 ? el("p", { class: "empty" }, "No admin actions on this job.") :
      el("table", { id: "audit" }, el("tbody", {}, d.audit.map((a) => el("tr", {},
        el("td", {}, when(a.at)), el("td", {}, a.user), el("td", {}, a.action),
        el("td", { class: "wide" }, a.detail), el("td", { class: "wide mono" }, a.address))))));
}

/* ---- dead letter ---- */

const selected = new Set();

async function pageFailed() {
  const p = params();
  const q = new URLSearchParams();
  for (const k of ["queue", "type"]) if (p.get(k)) q.set(k, p.get(k));
  const [d, form] = await Promise.all([api("/api/failed?" + q), enqueueOptions()]);
  const ids = new Set(d.failed.map((f) => f.id));
  for (const id of [...selected]) if (!ids.has(id)) selected.delete(id);
  const admin = isAdmin();
  const filt = { queue: p.get("queue") || "", type: p.get("type") || "" };
  const retrySel = el("button", { id: "retry-selected", disabled: selected.size === 0, on: { click: () => {
    act("/api/failed/retry", { ids: [...selected] }, (r) => "Retried " + r.retried);
    selected.clear();
  } } }, "Retry selected");
  const forgetSel = el("button", { class: "danger", disabled: selected.size === 0, on: { click: () => {
    if (!confirm("Forget " + selected.size + " dead job(s) for good?")) return;
    act("/api/failed/forget", { ids: [...selected] }, (r) => "Forgot " + r.forgotten);
    selected.clear();
  } } }, "Forget selected");
  const sync = () => { retrySel.disabled = forgetSel.disabled = selected.size === 0; };
  const rows = d.failed.map((f) => el("tr", { "data-id": f.id },
    admin ? el("td", {}, el("input", { type: "checkbox", "aria-label": "select job " + f.id, checked: selected.has(f.id),
      on: { change: (ev) => { ev.target.checked ? selected.add(f.id) : selected.delete(f.id); sync(); } } })) : null,
    el("td", { class: "num" }, el("a", { href: "/jobs/" + f.id }, "#" + f.id)),
    el("td", { class: "wide" }, f.queue),
    el("td", {}, f.type),
    el("td", { class: "wide" }, when(f.failed_at)),
    el("td", {}, el("span", { class: "first-line", title: f.exception }, firstLine(f.exception)),
      el("span", { class: "muted" }, [f.reason, f.exit_status].filter(Boolean).join(" · "))),
    admin ? el("td", {}, el("button", { class: "retry-one", on: { click: () =>
      act("/api/failed/retry", { ids: [f.id] }, () => "Job " + f.id + " is back in the queue") } }, "Retry")) : null));
  setMain("Dead letter",
    el("h1", {}, "Dead letter", el("span", { class: "badge s-failed", id: "failed-total" }, fmtNum(d.total))),
    filterForm([
      select("queue", "Queue", form.queues, p.get("queue")),
      el("label", {}, "Type", el("input", { name: "type", value: filt.type, list: "types", size: 14 })),
      el("datalist", { id: "types" }, form.types.map((t) => el("option", { value: t.type }))),
    ], (fd) => {
      const n = new URLSearchParams();
      for (const [k, v] of fd) if (v) n.set(k, v);
      navigate("/failed" + (n.toString() ? "?" + n : ""));
    }),
    admin ? el("div", { class: "row" }, retrySel, forgetSel, el("span", { class: "spacer" }),
      el("button", { id: "retry-all", disabled: d.failed.length === 0, on: { click: () => {
        const what = (filt.queue || filt.type) ? "matching queue " + (filt.queue || "any") + ", type " + (filt.type || "any") : "in every queue";
        if (confirm("Retry all dead jobs " + what + "?"))
          act("/api/failed/retry", { all: true, queue: filt.queue, type: filt.type }, (r) => "Retried " + r.retried);
      } } }, "Retry all matching"),
      el("button", { class: "danger", id: "clear-all", disabled: d.total === 0, on: { click: () => {
        if (confirm("Delete all " + d.total + " dead jobs in every queue for good?"))
          act("/api/failed/clear", { count: d.total }, (r) => "Removed " + r.removed);
      } } }, "Clear all (" + fmtNum(d.total) + ")")) : null,
    el("p", {}),
    rows.length === 0 ? el("p", { class: "empty" }, "No dead jobs. ") :
      el("table", { id: "failed-table" },
        el("thead", {}, el("tr", {}, admin ? el("th", {}, "") : null, el("th", { class: "num" }, "ID"),
          el("th", { class: "wide" }, "Queue"), el("th", {}, "Type"), el("th", { class: "wide" }, "Failed"),
          el("th", {}, "Error"), admin ? el("th", {}, "") : null)),
        el("tbody", {}, rows)));
}

/* ---- workers ---- */

async function pageWorkers() {
  const d = await api("/api/workers");
  setMain("Workers",
    el("h1", {}, "Workers"),
    d.workers.length === 0 ? el("p", { class: "empty" }, "No worker has registered.") :
      el("table", { id: "workers-table" },
        el("thead", {}, el("tr", {}, el("th", {}, "Host / pid"), el("th", { class: "wide" }, "Queues"),
          el("th", { class: "num wide" }, "Conc."), el("th", { class: "wide" }, "Started"), el("th", {}, "Last seen"),
          el("th", { class: "num" }, "Done / retried / dead"), el("th", { class: "wide" }, "Running"))),
        el("tbody", {}, d.workers.map((w) => el("tr", { class: w.alive ? "" : "dead-worker" },
          el("td", {}, w.host + " / " + w.pid, w.alive ? null : [" ", el("span", { class: "badge s-dead" }, "dead")]),
          el("td", { class: "wide" }, w.queues),
          el("td", { class: "num wide" }, String(w.concurrency)),
          el("td", { class: "wide" }, when(w.started_at)),
          el("td", {}, fmtDur(w.seen_ago_ms) + " ago"),
          el("td", { class: "num" }, w.done + " / " + w.retried + " / " + w.dead),
          el("td", { class: "wide mono" }, w.current_jobs))))));
}

/* ---- enqueue ---- */

async function pageEnqueue() {
  if (main().querySelector("#enqueue-form")) return; /* never redraw a form being filled in */
  const form = await enqueueOptions();
  if (!isAdmin()) {
    setMain("Enqueue", el("h1", {}, "Enqueue"), el("p", { class: "empty" }, "Enqueueing needs the admin role."));
    return;
  }
  const type = el("select", { name: "type", id: "enq-type", required: true },
    form.types.map((t) => el("option", { value: t.type }, t.type)));
  const queue = el("select", { name: "queue", id: "enq-queue" }, form.queues.map((q) => el("option", { value: q }, q)));
  const payload = el("textarea", { name: "payload", id: "enq-payload", spellcheck: "false" });
  payload.value = "{}";
  const perr = el("div", { class: "field-error", id: "enq-payload-error" });
  const delay = el("input", { type: "number", name: "delay", id: "enq-delay", min: 0, value: 0 });
  const count = el("input", { type: "number", name: "count", id: "enq-count", min: 1, max: 1000, value: 1 });
  const submit = el("button", { type: "submit", class: "primary", id: "enq-submit" }, "Enqueue");
  const pickQueue = () => {
    const t = form.types.find((x) => x.type === type.value);
    if (t) queue.value = t.queue;
  };
  const check = () => {
    try { JSON.parse(payload.value); perr.textContent = ""; submit.disabled = false; return true; }
    catch (e) { perr.textContent = "Not valid JSON: " + e.message; submit.disabled = true; return false; }
  };
  type.addEventListener("change", pickQueue);
  payload.addEventListener("input", check);
  pickQueue();
  const f = el("form", { class: "form card", id: "enqueue-form", on: { submit: async (ev) => {
    ev.preventDefault();
    if (!check()) return;
    try {
      const r = await api("/api/enqueue", { type: type.value, queue: queue.value, payload: payload.value,
        delay: Number(delay.value), count: Number(count.value) });
      toast(r.count === 1 ? "Enqueued job " + r.first_id : "Enqueued " + r.count + " jobs from #" + r.first_id);
      const out = document.getElementById("enq-result");
      out.replaceChildren("Last enqueued: ", el("a", { href: "/jobs/" + r.first_id }, "job #" + r.first_id));
    } catch (e) {
      if (e.status !== 401) toast(e.message, true);
    }
  } } },
    el("label", {}, "Type", type), el("label", {}, "Queue", queue),
    el("label", {}, "Payload (JSON)", payload), perr,
    el("div", { class: "row" }, el("label", {}, "Delay (seconds)", delay), el("label", {}, "Count", count)),
    el("div", { class: "row" }, submit, el("span", { id: "enq-result", class: "muted" })));
  setMain("Enqueue", el("h1", {}, "Enqueue"), f);
}

/* ---- login ---- */

function showLogin() {
  stopTimer();
  document.getElementById("nav").hidden = true;
  document.getElementById("live").hidden = true;
  document.getElementById("logout").hidden = true;
  document.getElementById("who").textContent = "";
  const msg = el("div", { class: "field-error", id: "login-error", role: "alert" });
  const user = el("input", { name: "user", id: "login-user", autocomplete: "username", required: true });
  const pw = el("input", { name: "password", id: "login-password", type: "password", autocomplete: "current-password", required: true });
  const rem = el("input", { type: "checkbox", name: "remember", id: "login-remember" });
  const f = el("form", { class: "form card login", id: "login-form", on: { submit: async (ev) => {
    ev.preventDefault();
    msg.textContent = "";
    try {
      app.me = await api("/api/login", { user: user.value, password: pw.value, remember: rem.checked });
      enqueueCache = null;
      zoneFmt = null;
      if (location.pathname === "/login") history.replaceState(null, "", "/");
      start();
    } catch (e) {
      msg.textContent = e.status === 429 ? "Too many failed attempts; try again in " + (e.retryAfter || "a few") + " seconds."
        : e.status === 401 ? "Wrong user name or password." : e.message;
    }
  } } },
    el("h1", {}, "Log in to jobq"),
    el("label", {}, "User", user), el("label", {}, "Password", pw),
    el("label", { class: "check" }, rem, "Remember me"), msg,
    el("button", { type: "submit", class: "primary", id: "login-submit" }, "Log in"));
  setMain("Log in", f);
  user.focus();
}

/* ---- schedules ---- */

/* An outcome word of a schedule's fire, in the state colours. */
const OUTCOME_CLASS = { done: "s-done", failed: "s-failed", missed: "s-failed", queued: "s-ready",
  running: "s-reserved", stale: "s-stale", retrying: "s-retry", skipped: "s-delayed" };
function outcomeBadge(o) {
  if (!o) return el("span", { class: "muted" }, "—");
  return el("span", { class: "badge " + (OUTCOME_CLASS[o] || "") }, o);
}

/* "2026-12-01T03:00:00+01:00" (a fire in the schedule's own zone) as
 * "2026-12-01 03:00 +01:00", the zone on hover. */
function zoned(iso, tz) {
  if (!iso) return el("span", { class: "muted" }, "never");
  const m = iso.match(/^(\d{4}-\d\d-\d\d)T(\d\d:\d\d):\d\d(.*)$/);
  return el("time", { datetime: iso, title: (tz || "UTC") + " " + iso }, m ? m[1] + " " + m[2] + " " + m[3] : iso);
}

/* The cron syntax reference card (static; what src/cron.c accepts). */
function cronCard() {
  const rows = [
    ["*", "every value"], ["5", "that value"], ["1-5", "a range"], ["1,15,30", "a list"],
    ["*/15", "every 15th value, from the first"], ["10-50/20", "every 20th value in a range"],
    ["jan-dec, sun-sat", "names for months and days of the week; 0 and 7 are both Sunday"],
    ["@hourly @daily @weekly @monthly @yearly", "the usual lines (@midnight, @annually too)"],
  ];
  const ex = [
    ["*/5 * * * *", "every 5 minutes"], ["0 3 * * *", "at 03:00 every day"],
    ["30 8 * * 1-5", "at 08:30, Monday to Friday"], ["0 0 1 * *", "at midnight on the 1st of the month"],
    ["0 0 1 * 1", "at midnight on the 1st and on every Monday"],
  ];
  return el("section", { class: "card cron-card", id: "cron-card", "aria-labelledby": "cron-card-h" },
    el("h2", { id: "cron-card-h" }, "Cron syntax"),
    el("p", { class: "mono fields" }, "minute hour day-of-month month day-of-week"),
    el("p", { class: "muted" }, "Minute 0-59, hour 0-23, day of month 1-31, month 1-12, day of week 0-7. " +
      "When both day fields are restricted, a day matching either one fires; when either starts with *, both must match."),
    el("dl", { class: "kv" }, rows.map(([k, v]) => [el("dt", { class: "mono" }, k), el("dd", {}, v)])),
    el("h3", {}, "Examples"),
    el("dl", { class: "kv" }, ex.map(([k, v]) => [el("dt", { class: "mono" }, k), el("dd", {}, v)])),
    el("h3", {}, "Time zones and daylight saving"),
    el("p", { class: "muted" }, "Fire times are in the schedule's time zone. A fixed time (\"30 2 * * *\") that the clocks skip " +
      "fires at the end of the gap, and one they repeat fires once, the first time. A wildcard job (\"0 * * * *\") follows " +
      "the wall clock: twice in a repeated hour, not at all in a skipped one."));
}

async function pageSchedules() {
  const d = await api("/api/schedules");
  const admin = isAdmin();
  const rows = d.schedules.map((s) => el("tr", { "data-name": s.name, class: s.enabled ? "" : "off" },
    el("td", {}, el("a", { href: "/schedules/" + encodeURIComponent(s.name) }, s.name), " ",
      el("span", { class: "muted small" }, s.source === "ini" ? "INI" : "database"),
      s.enabled ? null : [" ", el("span", { class: "badge s-stale" }, "off")],
      s.problem ? el("div", { class: "field-error" }, s.problem) : null),
    el("td", { class: "wide" }, el("code", {}, s.cron), el("div", { class: "muted small" }, s.when || "")),
    el("td", {}, zoned(s.next_fire, s.timezone), el("div", { class: "muted small" }, s.timezone || "UTC")),
    el("td", { class: "wide" }, s.last_fire ? [zoned(s.last_fire, s.timezone), " ", outcomeBadge(s.last_outcome)] : el("span", { class: "muted" }, "—")),
    el("td", { class: "num" }, s.runs + " / ", el("span", { class: s.failures ? "mark" : "" }, String(s.failures))),
    admin ? el("td", {}, el("div", { class: "actions" },
      el("button", { class: "toggle", on: { click: () => act("/api/schedules/" + (s.enabled ? "disable" : "enable"), { name: s.name },
        () => s.name + (s.enabled ? " disabled" : " enabled")) } }, s.enabled ? "Disable" : "Enable"),
      el("button", { class: "run-now", on: { click: () => act("/api/schedules/run-now", { name: s.name },
        (r) => s.name + " enqueued as job " + r.job) } }, "Run now"))) : null));
  setMain("Schedules",
    el("h1", {}, "Schedules", el("span", { class: "muted small" }, "runs / failures over the last " + fmtDur(d.window_s * 1000))),
    rows.length === 0 ? el("p", { class: "empty" }, "No schedules. Add [schedule NAME] sections to the INI file, or use jobq schedule add.") :
      el("table", { id: "schedules-table" },
        el("thead", {}, el("tr", {}, el("th", {}, "Name"), el("th", { class: "wide" }, "When"), el("th", {}, "Next fire"),
          el("th", { class: "wide" }, "Last fire"), el("th", { class: "num" }, "Runs / fail"),
          admin ? el("th", {}, "") : null)),
        el("tbody", {}, rows)),
    cronCard());
}

/* The live preview of an expression: description and next five fires,
 * asked of the server (the same cron module the scheduler uses). */
function cronPreview(input, tz, out, save) {
  let seq = 0, timer = null;
  const run = async () => {
    const mine = ++seq;
    const q = new URLSearchParams({ expr: input.value, timezone: tz || "UTC" });
    try {
      const r = await api("/api/cron?" + q);
      if (mine !== seq) return;
      input.removeAttribute("aria-invalid");
      out.replaceChildren(el("p", { id: "preview-desc" }, r.description),
        el("ol", { id: "preview-next", class: "mono" }, r.next.map((t) => el("li", {}, zoned(t, tz)))));
      if (save) save.disabled = false;
    } catch (e) {
      if (mine !== seq || e.status === 401) return;
      input.setAttribute("aria-invalid", "true");
      out.replaceChildren(el("p", { class: "field-error", id: "preview-error" }, e.message));
      if (save) save.disabled = true;
    }
  };
  input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(run, 150); });
  run();
}

function fireTable(id, fires, withError) {
  if (fires.length === 0) return el("p", { class: "empty", id: id + "-empty" }, "None.");
  return el("table", { id: id },
    el("thead", {}, el("tr", {}, el("th", {}, "Fired"), el("th", {}, "Outcome"), el("th", { class: "num" }, "Job"),
      withError ? el("th", { class: "wide" }, "Error") : null)),
    el("tbody", {}, fires.map((f) => el("tr", {},
      el("td", {}, when(f.fire_at), f.manual ? el("span", { class: "muted small" }, " (run now)") : null),
      el("td", {}, outcomeBadge(f.outcome)),
      el("td", { class: "num" }, f.job ? el("a", { href: "/jobs/" + f.job }, "#" + f.job) : "—"),
      withError ? el("td", { class: "wide" }, el("span", { class: "first-line", title: f.error || "" }, firstLine(f.error))) : null))));
}

async function pageSchedule(name) {
  const [list, h] = await Promise.all([api("/api/schedules"), api("/api/schedules/history?name=" + encodeURIComponent(name))]);
  const s = list.schedules.find((x) => x.name === name);
  if (!s) { setMain("Schedules", el("h1", {}, "No such schedule"), el("p", {}, el("a", { href: "/schedules" }, "All schedules"))); return; }
  const admin = isAdmin();
  const info = [
    el("dl", { class: "kv" },
      el("dt", {}, "Source"), el("dd", {}, s.source === "ini" ? "INI file" : "database"),
      el("dt", {}, "Expression"), el("dd", {}, el("code", {}, s.cron), " — ", s.when || ""),
      s.description ? [el("dt", {}, "Description"), el("dd", {}, s.description)] : null,
      el("dt", {}, "Job"), el("dd", {}, s.type + " on " + s.queue),
      el("dt", {}, "Time zone"), el("dd", {}, s.timezone || "UTC"),
      el("dt", {}, "Next fire"), el("dd", {}, zoned(s.next_fire, s.timezone)),
      el("dt", {}, "Last fire"), el("dd", {}, s.last_fire ? [zoned(s.last_fire, s.timezone), " ", outcomeBadge(s.last_outcome)] : "—"),
      el("dt", {}, "Overlap"), el("dd", {}, s.overlap),
      el("dt", {}, "Runs / failures"), el("dd", {}, s.runs + " / " + s.failures + " (skipped " + s.skipped + ", missed " + s.missed + ")"),
      s.problem ? [el("dt", {}, "Problem"), el("dd", { class: "field-error" }, s.problem)] : null),
    admin ? el("div", { class: "row" },
      el("button", { class: "toggle", on: { click: () => act("/api/schedules/" + (s.enabled ? "disable" : "enable"), { name: s.name },
        () => s.name + (s.enabled ? " disabled" : " enabled")) } }, s.enabled ? "Disable" : "Enable"),
      el("button", { class: "run-now", on: { click: () => act("/api/schedules/run-now", { name: s.name },
        (r) => s.name + " enqueued as job " + r.job) } }, "Run now")) : null,
  ];
  const history = [
    el("h2", {}, "Failures ", el("span", { class: "badge s-failed" }, String(h.failed.length))),
    fireTable("history-failed", h.failed, true),
    el("h2", {}, "Successes ", el("span", { class: "badge s-done" }, String(h.succeeded.length))),
    fireTable("history-succeeded", h.succeeded, false),
    h.other.length ? [el("h2", {}, "Pending or skipped"), fireTable("history-other", h.other, false)] : null,
  ];
  /* A form being filled in is never redrawn: only the facts and the
   * history around it are. */
  const form = main().querySelector("#schedule-edit");
  if (form && form.dataset.name === name) {
    document.getElementById("schedule-info").replaceChildren(...info.flat().filter(Boolean));
    document.getElementById("schedule-history").replaceChildren(...history.flat().filter(Boolean));
    return;
  }
  let edit = null;
  if (admin && s.source === "db") {
    const input = el("input", { id: "cron-input", name: "cron", value: s.cron, class: "mono", autocomplete: "off",
      spellcheck: "false", "aria-describedby": "cron-preview" });
    const out = el("div", { id: "cron-preview", "aria-live": "polite" });
    const save = el("button", { class: "primary", type: "submit" }, "Save");
    edit = el("form", { id: "schedule-edit", class: "form card", "data-name": name, on: { submit: async (ev) => {
      ev.preventDefault();
      try {
        await api("/api/schedules/edit", { name: name, cron: input.value });
        toast(name + ": expression saved");
        edit.remove();
        await refresh();
      } catch (e) {
        if (e.status !== 401) out.replaceChildren(el("p", { class: "field-error", id: "preview-error" }, e.message));
      }
    } } },
      el("h2", {}, "Edit the expression"),
      el("label", { for: "cron-input" }, "Cron expression (" + (s.timezone || "UTC") + ")", input),
      out, el("div", { class: "row" }, save));
    cronPreview(input, s.timezone, out, save);
  }
  setMain(name + " · Schedules",
    el("p", {}, el("a", { href: "/schedules" }, "← All schedules")),
    el("h1", {}, name, s.enabled ? null : el("span", { class: "badge s-stale" }, "off")),
    el("div", { class: "card", id: "schedule-info" }, info),
    edit,
    el("div", { id: "schedule-history" }, history),
    cronCard());
}

/* ---- routing and refresh ---- */

function route() {
  const path = location.pathname;
  let m;
  if (path === "/") return ["overview", pageOverview];
  if (path === "/jobs") return ["jobs", pageJobs];
  if ((m = path.match(/^\/jobs\/(\d+)$/))) return ["jobs", () => pageJob(m[1])];
  if (path === "/failed") return ["failed", pageFailed];
  if (path === "/workers") return ["workers", pageWorkers];
  if (path === "/enqueue") return ["enqueue", pageEnqueue];
  if (path === "/schedules") return ["schedules", pageSchedules];
  if ((m = path.match(/^\/schedules\/([^/]+)$/))) return ["schedules", () => pageSchedule(decodeURIComponent(m[1]))];
  return ["overview", pageOverview];
}

async function refresh() {
  if (!app.me || app.busy) return;
  app.busy = true;
  try {
    const [name, fn] = route();
    for (const a of document.querySelectorAll("#nav a"))
      if (a.dataset.page === name) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
    const y = window.scrollY;
    await fn();
    window.scrollTo(0, y);
  } catch (e) {
    if (e.status !== 401) toast(e.message, true);
  } finally {
    app.busy = false;
  }
}

/* A live refresh waits while the person types in a field or reads an
 * opened run output: redrawing would take either away. */
function interacting() {
  const a = document.activeElement;
  return (a && main().contains(a) && /^(INPUT|SELECT|TEXTAREA)$/.test(a.tagName)) ||
    main().querySelector("details[open]") !== null;
}

function stopTimer() {
  clearInterval(app.timer);
  app.timer = null;
}

function setLive(on) {
  app.live = on;
  document.getElementById("live").setAttribute("aria-pressed", on ? "true" : "false");
  document.getElementById("live").textContent = on ? "Live" : "Paused";
  stopTimer();
  if (on) app.timer = setInterval(() => { if (!document.hidden && !interacting()) refresh(); }, REFRESH_MS);
}

function navigate(path) {
  history.pushState(null, "", path);
  refresh();
  main().focus({ preventScroll: true });
}

function start() {
  document.getElementById("nav").hidden = false;
  document.getElementById("live").hidden = false;
  document.getElementById("logout").hidden = false;
  for (const a of document.querySelectorAll("[data-admin]")) a.hidden = !isAdmin();
  document.getElementById("who").textContent = app.me.user + " (" + app.me.role + ")";
  setLive(app.live);
  refresh();
}

function currentTheme() {
  const t = document.documentElement.dataset.theme;
  if (t) return t;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

function setupChrome() {
  const theme = document.getElementById("theme");
  const label = () => { theme.textContent = currentTheme() === "dark" ? "☀ Light" : "☾ Dark"; };
  label();
  theme.addEventListener("click", () => {
    const next = currentTheme() === "dark" ? "light" : "dark";
    document.documentElement.dataset.theme = next;
    try { localStorage.setItem("jobq-theme", next); } catch (e) { /* not remembered */ }
    label();
  });
  document.getElementById("live").addEventListener("click", () => setLive(!app.live));
  document.getElementById("logout").addEventListener("click", async () => {
    try { await api("/api/logout", {}); } catch (e) { /* the session is gone either way */ }
    app.me = null;
    history.pushState(null, "", "/login");
    showLogin();
  });
  /* Links inside the app change the page without a reload. */
  document.addEventListener("click", (ev) => {
    const a = ev.target.closest("a[href^='/']");
    if (!a || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.button !== 0 || a.target) return;
    ev.preventDefault();
    navigate(a.getAttribute("href"));
  });
  window.addEventListener("popstate", refresh);
}

async function boot() {
  setupChrome();
  try {
    const me = await api("/api/me");
    if (me && me.user) {
      app.me = me;
      if (location.pathname === "/login") history.replaceState(null, "", "/");
      start();
    } else showLogin();
  } catch (e) {
    toast(e.message, true);
  }
}

document.addEventListener("DOMContentLoaded", boot);
