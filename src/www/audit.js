/* audit.js -- the Audit page (/audit, admins only): every action the
 * audit table holds (/api/audit), newest first, filtered by user, action
 * and time, paged by keyset ("Older" carries the last row's id).  The
 * filters live in the address, so a filtered page can be shared and
 * the live refresh redraws the same rows.  Each row is a card, so the
 * page reads at phone width without a table to scroll. */

import { api, el, filterForm, isAdmin, navigate, params, select, setMain, when } from "./common.js";

const FILTERS = ["user", "action", "since", "until"];

/* "2026-12-01T10:00:00.000Z" (the address) -> "2026-12-01T11:00" (a
 * datetime-local input, the browser's own zone); "" when unset. */
function toLocalInput(iso) {
  const d = iso ? new Date(iso) : null;
  if (!d || isNaN(d)) return "";
  const p = (n) => String(n).padStart(2, "0");
  return d.getFullYear() + "-" + p(d.getMonth() + 1) + "-" + p(d.getDate()) + "T" + p(d.getHours()) + ":" + p(d.getMinutes());
}

/* The other way: a datetime-local value, read in the browser's zone,
 * as the UTC time the API takes. */
function fromLocalInput(v) {
  const d = v ? new Date(v) : null;
  return d && !isNaN(d) ? d.toISOString() : "";
}

/* The address of the page with filters q (and no page anchor unless q
 * has one). */
function pageUrl(q) {
  const u = new URLSearchParams();
  for (const k of [...FILTERS, "before"]) if (q[k]) u.set(k, q[k]);
  const s = u.toString();
  return "/audit" + (s ? "?" + s : "");
}

function filters(p, actions) {
  const q = Object.fromEntries(FILTERS.map((k) => [k, p.get(k) || ""]));
  return filterForm([
    el("label", {}, "User", el("input", { name: "user", value: q.user, autocomplete: "off", maxlength: 64 })),
    select("action", "Action", actions, q.action),
    el("label", {}, "Since (your time)", el("input", { name: "since", type: "datetime-local", value: toLocalInput(q.since) })),
    el("label", {}, "Until (your time)", el("input", { name: "until", type: "datetime-local", value: toLocalInput(q.until) })),
  ], (fd) => navigate(pageUrl({
    user: (fd.get("user") || "").trim(), action: fd.get("action"),
    since: fromLocalInput(fd.get("since")), until: fromLocalInput(fd.get("until")),
  })));
}

/* One audit row as a card: what and when on top, then who, from where,
 * on which job(s) and the detail, every value as text. */
function card(a) {
  const kv = [["User", a.user]];
  if (a.address) kv.push(["From", el("span", { class: "mono" }, a.address)]);
  if (a.job_id !== null) kv.push(["Job", el("a", { href: "/jobs/" + a.job_id, class: "job-link" }, "#" + a.job_id)]);
  if (a.count !== null) kv.push(["Jobs", String(a.count)]);
  if (a.detail) kv.push(["Detail", a.detail]);
  return el("article", { class: "card audit-entry", "data-id": a.id },
    el("div", { class: "row" }, el("b", { class: "audit-action" }, a.action), el("span", { class: "spacer" }),
      el("span", { class: "small muted" }, when(a.at))),
    el("dl", { class: "kv" }, kv.map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])));
}

export async function pageAudit() {
  if (!isAdmin()) {
    setMain("Audit", el("h1", {}, "Audit"), el("p", { class: "empty", id: "needs-admin" }, "The audit log needs the admin role."));
    return;
  }
  const p = params();
  const q = new URLSearchParams();
  for (const k of [...FILTERS, "before"]) if (p.get(k)) q.set(k, p.get(k));
  const d = await api("/api/audit" + (q.toString() ? "?" + q : ""));
  const cur = Object.fromEntries(FILTERS.map((k) => [k, p.get(k) || ""]));
  const paging = el("p", { class: "row" },
    p.get("before") ? el("a", { href: pageUrl(cur), id: "audit-newest" }, "← Newest") : null,
    el("span", { class: "spacer" }),
    d.next !== null ? el("a", { href: pageUrl({ ...cur, before: String(d.next) }), id: "audit-older" }, "Older →") : null);
  setMain("Audit",
    el("h1", {}, "Audit"),
    el("p", { class: "muted" }, "Every action taken in the dashboard or with jobq sessions, newest first."),
    filters(p, d.actions),
    d.audit.length === 0 ? el("p", { class: "empty" }, "No action matches.") :
      el("div", { class: "grid", id: "audit-list" }, d.audit.map(card)),
    paging);
}
