/* cron.js -- how schedules and their fires are shown, shared by the
 * Schedules page (schedules.js) and a schedule's own page (schedule.js):
 * outcome badges, fire times in the schedule's zone, the live preview of
 * an expression being typed, the cron syntax card. */

import { api, el } from "./common.js";

/* An outcome word of a schedule's fire, in the state colours. */
const OUTCOME_CLASS = { done: "s-done", failed: "s-failed", missed: "s-failed", queued: "s-ready",
  running: "s-reserved", stale: "s-stale", retrying: "s-retry", skipped: "s-delayed" };
export function outcomeBadge(o) {
  if (!o) return el("span", { class: "muted" }, "—");
  return el("span", { class: "badge " + (OUTCOME_CLASS[o] || "") }, o);
}

/* "2026-12-01T03:00:00+01:00" (a fire in the schedule's own zone) as
 * "2026-12-01 03:00:00 +01:00" (as src/timefmt.c prints times), the zone
 * on hover. */
export function zoned(iso, tz) {
  if (!iso) return el("span", { class: "muted" }, "never");
  const m = iso.match(/^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(.*)$/);
  return el("time", { datetime: iso, title: (tz || "UTC") + " " + iso }, m ? m[1] + " " + m[2] + " " + m[3] : iso);
}

/* Shows in out what the expression typed in input means and its next
 * fires in the zone tzOf() returns (GET /api/cron), as it is typed;
 * onState(ok) hears whether the server accepted it.  Only the newest
 * answer is shown.  Returns a function that asks again (when the zone
 * changes). */
export function cronPreview(input, tzOf, out, onState) {
  let seq = 0, timer = null;
  const run = async () => {
    const mine = ++seq, tz = tzOf() || "UTC";
    const q = new URLSearchParams({ expr: input.value, timezone: tz });
    try {
      const r = await api("/api/cron?" + q);
      if (mine !== seq) return;
      input.removeAttribute("aria-invalid");
      out.replaceChildren(el("p", { id: "preview-desc" }, r.description),
        el("ol", { id: "preview-next", class: "mono" }, r.next.map((t) => el("li", {}, zoned(t, tz)))));
      onState(true);
    } catch (e) {
      if (mine !== seq || e.status === 401) return;
      input.setAttribute("aria-invalid", "true");
      out.replaceChildren(el("p", { class: "field-error", id: "preview-error" }, e.message));
      onState(false);
    }
  };
  const soon = () => { clearTimeout(timer); timer = setTimeout(run, 150); };
  input.addEventListener("input", soon);
  run();
  return soon;
}

/* The cron syntax reference card (static; what src/cron.c accepts). */
export function cronCard() {
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
