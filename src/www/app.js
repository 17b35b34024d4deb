/* app.js -- the dashboard's shell, the one script index.html loads (a
 * module; no framework, no build step).  Every page address gets the same
 * index.html; this reads the address, draws that page with its module
 * (overview.js, jobs.js, job.js, history.js, group.js, charts.js, failed.js, workers.js, enqueue.js,
 * schedules.js, schedule.js, users.js, audit.js, login.js) and redraws it every 2 seconds
 * while Live.  The pages share common.js; theme.js sets the theme before
 * the first paint. */

import { api, app, el, isAdmin, main, navigate, resetCaches, shell, toast } from "./common.js";
import { pageAudit } from "./audit.js";
import { pageCharts } from "./charts.js";
import { pageEnqueue } from "./enqueue.js";
import { pageFailed } from "./failed.js";
import { pageGroup, pageGroups } from "./group.js";
import { pageHistory } from "./history.js";
import { pageJob } from "./job.js";
import { pageJobs } from "./jobs.js";
import { pageLogin } from "./login.js";
import { pageOverview } from "./overview.js";
import { pageSchedule } from "./schedule.js";
import { pageSchedules } from "./schedules.js";
import { pageUsers } from "./users.js";
import { pageWorkers } from "./workers.js";

const REFRESH_MS = 2000;

/* ---- routing and refresh ---- */

function route() {
  const path = location.pathname;
  let m;
  if (path === "/") return ["overview", pageOverview];
  if (path === "/jobs") return ["jobs", pageJobs];
  if ((m = path.match(/^\/jobs\/(\d+)$/))) return ["jobs", () => pageJob(m[1])];
  if (path === "/failed") return ["failed", pageFailed];
  if (path === "/history") return ["history", pageHistory];
  if (path === "/groups") return ["groups", pageGroups];
  if ((m = path.match(/^\/groups\/(.+)$/))) return ["groups", () => pageGroup(decodeURIComponent(m[1]))];
  if (path === "/charts") return ["charts", pageCharts];
  if (path === "/workers") return ["workers", pageWorkers];
  if (path === "/enqueue") return ["enqueue", pageEnqueue];
  if (path === "/schedules") return ["schedules", pageSchedules];
  if (path === "/users" || path === "/sessions") return ["users", pageUsers];
  if (path === "/audit") return ["audit", pageAudit];
  if ((m = path.match(/^\/schedules\/([^/]+)$/))) return ["schedules", () => pageSchedule(decodeURIComponent(m[1]))];
  return ["overview", pageOverview];
}

/* Draws the page the address names. */
async function draw() {
  try {
    const [name, fn] = route();
    for (const a of document.querySelectorAll("#nav a"))
      if (a.dataset.page === name) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
    const y = window.scrollY;
    await fn();
    window.scrollTo(0, y);
  } catch (e) {
    /* 401 shows the login form, 503 the banner (common.js) */
    if (e.status !== 401 && e.status !== 503) toast(e.message, true);
  }
}

/* The draw in flight (a promise), null when none; and whether another
 * was asked for while it ran. */
let drawing = null;
let again = false;

/* Redraws the current page; the promise it returns settles once the page
 * shows the address as it is now and the data as they are after the
 * call.  Draws never overlap, and one asked for during another is not
 * dropped: the one in flight may have read the address before a
 * navigation (it would leave the old page under the new address) or the
 * data before an action, so one more draw follows it.  Any number of
 * calls during a draw make that one draw. */
function refresh() {
  if (!app.me) return Promise.resolve();
  again = true;
  if (!drawing) drawing = drawAgain();
  return drawing;
}

async function drawAgain() {
  try {
    while (again && app.me) {
      again = false;
      await draw();
    }
  } finally {
    drawing = null;
  }
}

/* The timer's redraw: one in flight already brings the page up to date. */
function tick() {
  if (!drawing && !document.hidden && !interacting()) refresh();
}

/* A live refresh waits while the person types in a field or reads an
 * opened run output: redrawing would take either away. */
function interacting() {
  const a = document.activeElement;
  return (a && main().contains(a) && /^(INPUT|SELECT|TEXTAREA)$/.test(a.tagName)) ||
    main().querySelector("details[open]") !== null;
}

function stopTimer() {
  clearInterval(app.timer);
  app.timer = null;
}

function setLive(on) {
  app.live = on;
  document.getElementById("live").setAttribute("aria-pressed", on ? "true" : "false");
  document.getElementById("live").textContent = on ? "Live" : "Paused";
  stopTimer();
  if (on) app.timer = setInterval(tick, REFRESH_MS);
}

/* On a narrow screen the menu is a list the Menu button opens; it
 * closes again when a page is chosen. */
function setMenu(open) {
  document.querySelector("header.top").classList.toggle("menu-open", open);
  document.getElementById("menu").setAttribute("aria-expanded", open ? "true" : "false");
}

function start() {
  document.getElementById("nav").hidden = false;
  document.getElementById("menu").hidden = false;
  document.getElementById("live").hidden = false;
  document.getElementById("logout").hidden = false;
  for (const a of document.querySelectorAll("[data-admin]")) a.hidden = !isAdmin();
  document.getElementById("who").textContent = app.me.user + " (" + app.me.role + ")";
  setLive(app.live);
  refresh();
}

/* Logged out: the shell's controls go and the login form comes; once
 * in, start() again. */
function showLogin() {
  stopTimer();
  setMenu(false);
  document.getElementById("nav").hidden = true;
  document.getElementById("menu").hidden = true;
  document.getElementById("live").hidden = true;
  document.getElementById("logout").hidden = true;
  document.getElementById("who").textContent = "";
  pageLogin(start);
}

function currentTheme() {
  const t = document.documentElement.dataset.theme;
  if (t) return t;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

function setupChrome() {
  const theme = document.getElementById("theme");
  /* The symbol always, the word where there is room (app.css). */
  const label = () => {
    const [sym, word] = currentTheme() === "dark" ? ["☀", "Light"] : ["☾", "Dark"];
    theme.replaceChildren(sym, el("span", { class: "label" }, " " + word));
    theme.setAttribute("aria-label", "Switch to " + word.toLowerCase());
  };
  label();
  theme.addEventListener("click", () => {
    const next = currentTheme() === "dark" ? "light" : "dark";
    document.documentElement.dataset.theme = next;
    try { localStorage.setItem("jobq-theme", next); } catch (e) { /* not remembered */ }
    label();
  });
  document.getElementById("live").addEventListener("click", () => setLive(!app.live));
  const menu = document.getElementById("menu");
  menu.addEventListener("click", () => setMenu(menu.getAttribute("aria-expanded") !== "true"));
  document.getElementById("nav").addEventListener("click", (ev) => { if (ev.target.closest("a")) setMenu(false); });
  document.getElementById("logout").addEventListener("click", async () => {
    try { await api("/api/logout", {}); } catch (e) { /* the session is gone either way */ }
    app.me = null;
    history.pushState(null, "", "/login");
    showLogin();
  });
  /* Links inside the app change the page without a reload. */
  document.addEventListener("click", (ev) => {
    const a = ev.target.closest("a[href^='/']");
    if (!a || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.button !== 0 || a.target) return;
    ev.preventDefault();
    navigate(a.getAttribute("href"));
  });
  window.addEventListener("popstate", () => refresh());
}

/* Asks who is logged in and starts the page or the login form.  With
 * the database down (503: the banner says so) it asks again every 2
 * seconds, so a page reloaded during an outage comes up by itself. */
async function whoAmI() {
  try {
    const me = await api("/api/me");
    if (me && me.user) {
      app.me = me;
      resetCaches(); /* the banner may have drawn a time before the zone was known */
      if (location.pathname === "/login") history.replaceState(null, "", "/");
      start();
    } else showLogin();
  } catch (e) {
    if (e.status === 503) setTimeout(whoAmI, REFRESH_MS);
    else toast(e.message, true);
  }
}

async function boot() {
  setupChrome();
  await whoAmI();
}

/* The pages and common.js reach the shell through these, never by import. */
shell.refresh = refresh;
shell.showLogin = showLogin;
document.addEventListener("DOMContentLoaded", boot);
