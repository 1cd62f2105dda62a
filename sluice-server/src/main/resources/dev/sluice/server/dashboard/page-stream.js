// A stream: its config, its groups (cursor, lag, retrying, dead), a chart of its produce rate, and its
// recent messages (GET .../messages?after=&limit=), paged older and newer.

import * as api from './api.js';
import {card, facts, h, link, pill, renderIfChanged, replace, table} from './dom.js';
import {chart, COL, widthOf} from './chart.js';
import * as f from './format.js';

const LIMIT = 20;

export function mount(root, params, ctx) {
  const name = params[0] || '';
  const info = h('div');
  const groups = h('div');
  const charts = h('div', {class: 'charts'});
  const messages = h('div');
  const pager = h('div', {class: 'pager'});
  // null: follow the newest messages; otherwise the 'after' id the reader chose
  let after = null;
  let head = 0;
  const older = h('button', {type: 'button', class: 'button small', dataset: {test: 'messages-older'}}, '← Older');
  const newer = h('button', {type: 'button', class: 'button small', dataset: {test: 'messages-newer'}}, 'Newer →');
  const latest = h('button', {type: 'button', class: 'button small', dataset: {test: 'messages-latest'}}, 'Latest');
  const where = h('span', {class: 'hint'});
  pager.append(older, newer, latest, where);
  older.addEventListener('click', () => {
    after = Math.max(0, current() - LIMIT);
    ctx.refresh();
  });
  newer.addEventListener('click', () => {
    after = current() + LIMIT;
    if (after + LIMIT >= head) after = null;
    ctx.refresh();
  });
  latest.addEventListener('click', () => {
    after = null;
    ctx.refresh();
  });
  const current = () => (after === null ? Math.max(0, head - LIMIT) : after);

  root.append(
    h('p', {class: 'crumbs'}, link([], 'Overview'), ' / stream'),
    h('h1', {dataset: {test: 'stream-name'}}, name),
    h('div', {class: 'columns'}, card('Config', info, {id: 'stream-config'}), card('Produce rate', charts)),
    card('Consumer groups', groups, {id: 'stream-groups'}),
    card('Recent messages', [pager, messages], {id: 'stream-messages'}));

  const update = async () => {
    const [s, g, hist] = await Promise.all([
      api.get(api.path('streams', name)),
      api.get(api.path('streams', name, 'groups')),
      api.get(api.path('history')),
    ]);
    head = g.groups.reduce((m, x) => Math.max(m, x.head || 0), 0);
    const c = s.config;
    renderIfChanged(info, {s, head}, () => facts([
      ['Id', String(s.id)],
      ['Retention', c.retention ? f.duration(c.retention) : 'forever'],
      ['Partition size', f.num(c.partition_size)],
      ['Drop past committed', c.allow_drop_past_committed ? 'allowed' : 'no'],
      ['Idempotency key TTL', f.duration(c.idempotency_key_ttl)],
      ['Delivery log', c.delivery_log_mode + ' (kept ' + f.duration(c.delivery_log_retention) + ')'],
      ['Largest payload', f.bytes(c.max_payload_bytes)],
      ['Created', f.time(s.created_at)],
      ['Head', f.num(head), 'stream-head'],
    ], 'stream-facts'));
    const points = hist.series['stream:' + name] || [];
    renderIfChanged(charts, {points, w: widthOf(charts)}, ({w}) => chart({width: w, title: 'Messages produced per second, last 15 minutes', test: 'stream-chart',
      unit: '/s', lines: [{label: 'produced', points, column: COL.rate}]}));
    renderIfChanged(groups, g.groups, (rows) => table([
      {title: 'Group', get: (x) => link(['groups', name, x.name], x.name, {dataset: {test: 'group-link'}})},
      {title: 'Committed', num: true, get: (x) => f.num(x.committed)},
      {title: 'Claimed', num: true, get: (x) => f.num(x.claimed)},
      {title: 'Lag', num: true, get: (x) => f.num(x.lag)},
      {title: 'Ready', num: true, get: (x) => f.num(x.ready)},
      {title: 'Deferred', num: true, get: (x) => f.num(x.deferred)},
      {title: 'In flight', num: true, get: (x) => f.num(x.inflight)},
      {title: 'Dead', num: true, get: (x) => x.dead ? pill(f.num(x.dead), 'warn') : '0'},
      {title: 'Concurrency', get: (x) => x.concurrency + (x.partitions ? ' · ' + x.partitions + ' buckets' : '')},
    ], rows, {test: 'stream-groups-table', empty: 'No consumer groups.', rowTest: (x) => ({name: x.name})}));
    // without a group the head is unknown here: read from the beginning
    const from = head > 0 ? current() : (after || 0);
    const m = await api.get(api.query(api.path('streams', name, 'messages'), {after: from, limit: LIMIT}));
    older.disabled = from <= 0;
    newer.disabled = after === null;
    latest.disabled = after === null;
    replace(where, m.messages.length ? 'ids ' + f.num(m.messages[0].id) + '–' + f.num(m.messages[m.messages.length - 1].id)
      + (after === null ? ' (newest, following)' : '') : 'no messages after ' + f.num(from));
    renderIfChanged(messages, m.messages, (rows) => table([
      {title: 'Id', num: true, get: (x) => String(x.id)},
      {title: 'Created', get: (x) => f.time(x.created_at)},
      {title: 'Key', get: (x) => x.message_key || '—'},
      {title: 'Routing key', get: (x) => x.routing_key || '—'},
      {title: 'Type', get: (x) => x.content_type || '—'},
      {title: 'Size', num: true, get: (x) => f.bytes(x.payload_bytes)},
      {title: 'Payload', cls: 'payload', get: (x) => x.payload_text !== undefined
        ? h('code', {title: f.cut(x.payload_text, 2000)}, f.cut(x.payload_text, 160)) : pill('binary', 'muted')},
    ], [...rows].reverse(), {test: 'messages-table', empty: 'No messages here.', rowTest: (x) => ({id: x.id})}));
  };
  return {update};
}
