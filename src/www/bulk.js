/* bulk.js -- an action on every job a list page's filter finds (retry or
 * forget the dead ones, release the stale ones, delete the waiting
 * ones, cancel any, running ones included): it counts them first (/api/bulk/count), asks the person to
 * confirm that exact number, then acts a chunk at a time (/api/bulk),
 * saying how far it got, so a large action never holds the server and
 * can be watched. */

import { api, el, fmtNum, shell, toast } from "./common.js";

const VERBS = {
  retry: ["Retry", "Retried"], forget: ["Forget for good", "Forgot"],
  release: ["Release", "Released"], delete: ["Delete for good", "Deleted"],
  cancel: ["Cancel", "Cancelled"],
};

/* " in queue Q of type T" for the question, from a filter. */
export function matching(f) {
  return (f.queue ? " in queue " + f.queue : "") + (f.type ? " of type " + f.type : "") +
    (f.queue || f.type ? "" : " in every queue");
}

/* A button that runs action on the jobs filter finds ({queue, type,
 * state}); what names them in the question ("dead jobs"). */
export function bulkButton(action, label, what, filter, attrs) {
  return el("button", { ...attrs, on: { click: () => runBulk(action, what, filter) } }, label);
}

/* What a bulk action that stopped part way says, plainly: how many of
 * the jobs confirmed it acted on, why it stopped, and how many it left
 * as they were.  A chunk the server stopped (the session ended, the
 * admin role was taken away as it ran) says in its body how many it did
 * before and how many of the rest are still there ("left", counted
 * then: jobs others acted on meanwhile are not left as they were, and
 * are said apart); refused before it began (between two chunks), only
 * an upper bound is known.  A lost answer (e.unsure) leaves that chunk
 * open, so the rest is not called untouched.  skippedAs says what the
 * skipped ones were (for the dead letter's actions on a selection: gone
 * or refused). */
export function stopped(did, what, done, skipped, total, e, skippedAs = "had changed meanwhile") {
  const why = e.status === 401 ? "your session ended (logged out by an admin, removed, or given a new password)"
    : e.message.replace(/; the jobs after it were left as they were$/, "");
  const head = did + " " + fmtNum(done) + " of " + fmtNum(total) + " " + what +
    (skipped ? " (" + fmtNum(skipped) + " " + skippedAs + ")" : "");
  if (e.unsure) return head + ", then: " + e.message;
  if (!e.status) /* no answer at all (the network): that chunk may have been done */
    return head + ", then stopped: " + e.message + ". Whether the chunk under way was done is not known: look at the page before going on.";
  const rest = Math.max(total - done - skipped, 0);
  if (typeof e.body?.left !== "number")
    return head + ", then stopped: " + why + ". The rest" + (rest ? " (at most " + fmtNum(rest) + ")" : "") + " were left as they were.";
  const gone = rest - e.body.left;
  return head + ", then stopped: " + why + ". The other " + fmtNum(e.body.left) + " were left as they were" +
    (gone > 0 ? " (" + fmtNum(gone) + " more had changed meanwhile)" : "") + ".";
}

/* Asks until the person confirms the count the server holds (a 409 on
 * the first chunk means it changed meanwhile; a cancel of every state
 * goes ahead on fewer, those ended meanwhile counted skipped), then runs
 * the chunks. */
async function runBulk(action, what, filter) {
  const [verb, did] = VERBS[action];
  const body = { action, queue: filter.queue || "", type: filter.type || "", state: filter.state || "" };
  let done = 0, skipped = 0, down = 0, total = null;
  try {
    let c = await api("/api/bulk/count", body), r = null;
    while (r === null) {
      const left = c.unknown_type ? " (" + fmtNum(c.unknown_type) + " more stay: their type or queue is not in the configuration)" : "";
      if (c.count === 0) return toast("No " + what + " match" + left + ".");
      if (!confirm(verb + " " + fmtNum(c.count) + " " + what + left + "?")) return;
      total = c.count;
      try {
        r = await api("/api/bulk", { ...body, count: c.count, upto: c.upto, after: 0 });
      } catch (e) {
        if (e.status !== 409) throw e;
        c = e.body;
        total = null;
      }
    }
    for (;;) {
      done += r.done;
      skipped += r.skipped;
      down += r.down || 0;
      if (r.next_after === null) break;
      toast(did + " " + fmtNum(done) + " of " + fmtNum(total) + "…");
      r = await api("/api/bulk", { ...body, count: c.count, upto: c.upto, after: r.next_after });
    }
    /* a cancel ends the jobs that wait for those it cancels, down the
       graph, though later chunks would have named some of them */
    toast(did + " " + fmtNum(done + down) + " " + what +
      (down ? " (" + fmtNum(down) + " of them because a job they waited for was)" : "") +
      (skipped ? " (" + fmtNum(skipped) + " had changed meanwhile)" : ""));
  } catch (e) {
    if (e.body && typeof e.body.done === "number") { /* a chunk the server stopped part way */
      done += e.body.done;
      skipped += e.body.skipped || 0;
    }
    if (total !== null) toast(stopped(did, what, done, skipped, total, e), true, 20000);
    else if (e.status !== 401) toast((e.unsure ? "" : "Not done: ") + e.message, true);
  }
  await shell.refresh();
}
