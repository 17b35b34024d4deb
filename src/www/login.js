/* login.js -- the login form (/login, and any page while logged out).
 * The shell (app.js) hides its own controls and calls pageLogin with
 * what to do once the person is in. */

import { api, app, el, resetCaches, setMain } from "./common.js";

/* Logs in; a 503 (the server is checking too many logins at once, as
 * under a flood of them) is asked again after its Retry-After, a few
 * times, before it is shown. */
async function login(body) {
  for (let i = 0; ; i++) {
    try {
      return await api("/api/login", body);
    } catch (e) {
      if (e.status !== 503 || i >= 10) throw e;
      await new Promise((ok) => setTimeout(ok, 1000 * Math.min(5, Number(e.retryAfter) || 1)));
    }
  }
}

/* Draws the form; a good user name and password become app.me, then
 * onLogin() starts the dashboard. */
export function pageLogin(onLogin) {
  const msg = el("div", { class: "field-error", id: "login-error", role: "alert" });
  const user = el("input", { name: "user", id: "login-user", autocomplete: "username", required: true });
  const pw = el("input", { name: "password", id: "login-password", type: "password", autocomplete: "current-password", required: true });
  const rem = el("input", { type: "checkbox", name: "remember", id: "login-remember" });
  const f = el("form", { class: "form card login", id: "login-form", on: { submit: async (ev) => {
    ev.preventDefault();
    msg.textContent = "";
    try {
      app.me = await login({ user: user.value, password: pw.value, remember: rem.checked });
      resetCaches();
      if (location.pathname === "/login") history.replaceState(null, "", "/");
      onLogin();
    } catch (e) {
      msg.textContent = e.status === 429 ? "Too many failed attempts; try again in " + (e.retryAfter || "a few") + " seconds."
        : e.status === 401 ? "Wrong user name or password." : e.message;
    }
  } } },
    el("h1", {}, "Log in to jobq"),
    el("label", {}, "User", user), el("label", {}, "Password", pw),
    el("label", { class: "check" }, rem, "Remember me"), msg,
    el("button", { type: "submit", class: "primary", id: "login-submit" }, "Log in"));
  setMain("Log in", f);
  user.focus();
}
