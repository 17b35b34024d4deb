/* users.js -- the Users page (/users, and /sessions as it was called;
 * admins only): every dashboard user with its role, where it is kept and
 * its live sessions (/api/sessions); the users kept in the database are
 * added, given a role or a new password and removed here
 * (/api/users/...), the same as `jobq user`.  Those of jobq.ini are
 * changed in the file.  Each form sits in a <details>: an open one holds
 * the live refresh back (app.js), so what is typed is not redrawn away. */

import { act, api, app, el, isAdmin, setMain, shell, toast } from "./common.js";

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

/* A form that posts its fields once: the button is off while the request
 * is in flight, and an error stays under the form. */
function postForm(id, path, fields, label, body, done) {
  const err = el("p", { class: "field-error", role: "alert" });
  const submit = el("button", { type: "submit", class: "primary" }, label);
  return el("form", { id, class: "form", on: { submit: async (ev) => {
    ev.preventDefault();
    if (submit.disabled) return;
    submit.disabled = true;
    try {
      const r = await api(path, body());
      err.textContent = "";
      toast(done(r));
      ev.target.closest("details").open = false;
      await shell.refresh();
    } catch (e) {
      if (e.status !== 401) err.textContent = e.message;
    } finally {
      submit.disabled = false;
    }
  } } }, fields, err, el("div", { class: "row" }, submit));
}

function addUser() {
  const name = el("input", { id: "user-name", name: "user", required: true, maxlength: 64,
    pattern: "[A-Za-z0-9_.\\-]+", autocomplete: "off" });
  const role = el("select", { id: "user-role" }, el("option", { value: "viewer" }, "viewer"),
    el("option", { value: "admin" }, "admin"));
  const pw = el("input", { id: "user-password", type: "password", required: true, minlength: 8,
    autocomplete: "new-password" });
  const f = postForm("user-add", "/api/users/add",
    [el("label", {}, "Name", name), el("label", {}, "Role", role), el("label", {}, "Password (8 characters or more)", pw)],
    "Add user", () => ({ user: name.value.trim(), role: role.value, password: pw.value }),
    (r) => "User " + r.user + " added");
  return el("details", { class: "card", id: "user-add-box" }, el("summary", {}, el("h2", {}, "Add user")), f);
}

/* The actions on a user kept in the database (none on oneself but a new
 * password: an admin cannot demote or remove itself). */
function userActions(u) {
  if (u.source !== "database") return el("span", { class: "muted" }, "in jobq.ini");
  const self = u.user === app.me.user, other = u.role === "admin" ? "viewer" : "admin", b = [];
  if (!self) {
    b.push(el("button", { class: "set-role", on: { click: () =>
      act("/api/users/role", { user: u.user, role: other }, () => u.user + " is now " + other) } }, "Make " + other));
    b.push(el("button", { class: "danger remove-user", on: { click: () => {
      if (confirm("Remove user " + u.user + "? Their sessions end."))
        act("/api/users/remove", { user: u.user }, () => "User " + u.user + " removed");
    } } }, "Remove"));
  }
  const pw = el("input", { type: "password", required: true, minlength: 8, autocomplete: "new-password",
    "aria-label": "New password for " + u.user });
  b.push(el("details", { class: "user-password" }, el("summary", {}, "New password"),
    postForm(null, "/api/users/password", [pw], "Set password", () => ({ user: u.user, password: pw.value }),
      (r) => "New password for " + r.user + (self ? ": log in again" : "; their sessions end"))));
  return el("div", { class: "row" }, b);
}

export async function pageUsers() {
  /* A viewer: one line saying why, not a page that keeps failing */
  if (!isAdmin()) {
    setMain("Users", el("h1", {}, "Users"), el("p", { class: "empty", id: "needs-admin" }, "Users and sessions need the admin role."));
    return;
  }
  const d = await api("/api/sessions");
  setMain("Users",
    el("h1", {}, "Users"),
    el("p", {}, "Users kept in the database are changed here or with jobq user; those of jobq.ini in the file. " +
      "A new password, a removed user or Ending sessions logs the user out of every browser at once."),
    addUser(),
    el("h2", {}, "Everyone who can log in"),
    el("table", { id: "sessions-table" },
      el("thead", {}, el("tr", {}, el("th", {}, "User"), el("th", {}, "Role"),
        el("th", { class: "num" }, "Sessions"), el("th", { class: "wide" }, "Last login (UTC)"),
        el("th", { class: "wide" }, "From"), el("th", {}, ""), el("th", {}, ""))),
      el("tbody", {}, d.users.map((u) => el("tr", { "data-user": u.user },
        el("td", {}, u.user),
        el("td", {}, u.role),
        el("td", { class: "num" }, String(u.sessions)),
        el("td", { class: "wide" }, u.last_login || ""),
        el("td", { class: "wide mono" }, u.last_address || ""),
        el("td", {}, u.sessions === 0 ? null :
          el("button", { class: "end-sessions", on: { click: () => endSessions(u.user) } }, "End sessions")),
        el("td", {}, userActions(u)))))));
}
