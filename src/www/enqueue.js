/* enqueue.js -- the Enqueue page (/enqueue): the admin's form that adds
 * jobs (POST /api/enqueue).  One submit, one set of jobs: the form sends
 * a random submit id, made when it is drawn and renewed after a success,
 * and the server enqueues once per id (a double click, or a resend after
 * a lost answer, gets the first answer back); the button is also off
 * while a request is in flight. */

import { api, el, enqueueOptions, isAdmin, main, setMain, toast } from "./common.js";

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
  const submit = el("button", { type: "submit", class: "primary", id: "enq-submit" }, "Enqueue");
  let submitId = newSubmitId(), inFlight = false;
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
  const f = el("form", { class: "form card", id: "enqueue-form", on: { submit: async (ev) => {
    ev.preventDefault();
    if (inFlight || !check()) return;
    inFlight = submit.disabled = true;
    try {
      const r = await api("/api/enqueue", { type: type.value, queue: queue.value, payload: payload.value,
        delay: Number(delay.value), count: Number(count.value), submit_id: submitId });
      submitId = newSubmitId();
      toast(r.count === 1 ? "Enqueued job " + r.first_id : "Enqueued " + r.count + " jobs from #" + r.first_id);
      const out = document.getElementById("enq-result");
      out.replaceChildren("Last enqueued: ", el("a", { href: "/jobs/" + r.first_id }, "job #" + r.first_id));
    } catch (e) {
      if (e.status !== 401) toast(e.message, true);
    } finally {
      inFlight = false;
      check();
    }
  } } },
    el("label", {}, "Type", type), el("label", {}, "Queue", queue),
    el("label", {}, "Payload (JSON)", payload), perr,
    el("div", { class: "row" }, el("label", {}, "Delay (seconds)", delay), el("label", {}, "Count", count)),
    el("div", { class: "row" }, submit, el("span", { id: "enq-result", class: "muted" })));
  setMain("Enqueue", el("h1", {}, "Enqueue"), f);
}

/* A submit id: random, so two forms (two tabs, two people) never share
 * one.  randomUUID needs a secure context (HTTPS or localhost); elsewhere
 * the same 122 random bits come from getRandomValues. */
function newSubmitId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}
