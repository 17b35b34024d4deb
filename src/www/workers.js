/* workers.js -- the Workers page (/workers): the worker registry, alive
 * and dead (from /api/workers). */

import { api, el, fmtDur, setMain, when } from "./common.js";

export async function pageWorkers() {
  const d = await api("/api/workers");
  setMain("Workers",
    el("h1", {}, "Workers"),
    d.workers.length === 0 ? el("p", { class: "empty" }, "No worker has registered.") :
      el("table", { id: "workers-table" },
        el("thead", {}, el("tr", {}, el("th", {}, "Host / pid"), el("th", { class: "wide" }, "Queues"),
          el("th", { class: "num wide" }, "Conc."), el("th", { class: "wide" }, "Started"), el("th", {}, "Last seen"),
          el("th", { class: "num" }, "Done / retried / dead"), el("th", { class: "wide" }, "Running"))),
        el("tbody", {}, d.workers.map((w) => el("tr", { class: w.alive ? "" : "dead-worker" },
          el("td", {}, w.host + " / " + w.pid, w.alive ? null : [" ", el("span", { class: "badge s-dead" }, "gone")]),
          el("td", { class: "wide" }, w.queues),
          el("td", { class: "num wide" }, String(w.concurrency)),
          el("td", { class: "wide" }, when(w.started_at)),
          el("td", {}, fmtDur(w.seen_ago_ms) + " ago"),
          el("td", { class: "num" }, w.done + " / " + w.retried + " / " + w.dead),
          el("td", { class: "wide mono" }, w.current_jobs))))));
}
