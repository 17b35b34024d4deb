/* sessions.js -- the Sessions page (/sessions, admins only): each
 * dashboard user, its role and live sessions (from /api/sessions), and a
 * button that logs the user out everywhere (/api/sessions/end). */

import { act, api, el, setMain } from "./common.js";

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
          el("button", { class: "end-sessions", on: { click: () => {
            if (confirm("End every session of " + u.user + "?"))
              act("/api/sessions/end", { user: u.user }, (r) => "Ended " + r.ended + " session(s) of " + u.user);
          } } }, "End sessions")))))));
}
