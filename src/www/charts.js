/* charts.js -- the Charts page (/charts): jobs by outcome, the wait from
 * due to start and the run time (p50 and p95), over the last hour, day
 * or week, for every queue and type or one of each.  From /api/stats,
 * which reads the roll-up `jobq serve` keeps (src/stats.c), so the page
 * costs the same at ten million runs as at ten. */

import { api, el, enqueueOptions, filterForm, fmtNum, navigate, params, select, setMain } from "./common.js";
import { fmtMs, stackedBars, timeLines } from "./chart.js";

const RANGES = [["1h", "Last hour", "minute"], ["24h", "Last 24 hours", "15 minutes"], ["7d", "Last 7 days", "2 hours"]];

function legend(items) {
  return el("div", { class: "legend" }, items.map(([cls, text]) => el("span", { class: cls }, text)));
}

export async function pageCharts() {
  const p = params();
  const range = RANGES.find((r) => r[0] === p.get("range")) || RANGES[0];
  const q = new URLSearchParams({ range: range[0] });
  for (const k of ["queue", "type"]) if (p.get(k)) q.set(k, p.get(k));
  const [d, form] = await Promise.all([api("/api/stats?" + q), enqueueOptions()]);
  d.n = d.done.length;
  const go = (fd) => {
    const n = new URLSearchParams();
    for (const [k, v] of fd) if (v && !(k === "range" && v === "1h")) n.set(k, v.trim());
    navigate("/charts" + (n.toString() ? "?" + n : ""));
  };
  const t = d.total;
  const scope = [p.get("queue") ? "queue " + p.get("queue") : "every queue", p.get("type") ? "type " + p.get("type") : "every type"].join(", ");
  setMain("Charts",
    el("h1", {}, "Charts"),
    filterForm([
      el("label", {}, "Range", el("select", { name: "range" },
        RANGES.map((r) => el("option", { value: r[0], selected: r === range }, r[1])))),
      select("queue", "Queue", form.queues, p.get("queue")),
      el("label", {}, "Type", el("input", { name: "type", value: p.get("type") || "", list: "chart-types", size: 14 })),
      el("datalist", { id: "chart-types" }, form.types.map((x) => el("option", { value: x.type })))], go),
    el("p", { class: "muted", id: "chart-scope" }, range[1] + ", " + scope + ". " +
      (d.behind > 0 ? fmtNum(d.behind) + " newer runs are still being counted." : "Counted up to a few seconds ago.")),
    el("h2", {}, "Jobs per " + range[2]),
    el("div", { class: "card", id: "chart-jobs" },
      stackedBars("Jobs per " + range[2] + " by outcome", d, ["done", "retry", "dead"]),
      legend([["s-done", "■ done " + fmtNum(t.done)], ["s-retry", "■ retried " + fmtNum(t.retry)],
        ["s-dead", "■ dead " + fmtNum(t.dead)]])),
    el("h2", {}, "Wait from due to start"),
    el("div", { class: "card", id: "chart-wait" },
      timeLines("Wait from due to start, p50 and p95 per " + range[2], d, ["wait_p50", "wait_p95"]),
      legend([["p50", "● p50 " + fmtMs(t.wait_p50)], ["p95", "● p95 " + fmtMs(t.wait_p95)]])),
    el("h2", {}, "Run time"),
    el("div", { class: "card", id: "chart-run" },
      timeLines("Run time, p50 and p95 per " + range[2], d, ["run_p50", "run_p95"]),
      legend([["p50", "● p50 " + fmtMs(t.run_p50)], ["p95", "● p95 " + fmtMs(t.run_p95)]])));
}
