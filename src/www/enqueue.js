/* enqueue.js -- the Enqueue page (/enqueue): the admin's form that adds
 * jobs (POST /api/enqueue).  One submit, one set of jobs: the form sends
 * a random submit id, made when it is drawn and renewed after a success,
 * and the server enqueues once per id (a double click, or a resend after
 * a lost answer, gets the first answer back); the button is also off
 * while a request is in flight.  Beside the payload it takes the options
 * of `jobq enqueue` that the server reads for it (priority, max attempts,
 * delay, expires in, a unique key and its window, the jobs to wait for
 * and the policy, a group to join with its callbacks); a refusal is
 * shown under the form, naming the field,
 * until the next submit.  A unique key that is taken enqueues nothing
 * and is said beside the button, with a link to the job that holds it. */

import { api, app, el, enqueueOptions, isAdmin, main, setMain, toast } from "./common.js";

/* What was typed in the form when its submit met a lost session (401):
 * the login form takes the page, and the form drawn once the same user
 * is in again starts from it, with the same submit id (the request never
 * reached a handler), instead of empty.  Another user gets a fresh form. */
let draft = null;

export async function pageEnqueue() {
  if (main().querySelector("#enqueue-form")) return; /* never redraw a form being filled in */
  const form = await enqueueOptions();
  if (!isAdmin()) {
    setMain("Enqueue", el("h1", {}, "Enqueue"), el("p", { class: "empty" }, "Enqueueing needs the admin role."));
    return;
  }
  const type = el("select", { name: "type", id: "enq-type", required: true },
    form.types.map((t) => el("option", { value: t.type }, t.type)));
  const queue = el("select", { name: "queue", id: "enq-queue" }, form.queues.map((q) => el("option", { value: q }, q)));
  const payload = el("textarea", { name: "payload", id: "enq-payload", spellcheck: "false" });
  payload.value = "{}";
  const perr = el("div", { class: "field-error", id: "enq-payload-error" });
  const delay = el("input", { type: "number", name: "delay", id: "enq-delay", min: 0, value: 0 });
  const count = el("input", { type: "number", name: "count", id: "enq-count", min: 1, max: 1000, value: 1 });
  const priority = el("input", { type: "number", name: "priority", id: "enq-priority", min: -32768, max: 32767, value: 0 });
  const attempts = el("input", { type: "number", name: "max_attempts", id: "enq-attempts", min: 1, max: 1000000,
    placeholder: "the handler's" });
  const expires = el("input", { type: "text", name: "expires_in", id: "enq-expires", placeholder: "never (10m, 2h…)",
    autocomplete: "off" });
  const unique = el("input", { type: "text", name: "unique_key", id: "enq-unique", placeholder: "none (order:42…)",
    autocomplete: "off" });
  const uniqueFor = el("input", { type: "text", name: "unique_for", id: "enq-unique-for",
    placeholder: "while queued (1h, 1d…)", autocomplete: "off" });
  const after = el("input", { type: "text", name: "after", id: "enq-after", placeholder: "job ids: 12, 13",
    autocomplete: "off" });
  const policy = el("select", { name: "after_policy", id: "enq-after-policy" },
    [el("option", { value: "all" }, "all done"), el("option", { value: "any" }, "all ended, however")]);
  const group = el("input", { type: "text", name: "group", id: "enq-group", placeholder: "none (import-42…)",
    autocomplete: "off" });
  const callback = (name, id) => el("select", { name, id },
    [el("option", { value: "" }, "none"), ...form.types.map((t) => el("option", { value: t.type }, t.type))]);
  const onComplete = callback("on_complete", "enq-on-complete"), onSuccess = callback("on_success", "enq-on-success");
  const ferr = el("div", { class: "field-error", id: "enq-error", role: "alert" });
  const submit = el("button", { type: "submit", class: "primary", id: "enq-submit" }, "Enqueue");
  let submitId = newSubmitId(), inFlight = false;
  const user = app.me.user,
    fields = { type, queue, payload, delay, count, priority, attempts, expires, unique, uniqueFor, after, policy, group,
      onComplete, onSuccess };
  const pickQueue = () => {
    const t = form.types.find((x) => x.type === type.value);
    if (t) queue.value = t.queue;
  };
  const check = () => {
    try { JSON.parse(payload.value); perr.textContent = ""; submit.disabled = inFlight; return true; }
    catch (e) { perr.textContent = "Not valid JSON: " + e.message; submit.disabled = true; return false; }
  };
  type.addEventListener("change", pickQueue);
  payload.addEventListener("input", check);
  pickQueue();
  if (draft && draft.user === user) {
    for (const k of Object.keys(fields)) fields[k].value = draft.values[k];
    submitId = draft.submitId;
  }
  draft = null;
  const f = el("form", { class: "form card", id: "enqueue-form", on: { submit: async (ev) => {
    ev.preventDefault();
    if (inFlight || !check()) return;
    inFlight = submit.disabled = true;
    ferr.textContent = "";
    const body = { type: type.value, queue: queue.value, payload: payload.value, delay: Number(delay.value),
      count: Number(count.value), priority: Number(priority.value), submit_id: submitId };
    if (attempts.value !== "") body.max_attempts = Number(attempts.value);
    if (expires.value.trim() !== "") body.expires_in = expires.value.trim();
    if (unique.value !== "") body.unique_key = unique.value;
    if (uniqueFor.value.trim() !== "") body.unique_for = uniqueFor.value.trim();
    const ids = after.value.split(/[\s,]+/).filter((x) => x !== "");
    if (ids.some((x) => !/^[0-9]+$/.test(x))) {
      ferr.textContent = "\"after\": job ids separated by commas";
      inFlight = false;
      check();
      return;
    }
    if (ids.length > 0) body.after = ids.map(Number), body.after_policy = policy.value;
    if (group.value !== "") body.group = group.value;
    if (onComplete.value !== "") body.on_complete = onComplete.value;
    if (onSuccess.value !== "") body.on_success = onSuccess.value;
    try {
      const r = await api("/api/enqueue", body);
      submitId = newSubmitId();
      showResult(r, body.group);
    } catch (e) {
      if (e.status !== 401) {
        toast(e.message, true);
        ferr.textContent = e.message;
      } else {
        const values = {};
        for (const k of Object.keys(fields)) values[k] = fields[k].value;
        draft = { user, values, submitId };
      }
    } finally {
      inFlight = false;
      check();
    }
  } } },
    el("label", {}, "Type", type), el("label", {}, "Queue", queue),
    el("label", {}, "Payload (JSON)", payload), perr,
    el("div", { class: "row" }, el("label", {}, "Delay (seconds)", delay), el("label", {}, "Count", count)),
    el("div", { class: "row" }, el("label", {}, "Priority (smaller first)", priority),
      el("label", {}, "Max attempts", attempts), el("label", {}, "Expires in", expires)),
    el("div", { class: "row" }, el("label", {}, "Unique key", unique), el("label", {}, "Key held for", uniqueFor)),
    el("div", { class: "row" }, el("label", {}, "After jobs", after), el("label", {}, "Run once they are", policy)),
    el("div", { class: "row" }, el("label", {}, "Group", group), el("label", {}, "Once all ended, enqueue", onComplete),
      el("label", {}, "Once all done, enqueue", onSuccess)),
    ferr,
    el("div", { class: "row" }, submit, el("span", { id: "enq-result", class: "muted" })));
  setMain("Enqueue", el("h1", {}, "Enqueue"), f);
}

/* The jobs an enqueue of many made: "#7 to #9" when their ids follow
 * one another, else the ids (a few, then how many more); ids need not
 * follow one another (another enqueue's job can come between two). */
function idList(r) {
  const ids = r.ids;
  if (!Array.isArray(ids) || ids.length === 0) return "the first #" + r.first_id;
  if (ids.every((id, i) => id === ids[0] + i)) return "#" + ids[0] + " to #" + ids[ids.length - 1];
  const shown = ids.slice(0, 5).map((id) => "#" + id).join(", ");
  return ids.length > 5 ? shown + " and " + (ids.length - 5) + " more" : shown;
}

/* Says what the enqueue made beside the button: the first job, linked,
 * the group it joined (named by the form: the answer has no group id),
 * and whether it waits or was cancelled at once (a job it waits for had
 * died); or, for a unique key that was taken, the job that holds it. */
function showResult(r, group) {
  const out = document.getElementById("enq-result");
  if (r.refused) {
    toast("Not enqueued: the unique key is taken by job " + r.holder_id, true);
    out.replaceChildren("Not enqueued: the key is held by ", el("a", { href: "/jobs/" + r.holder_id }, "job #" + r.holder_id));
    return;
  }
  toast(r.count === 1 ? "Enqueued job " + r.first_id : "Enqueued " + r.count + " jobs: " + idList(r));
  const note = r.cancelled ? " (cancelled at once: " + r.cancelled + ")"
    : r.waiting_on > 0 ? " (waiting for " + r.waiting_on + (r.waiting_on === 1 ? " job)" : " jobs)") : "";
  const joined = group ? [" in group ", el("a", { href: "/groups/" + encodeURIComponent(group), class: "group-name" }, group)]
    : [];
  out.replaceChildren("Last enqueued: ", el("a", { href: "/jobs/" + r.first_id }, "job #" + r.first_id), ...joined, note);
}

/* A submit id: random, so two forms (two tabs, two people) never share
 * one.  randomUUID needs a secure context (HTTPS or localhost); elsewhere
 * the same 122 random bits come from getRandomValues. */
function newSubmitId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}
