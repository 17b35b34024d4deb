/* failed.js -- the Dead letter page (/failed): the dead jobs, filtered by
 * queue and type, with retry, forget and clear for an admin, of the jobs
 * selected or of every one the filter finds (from /api/failed, bulk.js).
 * A dead job whose death cancelled jobs that waited for it says how many
 * its retry re-opens (jobq(1)); one that others still wait for says how
 * many wait. */

import { bulkButton, matching, stopped } from "./bulk.js";
import { act, api, el, enqueueOptions, filterForm, fmtNum, isAdmin, navigate, params, select, setMain, when } from "./common.js";

const selected = new Set();

/* "a retry re-opens 2 jobs" (those its death cancelled) or "2 jobs wait
 * for it", linked to the job's page, which lists them. */
function waiters(f) {
  if (f.reopens)
    return el("a", { class: "waiters", href: "/jobs/" + f.id, title: "Jobs cancelled because it died: they wait for it again" },
      "a retry re-opens " + (f.reopens === 1 ? "1 job" : f.reopens + " jobs"));
  if (!f.dependents) return null;
  return el("a", { class: "waiters", href: "/jobs/" + f.id }, (f.dependents === 1 ? "1 job waits" : f.dependents + " jobs wait") + " for it");
}

/* What a retry, forget or clear of total dead jobs says when the server
 * stopped it part way (act's stopped; bulk.js stopped): how many it did
 * (the answer's key), why it stopped, how many it left.  Ids gone from
 * the dead letter meanwhile or refused were skipped.  null for any
 * other error. */
function partly(did, key, total) {
  return (e) => {
    if (typeof e.body[key] !== "number") return null;
    const skipped = (Array.isArray(e.body.missing) ? e.body.missing.length : 0) +
      (Array.isArray(e.body.refused) ? e.body.refused.length : 0);
    return stopped(did, "dead jobs", e.body[key], skipped, total, e, "were gone or refused");
  };
}

/* Retry of one dead job, and of the jobs its death cancelled. */
function retryOne(f) {
  act("/api/failed/retry", { ids: [f.id] }, (r) => r.refused.length ? "Job " + f.id + " stays dead-lettered: " + r.refused[0].error :
    "Job " + f.id + " is back in the queue" +
    (f.reopens ? "; " + (f.reopens === 1 ? "the job" : "the " + f.reopens + " jobs") + " it cancelled wait for it again" : ""));
}

export async function pageFailed() {
  const p = params();
  const q = new URLSearchParams();
  for (const k of ["queue", "type", "after", "at"]) if (p.get(k)) q.set(k, p.get(k));
  const [d, form] = await Promise.all([api("/api/failed?" + q), enqueueOptions()]);
  const ids = new Set(d.failed.map((f) => f.id));
  for (const id of [...selected]) if (!ids.has(id)) selected.delete(id);
  const admin = isAdmin();
  const filt = { queue: p.get("queue") || "", type: p.get("type") || "" };
  const retrySel = el("button", { id: "retry-selected", disabled: selected.size === 0, on: { click: () => {
    act("/api/failed/retry", { ids: [...selected] }, (r) => "Retried " + r.retried +
      (r.refused.length ? "; " + r.refused.length + " stay dead-lettered (job " + r.refused[0].id + ": " + r.refused[0].error + ")" : ""),
    partly("Retried", "retried", selected.size));
    selected.clear();
  } } }, "Retry selected");
  const forgetSel = el("button", { id: "forget-selected", class: "danger", disabled: selected.size === 0, on: { click: () => {
    if (!confirm("Forget " + selected.size + " dead job(s) for good?")) return;
    act("/api/failed/forget", { ids: [...selected] }, (r) => "Forgot " + r.forgotten, partly("Forgot", "forgotten", selected.size));
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
    el("td", {}, el("span", { class: "first-line", title: f.summary }, f.summary),
      el("span", { class: "muted" }, [f.reason, f.exit_status].filter(Boolean).join(" · ")), waiters(f)),
    admin ? el("td", {}, el("button", { class: "retry-one", on: { click: () => retryOne(f) } }, "Retry")) : null));
  const next = new URLSearchParams(p);
  // The anchor's time goes with its id: the page stays put when that job
  // is retried or forgotten.
  if (d.next_after !== null) { next.set("after", d.next_after); next.set("at", d.next_after_at); }
  const first = new URLSearchParams(p);
  first.delete("after");
  first.delete("at");
  const filtered = filt.queue || filt.type;
  setMain("Dead letter",
    el("h1", {}, "Dead letter", el("span", { class: "badge s-failed", id: "failed-total" },
      filtered ? fmtNum(d.matching) + " of " + fmtNum(d.total) : fmtNum(d.total))),
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
      bulkButton("retry", "Retry all matching", "dead jobs" + matching(filt), filt, { id: "retry-all", disabled: d.failed.length === 0 }),
      bulkButton("forget", "Forget all matching", "dead jobs" + matching(filt), filt,
        { id: "forget-all", class: "danger", disabled: d.failed.length === 0 }),
      el("button", { class: "danger", id: "clear-all", disabled: d.total === 0, on: { click: () => {
        if (confirm("Delete all " + d.total + " dead jobs in every queue for good?"))
          act("/api/failed/clear", { count: d.total }, (r) => "Removed " + r.removed, partly("Removed", "removed", d.total));
      } } }, "Clear all (" + fmtNum(d.total) + ")")) : null,
    el("p", {}),
    rows.length === 0 ? el("p", { class: "empty" }, "No dead jobs. ") :
      el("table", { id: "failed-table" },
        el("thead", {}, el("tr", {}, admin ? el("th", {}, "") : null, el("th", { class: "num" }, "ID"),
          el("th", { class: "wide" }, "Queue"), el("th", {}, "Type"), el("th", { class: "wide" }, "Failed"),
          el("th", {}, "Error"), admin ? el("th", {}, "") : null)),
        el("tbody", {}, rows)),
    el("div", { class: "row" },
      p.get("after") ? el("a", { class: "button", href: "/failed?" + first }, "Newest") : null,
      d.next_after !== null ? el("a", { class: "button", href: "/failed?" + next, id: "failed-next" }, "Older") : null));
}
