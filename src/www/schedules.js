/* schedules.js -- the Schedules page (/schedules): every schedule with its
 * description, next and last fire, Enable/Disable and Run now for an
 * admin (from /api/schedules), the gone names (an INI section renamed or
 * taken out) with Remove for an admin, and the admin's form that adds a
 * database schedule (POST /api/schedules/add). */

import { act, api, el, enqueueOptions, fmtDur, isAdmin, main, setMain, shell, toast } from "./common.js";
import { cronCard, cronPreview, outcomeBadge, zoned } from "./cron.js";

function row(s, admin) {
  return el("tr", { "data-name": s.name, class: s.enabled ? "" : "off" },
    el("td", {}, el("a", { href: "/schedules/" + encodeURIComponent(s.name) }, s.name), " ",
      el("span", { class: "muted small" }, s.source === "ini" ? "INI" : "database"),
      s.enabled ? null : [" ", el("span", { class: "badge s-stale" }, "off")],
      s.description ? el("div", { class: "small sched-desc" }, s.description) : null,
      s.problem ? el("div", { class: "field-error" }, s.problem) : null),
    el("td", { class: "wide" }, el("code", {}, s.cron), el("div", { class: "muted small" }, s.when || "")),
    el("td", {}, s.enabled ? zoned(s.next_fire, s.timezone) : el("span", { class: "muted next-off" }, "— disabled"), el("div", { class: "muted small" }, s.timezone || "UTC")),
    el("td", { class: "wide" }, s.last_fire ? [zoned(s.last_fire, s.timezone), " ", outcomeBadge(s.last_outcome)] : el("span", { class: "muted" }, "—")),
    el("td", { class: "num" }, s.runs + " / ", el("span", { class: s.failures ? "mark" : "" }, String(s.failures))),
    admin ? el("td", {}, el("div", { class: "actions" },
      el("button", { class: "toggle", on: { click: () => act("/api/schedules/" + (s.enabled ? "disable" : "enable"), { name: s.name },
        () => s.name + (s.enabled ? " disabled" : " enabled")) } }, s.enabled ? "Disable" : "Enable"),
      el("button", { class: "run-now", on: { click: () => act("/api/schedules/run-now", { name: s.name },
        (r) => s.name + " enqueued as job " + r.job) } }, "Run now"))) : null);
}

/* A gone name ("gone": true): no schedule any more, only the switch and
 * fires its old section left.  An admin removes them here, as a database
 * schedule is removed (POST /api/schedules/remove, which takes gone
 * names as `jobq schedule remove` does); anyone else is told the
 * command. */
function goneRow(s, admin) {
  const remove = () => {
    if (!confirm("Remove what the gone schedule " + s.name + " left? Its switch and fire history go; jobs it enqueued stay.")) return;
    return act("/api/schedules/remove", { name: s.name }, () => s.name + " removed");
  };
  return el("tr", { "data-name": s.name, class: "off gone" },
    el("td", {}, el("span", { class: "gone-name" }, s.name), " ", el("span", { class: "badge s-stale" }, "gone"),
      el("div", { class: "small sched-desc" }, "In neither the INI file nor the database (renamed or removed): its switch and fires are left."),
      admin ? null : el("div", { class: "small gone-cmd" }, "Remove them with ", el("code", {}, "jobq schedule remove " + s.name))),
    el("td", { class: "wide" }, el("span", { class: "muted" }, "—")),
    el("td", {}, el("span", { class: "muted next-off" }, "— gone")),
    el("td", { class: "wide" }, s.last_fire ? [zoned(s.last_fire, "UTC"), " ", outcomeBadge(s.last_outcome)] : el("span", { class: "muted" }, "—")),
    el("td", { class: "num" }, s.runs + " / ", el("span", { class: s.failures ? "mark" : "" }, String(s.failures))),
    admin ? el("td", {}, el("div", { class: "actions" },
      el("button", { class: "danger remove-gone", on: { click: remove } }, "Remove"))) : null);
}

function listOf(d, admin) {
  const rows = d.schedules.map((s) => s.gone ? goneRow(s, admin) : row(s, admin));
  if (rows.length === 0) return el("p", { class: "empty" }, "No schedules. Add one here, as [schedule NAME] in the INI file, or with jobq schedule add.");
  return el("table", { id: "schedules-table" },
    el("thead", {}, el("tr", {}, el("th", {}, "Name"), el("th", { class: "wide" }, "When"), el("th", {}, "Next fire"),
      el("th", { class: "wide" }, "Last fire"), el("th", { class: "num" }, "Runs / fail"),
      admin ? el("th", {}, "") : null)),
    el("tbody", {}, rows));
}

export async function pageSchedules() {
  const d = await api("/api/schedules");
  const admin = isAdmin();
  /* A form being filled in is never redrawn: only the list is. */
  const list = document.getElementById("schedules-list");
  if (list && main().querySelector("#schedule-add")) {
    list.replaceChildren(listOf(d, admin));
    return;
  }
  setMain("Schedules",
    el("h1", {}, "Schedules", el("span", { class: "muted small" }, "runs / failures over the last " + fmtDur(d.window_s * 1000))),
    el("div", { id: "schedules-list" }, listOf(d, admin)),
    admin ? await addForm(d.default_timezone) : null,
    cronCard());
}

/* What the payload box holds, when it is a JSON object (what a job's
 * payload must be); else the reason, for the line under it. */
function payloadProblem(text) {
  try {
    const v = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? "" : "Not a JSON object";
  } catch (e) {
    return "Not valid JSON: " + e.message;
  }
}

/* The admin's form that adds a database schedule: the type from the
 * handler whitelist (GET /api/enqueue, as the Enqueue form), the payload
 * checked as it is typed, the expression previewed in the chosen zone as
 * it is typed.  Empty optional fields are left out so the server's
 * defaults apply (catch-up 1h).  The server checks everything again and
 * its refusal, naming the field, is shown under the form. */
async function addForm(defaultTz) {
  const opts = await enqueueOptions();
  const name = el("input", { id: "add-name", name: "name", required: true, maxlength: 64, autocomplete: "off", spellcheck: "false" });
  const type = el("select", { id: "add-type", name: "type", required: true }, opts.types.map((t) => el("option", { value: t.type }, t.type)));
  const payload = el("textarea", { id: "add-payload", name: "payload", spellcheck: "false" });
  payload.value = "{}";
  const perr = el("div", { class: "field-error", id: "add-payload-error" });
  const cron = el("input", { id: "add-cron", name: "cron", class: "mono", value: "0 * * * *", required: true,
    autocomplete: "off", spellcheck: "false", "aria-describedby": "add-cron-preview" });
  const out = el("div", { id: "add-cron-preview", "aria-live": "polite" });
  const zones = Intl.supportedValuesOf ? Intl.supportedValuesOf("timeZone") : [];
  const tz = el("input", { id: "add-timezone", name: "timezone", list: "add-zones", value: defaultTz || "UTC", autocomplete: "off", spellcheck: "false" });
  const overlap = el("select", { id: "add-overlap", name: "overlap" },
    el("option", { value: "skip" }, "skip while the last runs"), el("option", { value: "allow" }, "allow overlap"));
  const catchUp = el("input", { id: "add-catch-up", name: "catch_up", placeholder: "1h", autocomplete: "off" });
  const desc = el("input", { id: "add-description", name: "description", maxlength: 255 });
  const err = el("p", { class: "field-error", id: "add-error", role: "alert" });
  const submit = el("button", { type: "submit", class: "primary", id: "add-submit" }, "Add schedule");
  let cronOk = false, inFlight = false;
  const update = () => {
    perr.textContent = payloadProblem(payload.value);
    submit.disabled = inFlight || !cronOk || perr.textContent !== "";
  };
  payload.addEventListener("input", update);
  const again = cronPreview(cron, () => tz.value.trim(), out, (ok) => { cronOk = ok; update(); });
  tz.addEventListener("input", again);
  const form = el("form", { id: "schedule-add", class: "form", on: { submit: async (ev) => {
    ev.preventDefault();
    if (submit.disabled) return;
    const body = { name: name.value.trim(), type: type.value, cron: cron.value, payload: payload.value, overlap: overlap.value };
    for (const [k, v] of [["timezone", tz.value.trim()], ["catch_up", catchUp.value.trim()], ["description", desc.value]])
      if (v !== "") body[k] = v;
    inFlight = true;
    update();
    try {
      await api("/api/schedules/add", body);
      err.textContent = "";
      toast("Schedule " + body.name + " added");
      name.value = desc.value = "";
      await shell.refresh();
    } catch (e) {
      if (e.status !== 401) err.textContent = e.message;
    } finally {
      inFlight = false;
      update();
    }
  } } },
    el("p", { class: "muted" }, "Adds a schedule kept in the database. Schedules from the INI file are changed in the file: " +
      "only database schedules can be added or removed here."),
    el("label", {}, "Name", name),
    el("div", { class: "row" }, el("label", {}, "Type", type), el("label", {}, "Overlap", overlap)),
    el("label", {}, "Payload (JSON)", payload), perr,
    el("label", {}, "Cron expression", cron), out,
    el("div", { class: "row" }, el("label", {}, "Time zone", tz), el("label", {}, "Catch up missed fires for", catchUp)),
    el("datalist", { id: "add-zones" }, zones.map((z) => el("option", { value: z }))),
    el("label", {}, "Description", desc),
    err, el("div", { class: "row" }, submit));
  return el("details", { class: "card", id: "schedule-add-box" }, el("summary", {}, el("h2", {}, "Add schedule")), form);
}
