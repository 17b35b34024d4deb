/* group.js -- the groups of jobs (jobq enqueue --group): the list
 * (/groups, newest first or by the start of a name, from /api/groups)
 * and one group's page (/groups/ID or /groups/NAME, from
 * /api/groups/ID, the object `jobq group show --json` prints): its
 * progress by state, its callbacks and the jobs they are, its jobs still
 * queued (a page at a time, from /api/jobs?group=ID) and the ones that
 * wait for other jobs, every job linked to its page. */

import { api, badge, dueIn, el, filterForm, fmtNum, navigate, params, setMain, when } from "./common.js";

/* How the jobs of a group stand, in the bar's order: the ended ones
 * (counted by the group) and the queued ones (by state). */
const ENDED = ["done", "dead", "cancelled", "expired"];
const QUEUED = ["ready", "delayed", "waiting", "reserved", "stale"];

function jobLink(id) {
  return el("a", { href: "/jobs/" + id }, "#" + id);
}

export function groupLink(id, name) {
  return el("a", { href: "/groups/" + id, class: "group-name" }, name);
}

/* The counts of g by state: the ended ones from the group's row, the
 * queued ones from g.queued when the answer has them. */
function counts(g) {
  const c = {};
  for (const s of ENDED) c[s] = g[s] || 0;
  for (const s of QUEUED) c[s] = g.queued ? g.queued[s] || 0 : 0;
  return c;
}

/* A bar of the group's jobs by state, each part as wide as its share of
 * the total, with a legend of the counts that are not 0 (the bar alone
 * says nothing to a screen reader: the legend does). */
function progress(g) {
  const c = counts(g), total = g.total || 0;
  const ended = ENDED.reduce((n, s) => n + c[s], 0);
  const parts = [...ENDED, ...QUEUED].filter((s) => c[s] > 0);
  return el("div", { class: "card", id: "group-progress" },
    el("p", { class: "progress-line" }, el("b", {}, fmtNum(ended) + " of " + fmtNum(total)), " jobs ended",
      total > 0 ? " (" + Math.floor((ended * 100) / total) + "%)" : ""),
    el("div", { class: "stack", "aria-hidden": "true" }, parts.map((s) =>
      el("span", { class: "seg s-" + s, "data-share": String(c[s] / Math.max(total, 1)) }))),
    el("ul", { class: "legend", id: "group-legend" }, parts.map((s) =>
      el("li", { "data-state": s }, badge(s), " " + fmtNum(c[s])))),
    parts.length === 0 ? el("p", { class: "muted" }, "No jobs in it yet.") : null);
}

/* The bar's widths: set as properties, not as a style attribute (the
 * CSP forbids inline styles, not the CSSOM). */
function sizeBars(root) {
  for (const s of root.querySelectorAll(".stack .seg")) s.style.width = (Number(s.dataset.share) * 100) + "%";
}

/* A callback: its type, and the job it became (linked, with its state,
 * and whether it was forgotten from the dead letter since, as the job's
 * page says; enqueued in the transaction that ended the group, so at
 * its end), or why there is none yet. */
function callback(label, cb, until, endedAt) {
  if (!cb) return [label, null];
  return [label, el("span", { class: "callback" }, el("span", { class: "mono" }, cb.type), " ",
    cb.job ? el("span", {}, "enqueued as ", jobLink(cb.job), " ", badge(cb.state),
      cb.forgotten ? el("span", { class: "muted forgotten" }, " forgotten from the dead letter") : null, " at ", when(endedAt)) :
      el("span", { class: "muted" }, "not enqueued: " + until))];
}

function kv(pairs) {
  return el("dl", { class: "kv" }, pairs.filter((p) => p[1] !== null && p[1] !== undefined && p[1] !== "")
    .map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
}

/* The group's jobs still queued (ended ones leave the queue: the group
 * counts them), a page at a time. */
function jobsTable(g, d, p) {
  const rows = d.jobs.map((j) => el("tr", { "data-id": j.id },
    el("td", { class: "num" }, jobLink(j.id)), el("td", {}, badge(j.state)),
    el("td", { class: "wide" }, j.queue), el("td", {}, j.type),
    el("td", { class: "num due" }, j.state === "ready" || j.state === "delayed" ? dueIn(j.due_in_ms) : "—")));
  const base = "/groups/" + g.id;
  const next = new URLSearchParams(p);
  if (d.next_after !== null) next.set("after", d.next_after);
  return [el("h2", {}, "Jobs in the queue"),
    rows.length === 0 ? el("p", { class: "empty", id: "group-jobs-empty" }, "None of its jobs is queued now.") :
      el("table", { id: "group-jobs" }, el("thead", {}, el("tr", {}, el("th", { class: "num" }, "ID"),
        el("th", {}, "State"), el("th", { class: "wide" }, "Queue"), el("th", {}, "Type"), el("th", { class: "num" }, "Due"))),
      el("tbody", {}, rows)),
    el("div", { class: "row" },
      p.get("after") ? el("a", { class: "button", href: base }, "First page") : null,
      d.next_after !== null ? el("a", { class: "button", href: base + "?" + next, id: "group-next" }, "Next page") : null)];
}

/* The jobs of the group that wait for other jobs, and which. */
function waiting(g) {
  if (g.waiting.length === 0) return null;
  return [el("h2", {}, "Waiting"),
    el("ul", { class: "links", id: "group-waiting" }, g.waiting.map((w) => el("li", {}, jobLink(w.id), " waits for ",
      w.waits_for.map((id, i) => [i ? ", " : "", jobLink(String(id))])))),
    g.waiting.length >= 100 ? el("p", { class: "muted" }, "The first 100 shown.") : null];
}

export async function pageGroup(what) {
  const p = params();
  let g;
  try {
    g = await api("/api/groups/" + encodeURIComponent(what));
  } catch (e) {
    if (e.status !== 404) throw e;
    setMain("Group", el("h1", {}, "Group"),
      el("p", { class: "empty", id: "group-missing" }, "No group " + what + "."));
    return;
  }
  const q = new URLSearchParams({ group: g.id });
  if (p.get("after")) q.set("after", p.get("after"));
  const d = await api("/api/jobs?" + q);
  setMain("Group " + g.name,
    el("h1", {}, el("span", { class: "group-name", id: "group-name" }, g.name),
      el("span", { class: "badge s-" + (g.state === "ended" ? "done" : "ready"), id: "group-state" },
        g.state === "ended" ? "ended" : g.being_enqueued ? "open, being enqueued" : "open")),
    el("div", { class: "card" }, kv([
      ["ID", String(g.id)], ["Created", when(g.created_at)], ["Ended", g.ended_at ? when(g.ended_at) : null],
      ["Jobs", fmtNum(g.total)],
      callback("On complete", g.on_complete, "once every job has ended", g.ended_at),
      callback("On success", g.on_success, g.state === "ended" ? "not every job was done" : "once every job is done", g.ended_at),
    ])),
    el("h2", {}, "Progress"), progress(g),
    waiting(g),
    jobsTable(g, d, p));
  sizeBars(document.getElementById("main"));
}

/* The list: the newest groups, or those whose name starts with what was
 * typed, each with how far it got. */
export async function pageGroups() {
  const p = params();
  const q = new URLSearchParams();
  for (const k of ["q", "before"]) if (p.get(k)) q.set(k, p.get(k));
  const d = await api("/api/groups?" + q);
  const rows = d.groups.map((g) => {
    const ended = ENDED.reduce((n, s) => n + g[s], 0);
    return el("tr", { "data-id": g.id },
      el("td", {}, groupLink(g.id, g.name)),
      el("td", {}, el("span", { class: "badge s-" + (g.state === "ended" ? "done" : "ready") }, g.state)),
      el("td", { class: "num" }, fmtNum(ended) + " of " + fmtNum(g.total)),
      el("td", { class: "num wide" }, fmtNum(g.dead + g.cancelled + g.expired)),
      el("td", {}, when(g.created_at)));
  });
  const next = new URLSearchParams(p);
  if (d.next_before !== null) next.set("before", d.next_before);
  setMain("Groups",
    el("h1", {}, "Groups"),
    filterForm([el("label", {}, "Name starts with", el("input", { name: "q", id: "groups-q", value: p.get("q") || "", size: 20 }))],
      (fd) => { const v = String(fd.get("q") || "").trim(); navigate("/groups" + (v ? "?q=" + encodeURIComponent(v) : "")); }),
    rows.length === 0 ? el("p", { class: "empty" }, "No groups" + (p.get("q") ? " match." : " yet.")) :
      el("table", { id: "groups-table" }, el("thead", {}, el("tr", {}, el("th", {}, "Name"), el("th", {}, "State"),
        el("th", { class: "num" }, "Ended"), el("th", { class: "num wide" }, "Not done"), el("th", {}, "Created"))),
      el("tbody", {}, rows)),
    el("div", { class: "row" },
      p.get("before") ? el("a", { class: "button", href: "/groups" }, "Newest") : null,
      d.next_before !== null ? el("a", { class: "button", href: "/groups?" + next, id: "groups-next" }, "Older") : null));
}
