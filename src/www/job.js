/* job.js -- one job's page (/jobs/ID): its details, its group, what it
 * waits for and what waits for it, payload, runs and audit trail, and the
 * admin's actions on it (from /api/jobs/ID), among them "Edit and retry"
 * of a dead job's payload. */

import { act, api, app, badge, dueIn, el, fmtDur, isAdmin, navigate, setMain, shell, toast, when } from "./common.js";

function pretty(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text; }
}

/* A dead job's "Edit and retry": its payload as stored (not reformatted,
 * so an unchanged submit changes nothing), checked as JSON while typed as
 * the Enqueue form does, sent once: the button is off while the request
 * is in flight.  It sits in a <details>: an open one holds the live
 * refresh back (app.js), so the text being edited is not redrawn away.
 * A submit that meets a lost session (401: the login form takes the
 * page) keeps the edited text: once the same user is in again, the
 * job's page opens "Edit and retry" with it. */
let editDraft = null;

function editRetry(j) {
  const user = app.me.user;
  const text = el("textarea", { id: "edit-payload", spellcheck: "false", rows: 8 });
  const restored = editDraft !== null && editDraft.user === user && editDraft.id === j.id;
  text.value = restored ? editDraft.text : j.payload;
  editDraft = null;
  const perr = el("div", { class: "field-error", id: "edit-payload-error" });
  const submit = el("button", { type: "submit", class: "primary", id: "edit-submit" }, "Retry with this payload");
  let inFlight = false;
  const check = () => {
    try { JSON.parse(text.value); perr.textContent = ""; submit.disabled = inFlight; return true; }
    catch (e) { perr.textContent = "Not valid JSON: " + e.message; submit.disabled = true; return false; }
  };
  text.addEventListener("input", check);
  const f = el("form", { class: "form", id: "edit-form", on: { submit: async (ev) => {
    ev.preventDefault();
    if (inFlight || !check()) return;
    inFlight = submit.disabled = true;
    try {
      await act("/api/failed/retry-edited", { id: j.id, payload: text.value },
        () => "Job " + j.id + " is back in the queue with the edited payload");
      if (app.me === null) editDraft = { user, id: j.id, text: text.value }; /* 401: logged out */
    } finally {
      inFlight = false;
      check();
    }
  } } }, el("label", {}, "Payload (JSON)", text), perr, el("div", { class: "row" }, submit));
  return el("details", { id: "edit-retry", class: "card", open: restored }, el("summary", {}, "Edit and retry"), f);
}

const GONE_NOTE = {
  done: "Finished: the job left the queue; its runs keep it until they are pruned (jobq prune).",
  cancelled: "Cancelled: the job left the queue and will not run again; its runs say who cancelled it, and keep it until they are pruned.",
  expired: "Expired: the job was not started before its expiry and never will be; its runs keep it until they are pruned.",
  forgotten: "Forgotten from the dead letter; its runs keep it until they are pruned (jobq prune).",
};

/* A job cancelled because a job it waited for ended otherwise than
 * done: that job, linked, from its run's reason ("cancelled by
 * dependency 12 (dead) at ..."), and the dead job whose retry re-opens
 * it (by), if any. */
function causeOf(j, runs, by) {
  if (j.state !== "cancelled") return null;
  const m = runs.map((r) => /^cancelled by dependency (\d+) \((\w+)\)/.exec(r.error || "")).find(Boolean);
  if (!m) return null;
  return el("p", { class: "muted", id: "cancel-cause" }, "It waited for ", el("a", { href: "/jobs/" + m[1] }, "#" + m[1]),
    ", which ended " + m[2] + ": so it never ran. ", by ? ["Retrying ", el("a", { href: "/jobs/" + by }, "#" + by),
      " from the dead letter re-opens it."] : "It will not run again.");
}

/* A job that left the queue (done, cancelled, expired, or forgotten
 * from the dead letter) is kept as its runs: nothing is left to act on. */
function gone(j) {
  return ["done", "forgotten", "cancelled", "expired"].includes(j.state);
}

/* The buttons of a job still queued.  Delete is not offered for a job
 * that other jobs wait for or that a group counts: it would leave them
 * without its end (the server refuses it too); Cancel ends it for them. */
function jobActions(j, d) {
  if (!isAdmin() || gone(j)) return null;
  const id = j.id, b = [];
  if (j.state === "failed") {
    b.push(el("button", { class: "primary", id: "act-retry", on: { click: () =>
      /* 200 with the job in "refused" when the server kept it dead (its
       * unique key or id is in the queue again): said, as the dead letter
       * list says it */
      act("/api/failed/retry", { ids: [id] }, (r) => r.refused.length ?
        "Job " + id + " stays dead-lettered: " + r.refused[0].error : "Job " + id + " is back in the queue") } }, "Retry"));
    b.push(el("button", { class: "danger", on: { click: () => {
      if (confirm("Forget dead job " + id + " for good?"))
        act("/api/failed/forget", { ids: [id] }, () => "Job " + id + " forgotten");
    } } }, "Forget"));
    return [el("div", { class: "row" }, b), editRetry(j)];
  }
  if (j.state === "ready" || j.state === "delayed")
    b.push(el("button", { class: "primary", id: "act-run", on: { click: () =>
      act("/api/jobs/" + id + "/run-now", {}, () => "Job " + id + " is due now") } }, "Run now"));
  if (j.state === "stale")
    b.push(el("button", { on: { click: () =>
      act("/api/jobs/" + id + "/release", {}, () => "Job " + id + " released") } }, "Release"));
  b.push(el("button", { class: "danger", id: "act-cancel", on: { click: () => {
    if (confirm("Cancel job " + id + " (" + j.type + ")?" + (j.state === "reserved" ? " Its handler will be stopped." : "")))
      act("/api/jobs/" + id + "/cancel", {}, (r) => r.state === "requested" ?
        "Job " + id + ": its worker is stopping it" : "Job " + id + " cancelled");
  } } }, "Cancel"));
  if (j.state !== "reserved" && !d.group && !(d.dependents || []).length)
    b.push(el("button", { class: "danger", id: "act-delete", on: { click: () => {
      if (confirm("Delete job " + id + " (" + j.type + ")? It will not run."))
        api("/api/jobs/" + id + "/delete", {}).then(() => {
          toast("Job " + id + " deleted");
          navigate("/jobs"); /* its own page would only say it is gone */
        }, (e) => {
          if (e.status !== 401) toast(e.message, true);
          if (e.unsure) shell.refresh(); /* gone, or still here */
        });
    } } }, "Delete"));
  return el("div", { class: "row" }, b);
}

function kv(pairs) {
  return el("dl", { class: "kv" }, pairs.filter((p) => p[1] !== null && p[1] !== undefined && p[1] !== "")
    .map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
}

/* Jobs as links, each with its state: what the job waits for, or the
 * jobs that wait for it. */
function depList(id, deps) {
  return el("ul", { class: "links", id: id }, deps.map((x) =>
    el("li", {}, el("a", { href: "/jobs/" + x.id }, "#" + x.id), " ", badge(x.state))));
}

/* The rule of jobq(1) for a dead job: retrying it from the dead letter
 * re-opens the jobs its death cancelled (and theirs, down the graph):
 * they wait for it again.  Those of policy any were released and ran;
 * a retry does not run them again.  Said where the Retry button is, with
 * the jobs it re-opens. */
function retryNote(j, reopens) {
  if (j.state !== "failed" || reopens.length === 0) return null;
  const n = reopens.length;
  return el("p", { class: "warning", id: "retry-note" },
    "Retrying this job re-opens the " + (n === 1 ? "job" : n + " jobs") + " its death cancelled (",
    reopens.map((x, i) => [i ? ", " : "", el("a", { href: "/jobs/" + x.id }, "#" + x.id)]),
    ") and theirs down the graph: they wait for it again.");
}

/* What the job waits for and the jobs that wait for it, linked. */
function links(d) {
  const after = d.waits_for || [], by = d.dependents || [];
  return [after.length ? [el("h2", {}, "Waits for"), depList("waits-for", after)] : null,
    by.length ? [el("h2", {}, "Dependents"), el("p", { class: "muted" }, "Jobs that wait for this one."),
      depList("dependents", by)] : null];
}

/* The follow-up jobs its handler enqueued with the done outcome (fd 3),
 * linked: they may be queued, dead, or done and kept as their runs. */
function followUps(runs) {
  const ids = runs.flatMap((r) => r.follow_ups || []);
  if (ids.length === 0) return null;
  return [el("h2", {}, "Follow-ups"),
    el("p", { id: "follow-ups" }, ids.map((id, i) => [i ? ", " : "", el("a", { href: "/jobs/" + id }, "#" + id)]))];
}

export async function pageJob(id) {
  let d;
  try {
    d = await api("/api/jobs/" + id);
  } catch (e) {
    if (e.status !== 404) throw e;
    setMain("Job " + id, el("h1", {}, "Job " + id),
      el("p", { class: "empty" }, "Job " + id + " is not in the queue or the dead letter, and no runs of it are kept: " +
        "it was deleted, its runs were pruned, or it never was."));
    return;
  }
  const j = d.job;
  setMain("Job " + id,
    el("h1", {}, "Job #" + j.id, badge(j.state), el("span", { class: "muted" }, j.type)),
    jobActions(j, d),
    retryNote(j, d.reopens_on_retry || []),
    gone(j) ? el("p", { class: "muted", id: "gone-note" }, GONE_NOTE[j.state]) : null,
    causeOf(j, d.runs, d.reopened_by_retry_of),
    el("h2", {}, "Details"),
    el("div", { class: "card" }, kv([
      ["Queue", j.queue], ["Type", j.type],
      ["Group", d.group ? el("a", { href: "/groups/" + d.group.id, id: "job-group", class: "group-name" },
        d.group.name || "#" + d.group.id) : null],
      ["Priority", j.priority !== undefined ? String(j.priority) : null],
      ["Attempts", gone(j) ? String(j.attempts) : j.attempts + " of " + (j.max_attempts || "—")],
      ["Unique key", j.unique_key],
      ["Trace", j.traceparent ? el("span", { class: "mono", id: "traceparent" }, j.traceparent) : null],
      ["Progress", j.progress !== undefined ? el("span", { id: "progress" },
        el("progress", { max: 100, value: j.progress }), " " + j.progress + "%" + (j.progress_note ? " " + j.progress_note : "")) : null],
      ["Created", j.created_at ? when(j.created_at) : null],
      ["Available", j.available_at ? el("span", {}, when(j.available_at), " (" + dueIn(j.available_in_ms) + ")") : null],
      ["Not before", j.not_before ? el("span", { id: "not-before" }, when(j.not_before)) : null],
      ["Reserved by", j.reserved_by], ["Reserved at", j.reserved_at ? when(j.reserved_at) : null],
      ["Lease expires", j.lease_expires_at ? when(j.lease_expires_at) : null],
      ["Cancel", j.cancel_requested_by ? el("span", { id: "cancel-requested" }, "requested by " + j.cancel_requested_by +
        " at ", when(j.cancel_requested_at), j.state === "reserved" ? ": its worker is stopping it"
          : ": it ends cancelled, unstarted, when next claimed") : null],
      ["Expires", j.expires_at && !j.cancel_requested_by ? el("span", { id: "expires" }, when(j.expires_at),
        " (it never starts after)") : null],
      ["Next backoff", j.next_backoff_ms === undefined ? null : j.next_backoff_ms === null ?
        "none: attempt " + j.next_backoff_attempt + " is its last" :
        fmtDur(j.next_backoff_ms) + " if attempt " + j.next_backoff_attempt + " fails"],
      ["Failed at", j.failed_at ? when(j.failed_at) : null], ["Exit status", j.exit_status], ["Reason", j.reason],
    ])),
    links(d),
    el("h2", {}, "Payload"), j.payload === null ?
      el("p", { class: "empty", id: "payload" }, j.state === "done" ?
        "Not kept: over 64 KiB, or done before jobq kept payloads." : "Not kept: only a done job's payload is.") :
      el("pre", { id: "payload" }, pretty(j.payload)),
    j.checkpoint ? [el("h2", {}, "Checkpoint"), el("p", { class: "muted" }, "Saved by the handler; the next attempt gets it as JOBQ_CHECKPOINT."),
      el("pre", { id: "checkpoint" }, pretty(j.checkpoint))] : null,
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
        el("td", {}, r.error ? el("details", {}, el("summary", {}, "stderr: " + (r.error_summary || "")), el("pre", {}, r.error)) : null,
          r.output ? el("details", {}, el("summary", {}, "stdout"), el("pre", {}, r.output)) : null,
          r.result ? el("details", {}, el("summary", {}, "result"), el("pre", { class: "result" }, pretty(r.result))) : null,
          r.trace_id ? el("details", { class: "trace" }, el("summary", {}, "trace"),
            el("pre", { class: "mono" }, "trace " + r.trace_id + "\nspan  " + (r.span_id || ""))) : null))))),
    followUps(d.runs),
    el("h2", {}, "Audit"),
    d.audit.length === 0 ? el("p", { class: "empty" }, "No admin actions on this job.") :
      el("table", { id: "audit" }, el("tbody", {}, d.audit.map((a) => el("tr", {},
        el("td", {}, when(a.at)), el("td", {}, a.user),
        el("td", { class: "action" }, a.count ? a.action + " (one of " + a.count + " jobs)" : a.action),
        el("td", { class: "wide" }, a.detail), a.address !== undefined ? el("td", { class: "wide mono" }, a.address) : null)))));
}
