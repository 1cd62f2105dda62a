// Prints bench/peers' side-by-side table from the PEERS_RESULT lines run.sh collected (one JSON object
// per line, each with its round), then the ratios Sluice ÷ best peer against the issue's targets.
// With several rounds the table shows medians, a second table every round, and each ratio is taken
// within a round (same minutes, same background load) before its median is reported.
// Usage: node table.mjs RESULTS.jsonl
import { readFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) {
  console.error('usage: node table.mjs RESULTS.jsonl');
  process.exit(2);
}
const rows = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
for (const r of rows) r.round ??= 1;
const PEERS = ['pg-boss', 'graphile-worker', 'db-scheduler'];
const ORDER = ['raw-insert', 'raw-skip-locked', 'sluice', 'sluice-queue', ...PEERS];
const rounds = [...new Set(rows.map((r) => r.round))].sort((a, b) => a - b);
const systems = [...new Set(rows.map((r) => r.system))].sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));

const fin = (x) => typeof x === 'number' && Number.isFinite(x);
const fmt = (x, d = 0) => (fin(x) ? x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }) : '—');
const median = (xs) => {
  const v = xs.filter(fin).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};
const KEYS = ['enqueue_per_s', 'drain_per_s', 'p50_ms', 'p95_ms', 'p50_no_hint_ms', 'p95_no_hint_ms'];

function notes(rs) {
  const r = rs[rs.length - 1];
  const n = [];
  if (r.version) n.push(r.version);
  if (r.settings) n.push(r.settings);
  const sum = (k) => rs.reduce((a, x) => a + (fin(x[k]) ? x[k] : 0), 0);
  if (sum('duplicates')) n.push(`${sum('duplicates')} duplicate deliveries`);
  if (sum('remaining')) n.push(`${sum('remaining')} left undone`);
  for (const x of rs) if (x.handled !== undefined && x.handled !== x.jobs) n.push(`round ${x.round}: handled ${x.handled} of ${x.jobs}`);
  if (sum('latency_lost')) n.push(`${sum('latency_lost')} pickup jobs never ran`);
  if (sum('latency_early')) n.push(`${sum('latency_early')} pickup handler(s) began before the enqueue call returned (counted as 0 ms)`);
  const p50nh = median(rs.map((x) => x.p50_no_hint_ms));
  if (fin(p50nh)) n.push(`pickup when another process enqueues (no in-process wake-up): p50 ${fmt(p50nh, 2)} ms, p95 ${fmt(median(rs.map((x) => x.p95_no_hint_ms)), 2)} ms`);
  const warnings = [...new Set(rs.flatMap((x) => x.warnings ?? []))];
  if (warnings.length) n.push(`warnings: ${warnings.join(' / ')}`);
  for (const x of rs) if (x.error) n.push(`round ${x.round} error: ${x.error}`);
  return n.join('; ');
}

const header = ['system', 'enqueue jobs/s', 'drain jobs/s', 'pickup p50 ms', 'pickup p95 ms', 'notes'];
const align = '|' + header.map((h, i) => (i >= 1 && i <= 4 ? '---:' : '---')).join('|') + '|';
const merged = {};
for (const s of systems) {
  const rs = rows.filter((r) => r.system === s);
  merged[s] = { system: s };
  for (const k of KEYS) merged[s][k] = median(rs.map((r) => r[k]));
  merged[s].notes = notes(rs);
}
if (rounds.length > 1) console.log(`medians of ${rounds.length} rounds (each round runs every system once; the order rotates between rounds)\n`);
console.log('| ' + header.join(' | ') + ' |');
console.log(align);
for (const s of systems) {
  const m = merged[s];
  console.log('| ' + [s, fmt(m.enqueue_per_s), fmt(m.drain_per_s), fmt(m.p50_ms, 2), fmt(m.p95_ms, 2), m.notes].join(' | ') + ' |');
}
console.log('');

if (rounds.length > 1) {
  const h = ['system', ...rounds.flatMap((k) => [`r${k} enqueue/s`, `r${k} drain/s`, `r${k} p50 ms`])];
  console.log('every round:\n');
  console.log('| ' + h.join(' | ') + ' |');
  console.log('|---|' + h.slice(1).map(() => '---:').join('|') + '|');
  for (const s of systems) {
    const cells = rounds.flatMap((k) => {
      const r = rows.find((x) => x.system === s && x.round === k) ?? {};
      return [fmt(r.enqueue_per_s), fmt(r.drain_per_s), fmt(r.p50_ms, 2)];
    });
    console.log('| ' + [s, ...cells].join(' | ') + ' |');
  }
  console.log('');
}

// Ratios, taken within each round, then the median over rounds.
const TARGETS = [
  { label: 'drain  ', key: 'drain_per_s', lower: false, target: 2, text: 'Sluice ≥ 2× best peer' },
  { label: 'enqueue', key: 'enqueue_per_s', lower: false, target: 1, text: 'Sluice ≥ best peer' },
  { label: 'p50    ', key: 'p50_ms', lower: true, target: 1, text: 'Sluice ≤ best peer (ratio ≤ 1)' },
];
function bestPeer(k, key, lower, useNoHint = false) {
  const c = rows.filter((r) => r.round === k && PEERS.includes(r.system))
    .map((r) => ({ system: r.system, v: useNoHint && fin(r.p50_no_hint_ms) ? r.p50_no_hint_ms : r[key] }))
    .filter((x) => fin(x.v));
  if (c.length === 0) return null;
  return c.reduce((a, b) => ((lower ? b.v < a.v : b.v > a.v) ? b : a));
}
function ratios(key, lower, useNoHint = false) {
  return rounds.map((k) => {
    const s = rows.find((r) => r.round === k && r.system === 'sluice');
    const b = bestPeer(k, key, lower, useNoHint);
    // Another process enqueueing: Sluice too at its figure without the in-process wake-up.
    const v = s && useNoHint && fin(s.p50_no_hint_ms) ? s.p50_no_hint_ms : s?.[key];
    if (!s || !fin(v) || !b) return null;
    return { round: k, sluice: v, best: b, ratio: v / b.v };
  }).filter(Boolean);
}
const dec = (key) => (key.endsWith('ms') ? 2 : 0);
for (const t of TARGETS) {
  const rs = ratios(t.key, t.lower);
  if (rs.length === 0) {
    console.log(`${t.label}: — (missing figures)`);
    continue;
  }
  const med = median(rs.map((r) => r.ratio));
  const met = (x) => (t.lower ? x <= t.target : x >= t.target);
  const per = rs.map((r) => `r${r.round} ${fmt(r.sluice, dec(t.key))} ÷ ${r.best.system} ${fmt(r.best.v, dec(t.key))} = ${r.ratio.toFixed(2)}×`).join('; ');
  const count = rs.filter((r) => met(r.ratio)).length;
  console.log(`${t.label}: Sluice ÷ best peer = ${med.toFixed(2)}×${rs.length > 1 ? ' (median)' : ''} — target ${t.text}: ${met(med) ? 'MET' : 'NOT MET'}${rs.length > 1 ? ` (met in ${count} of ${rs.length} rounds)` : ''} [${per}]`);
}
// Sluice's job queue (issue 6): its drain against the best peer queue, and its pickup.
for (const q of [
  { label: 'queue drain', key: 'drain_per_s', lower: false, target: 1.2, text: 'Sluice queue ≥ 1.2× best peer' },
  { label: 'queue p50', key: 'p50_ms', lower: true, target: 1, text: 'Sluice queue ≤ best peer (ratio ≤ 1)', noHint: true },
]) {
  const qs = rounds.map((k) => {
    const s = rows.find((r) => r.round === k && r.system === 'sluice-queue');
    const b = bestPeer(k, q.key, q.lower, q.noHint);
    if (!s || !fin(s[q.key]) || !b) return null;
    return { round: k, sluice: s[q.key], best: b, ratio: s[q.key] / b.v };
  }).filter(Boolean);
  if (qs.length) {
    const med = median(qs.map((r) => r.ratio));
    const met = (x) => (q.lower ? x <= q.target : x >= q.target);
    const per = qs.map((r) => `r${r.round} ${fmt(r.sluice, dec(q.key))} ÷ ${r.best.system} ${fmt(r.best.v, dec(q.key))} = ${r.ratio.toFixed(2)}×`).join('; ');
    console.log(`${q.label}: Sluice queue ÷ best peer = ${med.toFixed(2)}×${qs.length > 1 ? ' (median)' : ''} — target ${q.text}: ${met(med) ? 'MET' : 'NOT MET'} [${per}]`);
  }
}
// db-scheduler's pickup figure comes from an in-process hint (enableImmediateExecution) that only a
// scheduler scheduling its own jobs gets; say what the comparison is when another process enqueues.
if (rows.some((r) => fin(r.p50_no_hint_ms))) {
  const rs = ratios('p50_ms', true, true);
  if (rs.length) {
    const med = median(rs.map((r) => r.ratio));
    console.log(`p50 if another process enqueues (Sluice and db-scheduler without their in-process wake-up): Sluice ÷ best peer = ${med.toFixed(2)}× [${rs.map((r) => `r${r.round} ${fmt(r.sluice, 2)} ÷ ${r.best.system} ${fmt(r.best.v, 2)}`).join('; ')}]`);
  }
}
const ref = (sys, key) => rounds.map((k) => {
  const s = rows.find((r) => r.round === k && r.system === 'sluice');
  const x = rows.find((r) => r.round === k && r.system === sys);
  return s && x && fin(s[key]) && fin(x[key]) ? s[key] / x[key] : null;
});
const ctx = [];
const ri = median(ref('raw-insert', 'enqueue_per_s'));
const rd = median(ref('raw-skip-locked', 'drain_per_s'));
if (fin(ri)) ctx.push(`Sluice enqueue ÷ raw-insert = ${ri.toFixed(2)}×`);
if (fin(rd)) ctx.push(`Sluice drain ÷ raw-skip-locked = ${rd.toFixed(2)}×`);
if (ctx.length) console.log('references: ' + ctx.join('; '));
