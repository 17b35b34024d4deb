/* schedule.js -- one schedule's page (/schedules/NAME): its facts, fire
 * history (each fire linking to its job) and, for a database schedule,
 * the admin's form that edits its expression with a live preview and a
 * Remove button (from /api/schedules, /api/cron). */

import { act, api, el, isAdmin, main, navigate, setMain, shell, toast, when } from "./common.js";
import { cronCard, cronPreview, outcomeBadge, zoned } from "./cron.js";

function fireTable(id, fires, withError) {
  if (fires.length === 0) return el("p", { class: "empty", id: id + "-empty" }, "None.");
  return el("table", { id: id },
    el("thead", {}, el("tr", {}, el("th", {}, "Fired"), el("th", {}, "Outcome"), el("th", { class: "num" }, "Job"),
      withError ? el("th", { class: "wide" }, "Error") : null)),
    el("tbody", {}, fires.map((f) => el("tr", {},
      el("td", {}, when(f.fire_at), f.manual ? el("span", { class: "muted small" }, " (run now)") : null),
      el("td", {}, outcomeBadge(f.outcome)),
      el("td", { class: "num" }, f.job ? el("a", { href: "/jobs/" + f.job }, "#" + f.job) : "—"),
      withError ? el("td", { class: "wide" }, el("span", { class: "first-line", title: f.error || "" }, f.error || "")) : null))));
}

export async function pageSchedule(name) {
  /* the list first: a name that is no schedule (a gone one among them)
   * has no history to ask for (a 404) */
  const list = await api("/api/schedules");
  const s = list.schedules.find((x) => x.name === name);
  if (!s || s.gone) {
    /* a gone name (its INI section renamed or removed) has no facts to
     * show: only what it left, which the list's Remove takes away */
    setMain("Schedules", el("h1", {}, "No such schedule"),
      s && s.gone ? el("p", { id: "gone-note" }, el("code", {}, s.name), " is gone from the INI file; ", s.problem || "") : null,
      el("p", {}, el("a", { href: "/schedules" }, "All schedules")));
    return;
  }
  const h = await api("/api/schedules/history?name=" + encodeURIComponent(name));
  const admin = isAdmin();
  const info = [
    el("dl", { class: "kv" },
      el("dt", {}, "Source"), el("dd", {}, s.source === "ini" ? "INI file" : "database"),
      el("dt", {}, "Expression"), el("dd", {}, el("code", {}, s.cron), " — ", s.when || ""),
      s.description ? [el("dt", {}, "Description"), el("dd", {}, s.description)] : null,
      el("dt", {}, "Job"), el("dd", {}, s.type + " on " + s.queue),
      el("dt", {}, "Time zone"), el("dd", {}, s.timezone || "UTC"),
      el("dt", {}, "Next fire"), el("dd", {}, s.enabled ? zoned(s.next_fire, s.timezone) : el("span", { class: "muted" }, "disabled")),
      el("dt", {}, "Last fire"), el("dd", {}, s.last_fire ? [zoned(s.last_fire, s.timezone), " ", outcomeBadge(s.last_outcome)] : "—"),
      el("dt", {}, "Overlap"), el("dd", {}, s.overlap),
      el("dt", {}, "Runs / failures"), el("dd", {}, s.runs + " / " + s.failures + " (skipped " + s.skipped + ", missed " + s.missed + ")"),
      s.problem ? [el("dt", {}, "Problem"), el("dd", { class: "field-error" }, s.problem)] : null),
    admin ? el("div", { class: "row" },
      el("button", { class: "toggle", on: { click: () => act("/api/schedules/" + (s.enabled ? "disable" : "enable"), { name: s.name },
        () => s.name + (s.enabled ? " disabled" : " enabled")) } }, s.enabled ? "Disable" : "Enable"),
      el("button", { class: "run-now", on: { click: async (ev) => {
        /* off while in flight: a double click fires the schedule once */
        const b = ev.currentTarget;
        b.disabled = true;
        try { await act("/api/schedules/run-now", { name: s.name }, (r) => s.name + " enqueued as job " + r.job); }
        finally { b.disabled = false; }
      } } }, "Run now"),
      s.source === "db" ? el("button", { class: "danger", id: "schedule-remove", on: { click: () => removeSchedule(s.name) } }, "Remove")
        : el("span", { class: "muted small", id: "ini-note" }, "Defined in the INI file: edit or remove it there.")) : null,
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
        await shell.refresh();
      } catch (e) {
        if (e.status !== 401) out.replaceChildren(el("p", { class: "field-error", id: "preview-error" }, e.message));
      }
    } } },
      el("h2", {}, "Edit the expression"),
      el("label", { for: "cron-input" }, "Cron expression (" + (s.timezone || "UTC") + ")", input),
      out, el("div", { class: "row" }, save));
    cronPreview(input, () => s.timezone, out, (ok) => { save.disabled = !ok; });
  }
  setMain(name + " · Schedules",
    el("p", {}, el("a", { href: "/schedules" }, "← All schedules")),
    el("h1", {}, name, s.enabled ? null : el("span", { class: "badge s-stale" }, "off")),
    el("div", { class: "card", id: "schedule-info" }, info),
    edit,
    el("div", { id: "schedule-history" }, history),
    cronCard());
}

/* Removes a database schedule with its history, once confirmed, and
 * goes back to the list. */
async function removeSchedule(name) {
  if (!confirm("Remove schedule " + name + "? Its fire history goes with it; jobs it enqueued stay.")) return;
  try {
    await api("/api/schedules/remove", { name: name });
    toast(name + " removed");
    navigate("/schedules");
  } catch (e) {
    if (e.status !== 401) toast(e.message, true);
    if (e.unsure) await shell.refresh(); /* removed, or still here */
  }
}
