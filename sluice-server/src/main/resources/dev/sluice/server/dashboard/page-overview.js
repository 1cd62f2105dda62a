// Overview: streams (produce rate, head), groups (lag, retrying, dead), queues by state, schedules next due,
// the fleet and the manager — all from one request (GET /api/v1/overview).

import * as api from './api.js';
import {card, h, link, pill, renderIfChanged, stat, table} from './dom.js';
import * as f from './format.js';

export function mount(root) {
  const summary = h('div', {class: 'stats', dataset: {test: 'overview-stats'}});
  const streams = h('div');
  const groups = h('div');
  const queues = h('div');
  const schedules = h('div');
  const fleet = h('div');
  root.append(
    h('h1', null, 'Overview'),
    summary,
    h('div', {class: 'columns'},
      card('Streams', streams, {id: 'overview-streams'}),
      card('Consumer groups', groups, {id: 'overview-groups'})),
    h('div', {class: 'columns'},
      card('Queues', queues, {id: 'overview-queues'}),
      card('Schedules', schedules, {id: 'overview-schedules'})),
    card('Fleet', fleet, {id: 'overview-fleet'}));

  return {
    async update() {
      const o = await api.get(api.path('overview'));
      const lag = o.groups.reduce((a, g) => a + (g.lag || 0), 0);
      const dead = o.groups.reduce((a, g) => a + (g.dead || 0), 0);
      const deadJobs = o.queues.reduce((a, q) => a + (q.dead || 0), 0);
      const rateSum = o.streams.reduce((a, s) => a + (s.rate_per_second || 0), 0);
      const live = o.workers.reduce((a, w) => a + (w.live || 0), 0);
      renderIfChanged(summary, {n: o.streams.length, rateSum, lag, dead, deadJobs, live, m: o.manager && o.manager.holder}, () => [
        stat('streams', f.num(o.streams.length), 'stat-streams'),
        stat('produced', f.rate(rateSum), 'stat-rate'),
        stat('total lag', f.num(lag), 'stat-lag'),
        stat('dead letters', f.num(dead), 'stat-dead', dead > 0 ? 'warn' : null),
        stat('dead jobs', f.num(deadJobs), 'stat-dead-jobs', deadJobs > 0 ? 'warn' : null),
        stat('live instances', f.num(live), 'stat-live'),
      ]);
      renderIfChanged(streams, o.streams, (rows) => table([
        {title: 'Stream', get: (s) => link(['streams', s.name], s.name, {dataset: {test: 'stream-link'}})},
        {title: 'Produced', num: true, get: (s) => f.rate(s.rate_per_second)},
        {title: 'Head', num: true, get: (s) => f.num(s.head)},
        {title: 'Retention', get: (s) => s.config.retention ? f.duration(s.config.retention) : 'forever'},
      ], rows, {test: 'streams-table', empty: 'No streams yet.', rowTest: (s) => ({name: s.name})}));
      renderIfChanged(groups, o.groups, (rows) => table([
        {title: 'Group', get: (g) => groupLink(g.name)},
        {title: 'Lag', num: true, get: (g) => f.num(g.lag)},
        {title: 'Retrying', num: true, get: (g) => f.num(g.retrying)},
        {title: 'Dead', num: true, get: (g) => g.dead ? pill(f.num(g.dead), 'warn') : '0'},
        {title: 'Rate', num: true, get: (g) => f.rate(g.rate_per_second)},
      ], rows, {test: 'groups-table', rowTest: (g) => ({name: g.name}),
        empty: 'No figures yet: the manager takes them on each maintenance pass (open a stream to see its groups now).'}));
      renderIfChanged(queues, o.queues, (rows) => table([
        {title: 'Queue', get: (q) => link(['queues', q.name], q.name, {dataset: {test: 'queue-link'}})},
        {title: 'Due', num: true, get: (q) => f.num(q.pending - q.scheduled)},
        {title: 'Scheduled', num: true, get: (q) => f.num(q.scheduled)},
        {title: 'Processing', num: true, get: (q) => f.num(q.processing)},
        {title: 'Waiting', num: true, get: (q) => f.num(q.waiting)},
        {title: 'Dead', num: true, get: (q) => q.dead ? pill(f.num(q.dead), 'warn') : '0'},
      ], rows, {test: 'queues-table', empty: 'No queues yet.', rowTest: (q) => ({name: q.name})}));
      const now = Date.now();
      const due = [...o.schedules].sort((a, b) => String(a.next_due_at).localeCompare(String(b.next_due_at)));
      renderIfChanged(schedules, {due, t: Math.floor(now / 5000)}, () => table([
        {title: 'Schedule', get: (s) => link(['schedules'], s.name)},
        {title: 'When', get: (s) => s.expression},
        {title: 'Target', get: (s) => s.target_kind + ' ' + s.target},
        {title: 'Next due', get: (s) => s.suspended ? pill('suspended', 'muted') : f.relative(s.next_due_at, now)},
      ], due, {test: 'schedules-table', empty: 'No schedules.'}));
      renderIfChanged(fleet, {w: o.workers, m: o.manager, s: o.server}, () => [
        h('p', {class: 'manager', dataset: {test: 'manager'}}, 'Manager: ',
          o.manager ? [h('strong', null, o.manager.holder), ' since ' + f.time(o.manager.since)] : pill('none elected', 'warn'),
          ' · HTTP claims out: ' + f.num(o.server.http_claims), ' · ', link(['fleet'], 'fleet and maintenance')),
        table([
          {title: 'Worker', get: (w) => w.key},
          {title: 'Live', num: true, get: (w) => f.num(w.live)},
          {title: 'Active', num: true, get: (w) => f.num(w.active)},
          {title: 'Target', num: true, get: (w) => w.target < 0 ? 'any' : f.num(w.target)},
          {title: 'State', get: (w) => w.paused ? pill('paused', 'warn') : pill('running', 'ok')},
        ], o.workers, {test: 'workers-table', empty: 'No workers.'}),
      ]);
    },
  };
}

/** A group's metric name is STREAM/GROUP. */
function groupLink(name) {
  const i = name.indexOf('/');
  if (i < 0) return name;
  return link(['groups', name.slice(0, i), name.slice(i + 1)], name, {dataset: {test: 'group-link'}});
}
