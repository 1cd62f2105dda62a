// The fleet and maintenance: workers and their instances, the elected manager, whether maintenance is paused,
// each sweep's last run, and the manager's newest figures.

import * as api from './api.js';
import {card, facts, h, pill, renderIfChanged, table, errorText} from './dom.js';
import * as f from './format.js';

export function mount(root) {
  const manager = h('div');
  const workers = h('div');
  const instances = h('div');
  const sweeps = h('div');
  const metrics = h('div');
  root.append(h('h1', null, 'Fleet and maintenance'),
    h('div', {class: 'columns'}, card('Manager', manager, {id: 'fleet-manager'}), card('Workers', workers, {id: 'fleet-workers'})),
    card('Instances', instances, {id: 'fleet-instances'}),
    card('Maintenance sweeps', sweeps, {id: 'fleet-sweeps'}),
    card('Newest figures', metrics, {id: 'fleet-metrics'}));
  return {
    async update() {
      const [fl, m] = await Promise.all([api.get(api.path('fleet')), api.get(api.path('maintenance'))]);
      const now = Date.now();
      renderIfChanged(manager, {m: m.manager, p: m.paused, t: Math.floor(now / 5000)}, () => facts([
        ['Holder', m.manager ? h('strong', null, m.manager.holder) : pill('none elected', 'warn'), 'manager-holder'],
        ['Since', m.manager ? f.time(m.manager.since) : '—'],
        ['Renewed', m.manager ? f.relative(m.manager.renewed_at, now) : '—'],
        ['Lease until', m.manager ? f.time(m.manager.expires_at) : '—'],
        ['Maintenance', m.paused ? pill('paused', 'warn') : pill('running', 'ok'), 'maintenance-state'],
      ], 'manager-facts'));
      renderIfChanged(workers, fl.workers, (rows) => table([
        {title: 'Worker', get: (w) => w.key},
        {title: 'Target', num: true, get: (w) => w.target < 0 ? 'any' : f.num(w.target)},
        {title: 'Live', num: true, get: (w) => f.num(w.live)},
        {title: 'Active', num: true, get: (w) => f.num(w.active)},
        {title: 'State', get: (w) => w.paused ? pill('paused', 'warn') : pill('running', 'ok')},
      ], rows, {test: 'fleet-workers-table', empty: 'No workers.', rowTest: (w) => ({key: w.key})}));
      renderIfChanged(instances, {rows: fl.instances, t: Math.floor(now / 5000)}, ({rows}) => table([
        {title: 'Id', num: true, get: (i) => String(i.id)},
        {title: 'Worker', get: (i) => i.worker},
        {title: 'Holder', get: (i) => i.holder},
        {title: 'State', get: (i) => pill(i.state, i.state === 'active' ? 'ok' : i.state === 'expired' ? 'bad' : 'muted')},
        {title: 'Failures', num: true, get: (i) => f.num(i.failures)},
        {title: 'Renewed', get: (i) => f.relative(i.renewed_at, now)},
        {title: 'Expires', get: (i) => f.relative(i.expires_at, now)},
      ], rows, {test: 'instances-table', empty: 'No instances.'}));
      renderIfChanged(sweeps, m.sweeps, (rows) => table([
        {title: 'Sweep', get: (s) => s.name},
        {title: 'Last run', get: (s) => f.time(s.last_run_at)},
        {title: 'Removed', num: true, get: (s) => f.num(s.removed)},
        {title: 'Took', num: true, get: (s) => s.took_ms === null ? '—' : s.took_ms + ' ms'},
        {title: 'Runs', num: true, get: (s) => f.num(s.runs)},
        {title: 'Failures', num: true, get: (s) => s.failures ? pill(f.num(s.failures), 'warn') : '0'},
        {title: 'Run by', get: (s) => s.run_by || '—'},
        {title: 'Last error', cls: 'error-text', get: (s) => errorText(s.error, 140)},
      ], rows, {test: 'sweeps-table', empty: 'No sweep has run yet.'}));
      renderIfChanged(metrics, m.metrics, (rows) => table([
        {title: 'Kind', get: (x) => x.kind},
        {title: 'Name', get: (x) => x.name},
        {title: 'Taken', get: (x) => f.time(x.taken_at)},
        {title: 'Head', num: true, get: (x) => f.num(x.head)},
        {title: 'Lag', num: true, get: (x) => f.num(x.lag)},
        {title: 'Dead', num: true, get: (x) => f.num(x.dead)},
        {title: 'Pending', num: true, get: (x) => f.num(x.pending)},
        {title: 'Rate', num: true, get: (x) => f.rate(x.rate_per_second)},
      ], rows, {test: 'metrics-table', empty: 'No figures yet.'}));
    },
  };
}
