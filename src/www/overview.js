/* overview.js -- the Overview page (/): the totals by state, the runs
 * per minute of the last hour and a card per queue, with Pause and
 * Resume for an admin.  Trouble shows first: a queue with jobs waiting
 * and no live worker is named at the top and warned on its card, and
 * stale and dead-letter counts that grow take the warning colours; the
 * watchdogs' incidents are listed under the totals.  Drawn by the shell
 * (app.js) from /api/overview and /api/alerts. */

import { STATES, act, api, el, fmtDur, fmtNum, isAdmin, setMain, when } from "./common.js";
import { stackedBars } from "./chart.js";

/* How long a stale or dead-letter count keeps its warning colour after
 * it last grew: long enough to be seen by someone who looks away. */
const GREW_MS = 10 * 60 * 1000;
const WATCHED = ["stale", "failed"];
/* The counters, in a job's order of life; waiting (for other jobs, as
 * `jobq status` counts them) after delayed. */
const COUNTED = [STATES[0], STATES[1], "waiting", ...STATES.slice(2)];

/* What each watched counter ("queue/state", "/state" for the totals)
 * showed, and when it last grew, over the life of the page. */
const seen = new Map();

/* Notes n for key; the time it last grew (0: not since the page opened,
 * or it is back to none). */
function grewAt(key, n) {
  const was = seen.get(key);
  let at = was ? was.grewAt : 0;
  if (was && n > was.n) at = Date.now();
  if (n === 0) at = 0;
  seen.set(key, { n: n, grewAt: at });
  return at;
}

/* A counter.  A stale or dead-letter count that grew in the last
 * GREW_MS, and any stale count at all (a worker died holding jobs), is
 * drawn in the warning colours, with the reason on hover. */
function counter(state, n, key) {
  let warn = null;
  if (WATCHED.includes(state)) {
    const at = grewAt(key + "/" + state, n);
    if (at && Date.now() - at < GREW_MS) warn = "grew " + fmtDur(Date.now() - at) + " ago";
    else if (state === "stale" && n > 0) warn = "jobs whose worker stopped answering";
  }
  return el("div", { class: "counter s-" + state + (warn ? " warn" : ""), title: warn },
    el("b", {}, fmtNum(n)), el("span", {}, state));
}

/* A queue that has jobs to run and no live worker taking from it: they
 * will wait however long nobody looks. */
function unserved(q) {
  return q.workers === 0 && (q.ready > 0 || q.stale > 0);
}

function unservedText(q) {
  const parts = [];
  if (q.ready > 0) parts.push(fmtNum(q.ready) + " ready");
  if (q.stale > 0) parts.push(fmtNum(q.stale) + " stale");
  return "No live worker serves this queue: " + parts.join(" and ") + " waiting";
}

/* The last hour's runs per minute (index 0 the minute now) as a chart
 * with its scales, oldest minute at the left. */
function chart(rpm) {
  const n = rpm.done.length, now = Math.floor(Date.now() / 60000) * 60;
  const d = { start_s: now - (n - 1) * 60, step_s: 60, n: n };
  for (const k of ["done", "retry", "dead"]) d[k] = rpm[k].slice().reverse();
  return stackedBars("Runs per minute over the last hour by outcome", d, ["done", "retry", "dead"]);
}

/* The watchdogs' incidents (/api/alerts): open ones first, then those
 * cleared in the last day; nothing at all when there are none. */
function alerts(a) {
  if (a.alerts.length === 0) return null;
  const t = (iso) => iso ? when(iso.replace("T", " ").replace("Z", "")) : null;
  return [el("h2", {}, "Alerts" + (a.open > 0 ? " (" + a.open + " open)" : "")),
    el("table", { id: "alerts-table" },
      el("thead", {}, el("tr", {}, el("th", {}, "State"), el("th", {}, "Kind / name"),
        el("th", { class: "wide" }, "What"), el("th", {}, "Raised"), el("th", { class: "wide" }, "Cleared"))),
      el("tbody", {}, a.alerts.map((x) => el("tr", { class: x.open ? "alert-open" : "alert-cleared" },
        el("td", {}, el("span", { class: "badge " + (x.open ? "s-dead" : "s-done") }, x.open ? "open" : "cleared")),
        el("td", {}, x.kind + " / " + x.name),
        el("td", { class: "wide" }, x.reason),
        el("td", {}, t(x.raised_at)),
        el("td", { class: "wide" }, x.open ? "—" : t(x.cleared_at))))))];
}

export async function pageOverview() {
  const [d, a] = await Promise.all([api("/api/overview"), api("/api/alerts")]);
  const tot = Object.fromEntries(COUNTED.map((s) => [s, 0]));
  let done = 0;
  for (const q of d.queues) {
    for (const s of COUNTED) tot[s] += q[s];
    done += q.done_last_hour;
  }
  const sum = (k) => d.runs_per_minute[k].reduce((a, b) => a + b, 0);
  setMain("Overview",
    el("h1", {}, "Overview"),
    el("div", { class: "card totals", id: "totals" },
      el("div", { class: "strip" }, COUNTED.map((s) => counter(s, tot[s], ""))),
      el("div", { class: "facts" },
        el("span", {}, fmtNum(done) + " done in the last hour"),
        el("span", { id: "workers-alive" }, fmtNum(d.workers_alive) + " worker" + (d.workers_alive === 1 ? "" : "s") + " alive")),
      d.queues.some(unserved) ? el("p", { class: "warning", id: "unserved" },
        "⚠ Jobs wait with no live worker in: " + d.queues.filter(unserved).map((q) => q.queue).join(", ")) : null),
    alerts(a),
    el("h2", {}, "Runs per minute ", el("a", { class: "more", href: "/charts" }, "more charts")),
    el("div", { class: "card" }, chart(d.runs_per_minute),
      el("div", { class: "legend" },
        el("span", { class: "s-done" }, "■ done " + sum("done")),
        el("span", { class: "s-retry" }, "■ retry " + sum("retry")),
        el("span", { class: "s-dead" }, "■ dead " + sum("dead")))),
    el("h2", {}, "Queues"),
    el("div", { class: "grid" }, d.queues.map((q) =>
      el("div", { class: "card queue" + (unserved(q) ? " unserved" : ""), "data-queue": q.queue },
        el("div", { class: "row" },
          el("a", { class: "queue-name", href: "/jobs?queue=" + encodeURIComponent(q.queue) }, q.queue),
          q.paused ? el("span", { class: "badge s-stale paused" }, "paused") : null,
          isAdmin() ? el("button", { class: q.paused ? "primary pause" : "pause", on: { click: () =>
            act("/api/queues/" + (q.paused ? "resume" : "pause"), { queue: q.queue },
              (r) => "Queue " + r.queue + (r.paused ? " paused: workers take no new job from it" : " resumed")) } },
            q.paused ? "Resume" : "Pause") : null),
        q.description ? el("p", { class: "muted queue-description" }, q.description) : null,
        el("div", { class: "strip" }, COUNTED.map((s) => counter(s, q[s], q.queue))),
        unserved(q) ? el("p", { class: "warning" }, "⚠ " + unservedText(q)) : null,
        el("div", { class: "facts" },
          el("span", {}, fmtNum(q.done_last_hour) + " done last hour"),
          el("span", { class: "serving" }, fmtNum(q.workers) + " live worker" + (q.workers === 1 ? "" : "s")),
          el("span", {}, q.oldest_ready_s === null ? "nothing ready"
            : "oldest ready " + fmtDur(q.oldest_ready_s * 1000) + " ago"))))));
}
