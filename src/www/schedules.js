/* schedules.js -- the Schedules page (/schedules): every schedule with its
 * next and last fire, Enable/Disable and Run now for an admin (from
 * /api/schedules). */

import { act, api, el, fmtDur, isAdmin, setMain } from "./common.js";
import { cronCard, outcomeBadge, zoned } from "./cron.js";

export async function pageSchedules() {
  const d = await api("/api/schedules");
  const admin = isAdmin();
  const rows = d.schedules.map((s) => el("tr", { "data-name": s.name, class: s.enabled ? "" : "off" },
    el("td", {}, el("a", { href: "/schedules/" + encodeURIComponent(s.name) }, s.name), " ",
      el("span", { class: "muted small" }, s.source === "ini" ? "INI" : "database"),
      s.enabled ? null : [" ", el("span", { class: "badge s-stale" }, "off")],
      s.problem ? el("div", { class: "field-error" }, s.problem) : null),
    el("td", { class: "wide" }, el("code", {}, s.cron), el("div", { class: "muted small" }, s.when || "")),
    el("td", {}, s.enabled ? zoned(s.next_fire, s.timezone) : el("span", { class: "muted" }, "disabled"), el("div", { class: "muted small" }, s.timezone || "UTC")),
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

