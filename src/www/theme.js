/* theme.js -- the dashboard's colour theme, set before the page is
 * drawn.  A classic script, not a module, on purpose: it runs in <head>
 * before the first paint (a module runs only after the document is
 * parsed, which would flash the other theme).  The Theme button
 * (app.js) switches it later. */
"use strict";

/* The theme is set before the page is drawn: the remembered choice, or
 * the system's. */
(function () {
  try {
    const t = localStorage.getItem("jobq-theme");
    if (t === "light" || t === "dark") document.documentElement.dataset.theme = t;
  } catch (e) { /* storage may be disabled */ }
})();
