// Schedules: expression, target, next due and last fire; run now, suspend and resume (admin).

import * as api from './api.js';
import {card, h, pill, renderIfChanged, table} from './dom.js';
import {actionButton, adminNote} from './confirm.js';
import * as f from './format.js';

export function mount(root, params, ctx) {
  const note = h('div');
  const list = h('div');
  root.append(h('h1', null, 'Schedules'), card(null, [note, list], {id: 'schedules'}));
  return {
    async update() {
      const r = await api.get(api.path('schedules'));
      const now = Date.now();
      renderIfChanged(note, ctx.admin(), () => adminNote(ctx));
      renderIfChanged(list, {rows: r.schedules, admin: ctx.admin(), t: Math.floor(now / 5000)}, ({rows}) => table([
        {title: 'Schedule', get: (s) => h('strong', null, s.name)},
        {title: 'Expression', get: (s) => h('code', null, s.expression)},
        {title: 'Zone', get: (s) => s.zone},
        {title: 'Target', get: (s) => s.target_kind + ' ' + s.target},
        {title: 'State', get: (s) => s.suspended ? pill('suspended', 'warn') : pill('active', 'ok')},
        {title: 'Next due', get: (s) => s.suspended ? '—' : h('span', {title: f.time(s.next_due_at)}, f.relative(s.next_due_at, now))},
        {title: 'Last fired', get: (s) => s.last_fired_at ? h('span', {title: f.time(s.last_fired_at)},
          f.relative(s.last_fired_at, now)) : 'never'},
        {title: 'Fires', num: true, get: (s) => f.num(s.fires)},
        {title: 'Misfire', get: (s) => s.misfire + (s.misfire === 'catch-up' ? ' (≤ ' + s.catch_up_max + ')' : '')},
        {title: 'Actions', cls: 'actions', get: (s) => [
          actionButton({label: 'Run now', test: 'schedule-run', ctx, small: true,
            confirm: {title: 'Run ' + s.name + ' now?', text: 'Fires once now into ' + s.target_kind + ' ' + s.target
              + '; its regular due times are not changed.', ok: 'Run now'},
            run: () => api.post(api.path('schedules', s.name) + ':run'),
            done: (fire) => 'Fired ' + s.name + (fire.duplicate ? ' (a duplicate of a fire already made)' : '')}),
          s.suspended
            ? actionButton({label: 'Resume', test: 'schedule-resume', ctx, small: true,
              confirm: {title: 'Resume ' + s.name + '?', text: 'It fires again at its next due time.', ok: 'Resume'},
              run: () => api.post(api.path('schedules', s.name) + ':resume'), done: () => 'Resumed ' + s.name})
            : actionButton({label: 'Suspend', test: 'schedule-suspend', ctx, small: true, danger: true,
              confirm: {title: 'Suspend ' + s.name + '?', text: 'It does not fire until resumed.', ok: 'Suspend', danger: true},
              run: () => api.post(api.path('schedules', s.name) + ':suspend'), done: () => 'Suspended ' + s.name}),
        ]},
      ], rows, {test: 'schedules-table', empty: 'No schedules.', rowTest: (s) => ({name: s.name})}));
    },
  };
}
