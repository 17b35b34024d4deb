/* sessions.js -- the Sessions page (/sessions, admins only): each
 * dashboard user, its role and live sessions (from /api/sessions), and a
 * button that logs the user out everywhere (/api/sessions/end). */

import { act, api, app, el, setMain, shell, toast } from "./common.js";

/* Ends every session of user, after asking.  Ending one's own ends this
 * browser's too: the login form comes at once, before a refresh would
 * ask with the dead session. */
async function endSessions(user) {
  if (!confirm("End every session of " + user + "?")) return;
  if (user !== app.me.user) {
    act("/api/sessions/end", { user }, (r) => "Ended " + r.ended + " session(s) of " + user);
    return;
  }
  try {
    await api("/api/sessions/end", { user });
  } catch (e) {
    if (e.status !== 401) toast(e.message, true);
    return;
  }
  app.me = null;
  shell.showLogin();
  toast("Every session of yours was ended: log in again");
}

export async function pageSessions() {
  const d = await api("/api/sessions");
  setMain("Sessions",
    el("h1", {}, "Sessions"),
    el("p", {}, "Ending a user's sessions logs the user out of every browser at once. " +
      "A new password hash or a removed user does the same by itself."),
    el("table", { id: "sessions-table" },
      el("thead", {}, el("tr", {}, el("th", {}, "User"), el("th", {}, "Role"),
        el("th", { class: "num" }, "Sessions"), el("th", { class: "wide" }, "Last login (UTC)"),
        el("th", { class: "wide" }, "From"), el("th", {}, ""))),
      el("tbody", {}, d.users.map((u) => el("tr", {},
        el("td", {}, u.user),
        el("td", {}, u.role),
        el("td", { class: "num" }, String(u.sessions)),
        el("td", { class: "wide" }, u.last_login || ""),
        el("td", { class: "wide mono" }, u.last_address || ""),
        el("td", {}, u.sessions === 0 ? null :
          el("button", { class: "end-sessions", on: { click: () => endSessions(u.user) } }, "End sessions")))))));
}
