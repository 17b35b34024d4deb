/* history.js -- the History page (/history): every job the database
 * knows, whatever its state (queued, dead, or done and kept as its runs),
 * found by queue, type, state, unique key, payload text and enqueue time
 * (from /api/search), a page at a time; each row opens the job's page. */

import { api, badge, el, enqueueOptions, filterForm, fmtNum, navigate, params, select, setMain, when } from "./common.js";
import { groupLink } from "./group.js";

const KEYS = ["queue", "type", "state", "unique_key", "q", "since", "until", "after"];
const HISTORY_STATES = ["queued", "ready", "delayed", "reserved", "stale", "done", "dead"];

/* An ISO time in the address as a datetime-local field's value (the
 * browser's own zone), and back. */
function toLocal(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  if (isNaN(d)) return "";
  return new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
}
function toIso(local) {
  const d = new Date(local);
  return isNaN(d) ? "" : d.toISOString().replace(/\.000Z$/, "Z");
}

/* The groups a text finds by the start of their name (q, or
 * "group:NAME" for groups alone), above the jobs. */
function groupsFound(d, q) {
  if (!d.groups) return null;
  if (d.groups.length === 0)
    return q.startsWith("group:") ? el("p", { class: "empty", id: "groups-found" }, "No group's name starts with that.") : null;
  return [el("h2", {}, "Groups"), el("ul", { class: "links", id: "groups-found" }, d.groups.map((g) =>
    el("li", {}, groupLink(g.id, g.name), " ", el("span", { class: "muted" },
      g.state + ", " + fmtNum(g.done + g.dead + g.cancelled + g.expired) + " of " + fmtNum(g.total) + " ended"))))];
}

/* A payload text search answers one window of ids a request: walk on
 * from window to window until the page is full, the table ends, or
 * WALK_MS have gone by; then "Search further" goes on from there. */
const PAGE = 50, WALK_MS = 1500;
async function search(q) {
  const t0 = Date.now();
  q.set("limit", PAGE);
  const d = await api("/api/search?" + q);
  while (d.searched_to && d.next_after !== null && d.jobs.length < PAGE && Date.now() - t0 < WALK_MS) {
    q.set("after", d.next_after);
    q.set("limit", PAGE - d.jobs.length);
    const more = await api("/api/search?" + q);
    d.jobs.push(...more.jobs);
    d.next_after = more.next_after;
    d.searched_to = more.searched_to;
  }
  return d;
}

export async function pageHistory() {
  const p = params();
  const q = new URLSearchParams();
  for (const k of KEYS) if (p.get(k)) q.set(k, p.get(k));
  const [d, form] = await Promise.all([search(q), enqueueOptions()]);
  const go = (fd) => {
    const n = new URLSearchParams();
    for (const [k, v] of fd) if (v) n.set(k, k === "since" || k === "until" ? toIso(v) : v.trim());
    navigate("/history" + (n.toString() ? "?" + n : ""));
  };
  const rows = d.jobs.map((j) => el("tr", { "data-id": j.id },
    el("td", { class: "num" }, el("a", { href: "/jobs/" + j.id }, "#" + j.id)),
    el("td", {}, badge(j.state)),
    el("td", { class: "wide" }, j.queue),
    el("td", {}, j.type),
    el("td", { class: "num" }, String(j.attempts)),
    el("td", {}, j.created_at ? when(j.created_at) : "—"),
    el("td", {}, j.ended_at ? when(j.ended_at) : "—")));
  const next = new URLSearchParams(p);
  if (d.next_after !== null) next.set("after", d.next_after);
  const first = new URLSearchParams(p);
  first.delete("after");
  setMain("History",
    el("h1", {}, "History"),
    el("p", { class: "muted" }, "Every job in the queue, the dead letter, or done and kept as its runs until they are pruned."),
    filterForm([
      select("queue", "Queue", form.queues, p.get("queue")),
      el("label", {}, "Type", el("input", { name: "type", value: p.get("type") || "", list: "history-types", size: 14 })),
      el("datalist", { id: "history-types" }, form.types.map((t) => el("option", { value: t.type }))),
      select("state", "State", HISTORY_STATES, p.get("state")),
      el("label", {}, "Unique key", el("input", { name: "unique_key", id: "h-key", value: p.get("unique_key") || "", size: 14 })),
      el("label", {}, "Payload or group", el("input", { name: "q", id: "h-text", value: p.get("q") || "", size: 14,
        title: "Text in the payload, or the start of a group's name (group:NAME for groups alone)" })),
      el("label", {}, "Enqueued from", el("input", { name: "since", id: "h-since", type: "datetime-local", value: toLocal(p.get("since")) })),
      el("label", {}, "until", el("input", { name: "until", id: "h-until", type: "datetime-local", value: toLocal(p.get("until")) })),
    ], go),
    groupsFound(d, p.get("q") || ""),
    (p.get("q") || "").startsWith("group:") ? null : rows.length === 0 ? el("p", { class: "empty" }, "No job matches.") :
      el("table", { id: "history-table" },
        el("thead", {}, el("tr", {},
          el("th", { class: "num" }, "ID"), el("th", {}, "State"), el("th", { class: "wide" }, "Queue"),
          el("th", {}, "Type"), el("th", { class: "num" }, "Attempts"), el("th", {}, "Enqueued"), el("th", {}, "Ended"))),
        el("tbody", {}, rows)),
    d.searched_to ? el("p", { class: "muted", id: "searched-to" }, "Searched the payloads of jobs up to #" + d.searched_to +
      "; Search further goes on from there.") : null,
    el("div", { class: "row" },
      p.get("after") ? el("a", { class: "button", href: "/history?" + first }, "First page") : null,
      d.next_after !== null ? el("a", { class: "button", href: "/history?" + next, id: "history-next" },
        d.searched_to ? "Search further" : "Next page") : null));
}
