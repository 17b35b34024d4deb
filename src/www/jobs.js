/* jobs.js -- the Jobs page (/jobs): the jobs waiting or running, filtered
 * by queue, type and state, a page at a time (from /api/jobs), with an
 * admin's bulk actions on every job the filter finds (bulk.js). */

import { bulkButton, matching } from "./bulk.js";
import { api, badge, dueIn, el, enqueueOptions, filterForm, isAdmin, navigate, params, select, setMain } from "./common.js";

/* An admin's actions on every job the filter finds: delete the waiting
 * ones (the ready or delayed ones when the filter says so), release the
 * stale ones, cancel them all (running ones are stopped by their
 * workers). */
function bulkRow(p) {
  const state = p.get("state") || "";
  const f = { queue: p.get("queue") || "", type: p.get("type") || "" };
  const waiting = state === "ready" || state === "delayed" ? state + " jobs" : "waiting jobs";
  return el("div", { class: "row", id: "jobs-bulk" },
    state === "" || state === "ready" || state === "delayed" ?
      bulkButton("delete", "Delete all " + waiting, waiting + matching(f), { ...f, state },
        { id: "delete-all", class: "danger" }) : null,
    state === "" || state === "stale" ?
      bulkButton("release", "Release all stale", "stale jobs" + matching(f), f, { id: "release-all" }) : null,
    bulkButton("cancel", "Cancel all" + (state ? " " + state : ""), (state ? state + " " : "") + "jobs" + matching(f) +
      " (running ones are stopped)", { ...f, state }, { id: "cancel-all", class: "danger" }));
}

export async function pageJobs() {
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
    el("td", { class: "num due" }, j.state === "ready" || j.state === "delayed" ? dueIn(j.due_in_ms) : "—"),
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
      select("state", "State", ["ready", "delayed", "waiting", "reserved", "stale"], p.get("state")),
    ], go),
    isAdmin() ? bulkRow(p) : null,
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
