// Line charts as inline SVG, drawn here (no chart library): the last 15 minutes of the dashboard's history.
// Colours come from CSS classes (series-0 ... series-3), so both themes style them.

import {h, s} from './dom.js';
import {num} from './format.js';

const H = 180;
const PAD = {left: 52, right: 12, top: 12, bottom: 24};
export const WINDOW_MS = 15 * 60 * 1000;

/** The columns of /api/v1/history's points. */
export const COL = {at: 0, rate: 1, lag: 2, dead: 3, pending: 4, processing: 5};

/** A round step for 4 grid intervals covering max (1, 2, 2.5, 5 × 10^n; whole numbers for counts). */
function niceStep(max, whole) {
  const raw = max > 0 ? max / 4 : 0.25;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 2.5, 5, 10]) {
    const step = m * p;
    if (step >= raw && (!whole || Number.isInteger(step))) return step;
  }
  return 10 * p;
}

function short(v) {
  if (v >= 1e9) return (v / 1e9).toFixed(v % 1e9 ? 1 : 0) + 'G';
  if (v >= 1e6) return (v / 1e6).toFixed(v % 1e6 ? 1 : 0) + 'M';
  if (v >= 1e4) return (v / 1e3).toFixed(v % 1e3 ? 1 : 0) + 'k';
  if (Number.isInteger(v)) return num(v);
  return v < 10 ? String(Math.round(v * 100) / 100) : v.toFixed(1);
}

function clock(ms) {
  return new Date(ms).toLocaleTimeString(undefined, {hour: '2-digit', minute: '2-digit'});
}

/** The width to draw a chart at in el (its box, so text keeps its size at any width). */
export function widthOf(el) {
  return Math.round(el.clientWidth || (el.parentElement && el.parentElement.clientWidth) || 640);
}

/**
 * A chart of one or more series: chart({title, test, unit, lines: [{label, points, column}]}), where points are
 * history rows ([at_ms, rate, lag, dead, pending, processing]) and column picks the figure of each line.
 * Points with a null figure are gaps.
 */
export function chart({title, test, unit, lines, width, now = Date.now()}) {
  const W = Math.max(280, Math.round(width || 640));
  const from = now - WINDOW_MS;
  const plotted = lines.map((l) => ({
    label: l.label,
    pts: (l.points || []).filter((p) => p[COL.at] >= from).map((p) => [p[COL.at], p[l.column]]),
  }));
  let max = 0;
  let count = 0;
  let whole = true;
  for (const l of plotted) {
    for (const [, v] of l.pts) {
      if (v !== null && v !== undefined) {
        max = Math.max(max, v);
        whole = whole && Number.isInteger(v);
        count++;
      }
    }
  }
  const top = niceStep(max, whole) * 4;
  const x = (t) => PAD.left + ((t - from) / WINDOW_MS) * (W - PAD.left - PAD.right);
  const y = (v) => H - PAD.bottom - (v / top) * (H - PAD.top - PAD.bottom);

  const svg = s('svg', {viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': title,
    dataset: {test, points: count}});
  // grid and y labels
  for (let i = 0; i <= 4; i++) {
    const v = (top / 4) * i;
    const yy = y(v);
    svg.appendChild(s('line', {x1: PAD.left, x2: W - PAD.right, y1: yy, y2: yy, class: 'grid-line'}));
    svg.appendChild(s('text', {x: PAD.left - 6, y: yy + 4, class: 'axis-label end'}, short(v)));
  }
  // x labels: every 5 minutes
  for (let m = 0; m <= 15; m += 5) {
    const t = from + m * 60000;
    svg.appendChild(s('text', {x: x(t), y: H - 6, class: 'axis-label ' + (m === 0 ? 'start' : m === 15 ? 'end' : 'middle')},
      m === 15 ? 'now' : clock(t)));
  }
  plotted.forEach((l, i) => {
    let d = '';
    let pen = false;
    for (const [t, v] of l.pts) {
      if (v === null || v === undefined) {
        pen = false;
        continue;
      }
      d += (pen ? 'L' : 'M') + x(t).toFixed(1) + ' ' + y(v).toFixed(1) + ' ';
      pen = true;
    }
    if (d) svg.appendChild(s('path', {d: d.trim(), class: 'series series-' + (i % 4)}));
    // a lone point shows as a dot
    if (l.pts.filter((p) => p[1] !== null && p[1] !== undefined).length === 1) {
      const [t, v] = l.pts.find((p) => p[1] !== null && p[1] !== undefined);
      svg.appendChild(s('circle', {cx: x(t), cy: y(v), r: 3, class: 'dot series-' + (i % 4)}));
    }
  });
  if (count === 0) {
    svg.appendChild(s('text', {x: W / 2, y: H / 2, class: 'axis-label middle empty-note'},
      W < 460 ? 'No figures yet' : 'No figures yet: the manager takes them on every maintenance pass'));
  }
  const legend = h('ul', {class: 'legend'}, plotted.map((l, i) => {
    const last = [...l.pts].reverse().find((p) => p[1] !== null && p[1] !== undefined);
    return h('li', null, h('span', {class: 'swatch series-' + (i % 4)}), l.label + ': ',
      h('strong', null, last ? short(last[1]) + (unit ? unit : '') : '—'));
  }));
  return h('figure', {class: 'chart-box'}, h('figcaption', null, title), svg, legend);
}
