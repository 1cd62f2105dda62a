// Locks: who holds each, its fencing token, and when it expires.

import * as api from './api.js';
import {card, h, pill, renderIfChanged, table} from './dom.js';
import * as f from './format.js';

export function mount(root) {
  const list = h('div');
  root.append(h('h1', null, 'Locks'), card(null, list, {id: 'locks'}));
  return {
    async update() {
      const r = await api.get(api.path('locks'));
      const now = Date.now();
      renderIfChanged(list, {rows: r.locks, t: Math.floor(now / 5000)}, ({rows}) => table([
        {title: 'Lock', get: (l) => h('strong', null, l.name)},
        {title: 'State', get: (l) => l.held ? pill('held', 'ok') : pill('free', 'muted')},
        {title: 'Owner', get: (l) => l.owner || '—'},
        {title: 'Fencing token', num: true, get: (l) => f.num(l.fencing_token)},
        {title: 'Acquired', get: (l) => f.time(l.acquired_at)},
        {title: 'Expires', get: (l) => l.held ? h('span', {title: f.time(l.expires_at)}, f.relative(l.expires_at, now)) : '—'},
        {title: 'Updated', get: (l) => f.time(l.updated_at)},
      ], rows, {test: 'locks-table', empty: 'No locks.', rowTest: (l) => ({name: l.name})}));
    },
  };
}
