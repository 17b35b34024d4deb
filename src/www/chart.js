/* chart.js -- the dashboard's charts, drawn as SVG with their axes: a
 * value scale on the left with round steps, times along the bottom in
 * the configured zone, a title on every bar and point.  Drawn at the
 * width the page has (no stretching, so the text stays legible on a
 * phone) and again on every refresh. */

import { fmtNum, main, svg, zoneTime } from "./common.js";

const H = 170, LEFT = 52, RIGHT = 8, TOP = 10, BOTTOM = 22;

/* A round step (1, 2 or 5 times a power of ten) that cuts 0..max into
 * about four. */
function niceStep(max) {
  const rough = max / 4, mag = Math.pow(10, Math.floor(Math.log10(rough)));
  for (const m of [1, 2, 5, 10]) if (m * mag >= rough) return m * mag;
  return 10 * mag;
}

/* "850 ms", "1.5 s", "2.5 min", "1.2 h": a time scale's labels. */
export function fmtMs(ms) {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return (ms < 10 ? Math.round(ms * 10) / 10 : Math.round(ms)) + " ms";
  if (ms < 60000) return Math.round(ms / 100) / 10 + " s";
  if (ms < 3600000) return Math.round(ms / 6000) / 10 + " min";
  return Math.round(ms / 360000) / 10 + " h";
}

/* The frame every chart shares: the SVG, its plot area and scales.
 * d: { start_s, step_s, n } in Unix seconds; max: the top of the data;
 * whole: the values are counts (no step below 1). */
function frame(label, d, max, fmt, whole) {
  const W = Math.max(280, Math.min(1100, main().clientWidth - 34));
  const s = svg("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img", "aria-label": label });
  const step = whole ? Math.max(1, niceStep(max > 0 ? max : 1)) : niceStep(max > 0 ? max : 1), top = Math.max(step, Math.ceil(max / step) * step);
  const plotW = W - LEFT - RIGHT, plotH = H - TOP - BOTTOM;
  const f = { s: s, W: W, bw: plotW / d.n, x: (i) => LEFT + i * (plotW / d.n), y: (v) => TOP + plotH - (v / top) * plotH };
  for (let v = 0; v <= top + step / 2; v += step) {
    s.append(svg("line", { class: v === 0 ? "axis" : "grid", x1: LEFT, x2: W - RIGHT, y1: f.y(v), y2: f.y(v) }));
    const t = svg("text", { x: LEFT - 6, y: f.y(v) + 4, "text-anchor": "end" });
    t.textContent = fmt(v);
    s.append(t);
  }
  /* about one time label per 110 px, on bucket edges */
  const every = Math.max(1, Math.ceil(d.n / Math.max(2, Math.floor(plotW / 110))));
  const long = d.step_s * d.n > 86400 + 3600;
  for (let i = 0; i <= d.n; i += every) {
    const t = svg("text", { x: f.x(i), y: H - 6, "text-anchor": i === 0 ? "start" : i >= d.n - every / 2 ? "end" : "middle" });
    t.textContent = zoneTime((d.start_s + i * d.step_s) * 1000, long);
    s.append(t);
    s.append(svg("line", { class: "axis", x1: f.x(i), x2: f.x(i), y1: TOP + plotH, y2: TOP + plotH + 4 }));
  }
  return f;
}

function title(node, text) {
  const t = svg("title", {});
  t.textContent = text;
  node.append(t);
  return node;
}

/* When bucket i of d is, for a title: "14:05". */
function bucketName(d, i) {
  return zoneTime((d.start_s + i * d.step_s) * 1000, d.step_s * d.n > 86400 + 3600);
}

/* Stacked bars: keys (["done", "retry", "dead"]) of d, each an array of
 * counts per bucket, drawn with the classes bar-KEY. */
export function stackedBars(label, d, keys) {
  let max = 0;
  for (let i = 0; i < d.n; i++) max = Math.max(max, keys.reduce((a, k) => a + d[k][i], 0));
  const f = frame(label, d, max, fmtNum, true);
  for (let i = 0; i < d.n; i++) {
    let y = f.y(0);
    for (const k of keys) {
      const v = d[k][i];
      if (!v) continue;
      const h = f.y(0) - f.y(v);
      y -= h;
      f.s.append(title(svg("rect", { class: "bar-" + k, x: f.x(i) + 0.5, y: y, width: Math.max(f.bw - 1, 1), height: Math.max(h, 0.5) }),
        `${bucketName(d, i)}: ${fmtNum(v)} ${k}`));
    }
  }
  return f.s;
}

/* Lines: keys (["run_p50", "run_p95"]) of d, times in ms per bucket or
 * null where no run was; a dot on each value, lines between neighbours. */
export function timeLines(label, d, keys) {
  let max = 0;
  for (const k of keys) for (const v of d[k]) if (v !== null) max = Math.max(max, v);
  const f = frame(label, d, max, fmtMs);
  for (const k of keys) {
    let path = "";
    const dots = [];
    d[k].forEach((v, i) => {
      if (v === null) return;
      const x = f.x(i) + f.bw / 2, y = f.y(v);
      path += (i > 0 && d[k][i - 1] !== null ? "L" : "M") + x.toFixed(1) + " " + y.toFixed(1);
      dots.push(title(svg("circle", { class: "dot-" + k, cx: x, cy: y, r: 2.5 }), `${bucketName(d, i)}: ${k.replace("_", " ")} ${fmtMs(v)}`));
    });
    if (path) f.s.append(svg("path", { class: "line-" + k, d: path }));
    f.s.append(...dots);
  }
  return f.s;
}
