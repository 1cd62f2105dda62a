// A consumer group: cursor, lag and its chart, in-flight work and open ranges, the retrying rows, the buckets
// of a partitioned group, its dead letters (paged; redrive or purge one, or all) and a rewind.

import * as api from './api.js';
import {card, facts, h, link, renderIfChanged, stat, table, errorText} from './dom.js';
import {actionButton, adminNote, n} from './confirm.js';
import {chart, COL, widthOf} from './chart.js';
import * as f from './format.js';
import {pages} from './pager.js';

const PAGE = 20;

export function mount(root, params, ctx) {
  const [stream, group] = [params[0] || '', params[1] || ''];
  const base = api.path('streams', stream, 'groups', group);
  const figures = h('div', {class: 'stats', dataset: {test: 'group-stats'}});
  const config = h('div');
  const charts = h('div', {class: 'charts'});
  const buckets = h('div');
  const dead = h('div');
  const deadTools = h('div', {class: 'toolbar'});
  const note = h('div');
  const pager = h('div', {class: 'pager'});
  const rewindBox = h('div');
  const deadPages = pages(pager, 'dead', ctx);

  root.append(
    h('p', {class: 'crumbs'}, link([], 'Overview'), ' / ', link(['streams', stream], stream), ' / group'),
    h('h1', {dataset: {test: 'group-name'}}, stream + ' / ' + group),
    figures,
    h('div', {class: 'columns'}, card('Lag and commit rate', charts), card('Config', config, {id: 'group-config'})),
    buckets,
    card('Dead letters', [note, deadTools, dead, pager], {id: 'group-dead'}),
    card('Rewind', rewindBox, {id: 'group-rewind'}));

  const rewind = mountRewind(rewindBox, base, ctx);

  return {
    async update() {
      const [g, d, hist] = await Promise.all([
        api.get(base),
        api.get(api.query(base + '/dead', {limit: PAGE, cursor: deadPages.cursor()})),
        api.get(api.path('history')),
      ]);
      renderIfChanged(figures, [g.claimed, g.committed, g.head, g.lag, g.ready, g.deferred, g.inflight, g.open_ranges, g.dead], () => [
        stat('lag', f.num(g.lag), 'group-lag'),
        stat('committed', f.num(g.committed), 'group-committed'),
        stat('claimed (cursor)', f.num(g.claimed), 'group-claimed'),
        stat('head', f.num(g.head), 'group-head'),
        stat('ready to retry', f.num(g.ready), 'group-ready'),
        stat('deferred', f.num(g.deferred), 'group-deferred'),
        stat('in flight', f.num(g.inflight), 'group-inflight'),
        stat('open ranges', f.num(g.open_ranges), 'group-open-ranges'),
        stat('dead letters', f.num(g.dead), 'group-dead-count', g.dead > 0 ? 'warn' : null),
      ]);
      renderIfChanged(config, g, () => facts([
        ['Concurrency', g.concurrency],
        ['Partitions', g.partitions ? String(g.partitions) : 'not partitioned'],
        ['Bindings', g.bindings && g.bindings.length ? g.bindings.join(', ') : 'every message'],
        ['Max attempts', f.num(g.max_attempts)],
        ['Dead letters kept', f.duration(g.dead_letter_retention)],
        ['Created', f.time(g.created_at)],
      ], 'group-facts'));
      const points = hist.series['group:' + stream + '/' + group] || [];
      renderIfChanged(charts, {points, w: widthOf(charts)}, ({w}) => [
        chart({width: w, title: 'Lag, last 15 minutes', test: 'group-lag-chart', lines: [{label: 'lag', points, column: COL.lag},
          {label: 'dead', points, column: COL.dead}]}),
        chart({width: w, title: 'Committed per second', test: 'group-rate-chart', unit: '/s',
          lines: [{label: 'committed', points, column: COL.rate}]}),
      ]);
      renderIfChanged(buckets, g.buckets || null, (bs) => !bs ? '' : card('Buckets', table([
        {title: 'Bucket', num: true, get: (b) => String(b.bucket)},
        {title: 'Position', num: true, get: (b) => f.num(b.position)},
        {title: 'Lag', num: true, get: (b) => f.num(b.lag)},
        {title: 'Holder', get: (b) => b.holder || '—'},
        {title: 'Lease until', get: (b) => f.time(b.lease_expires_at)},
      ], bs, {test: 'buckets-table'})));
      deadPages.show(d.next_cursor, d.dead_letters.length);
      renderIfChanged(note, ctx.admin(), () => adminNote(ctx));
      rewind();
      renderIfChanged(deadTools, {admin: ctx.admin(), any: g.dead > 0, count: g.dead}, () => [
        actionButton({label: 'Redrive all', test: 'redrive-all', ctx,
          confirm: {title: 'Redrive every dead letter?', text: 'All ' + n('dead letter', g.dead) + ' of ' + stream + ' / '
            + group + ' go back to the group and are delivered again.', ok: 'Redrive all'},
          run: () => api.post(base + '/dead:redrive', {all: true}), done: (r) => 'Redrove ' + n('dead letter', r.redriven)}),
        actionButton({label: 'Purge all', test: 'purge-all', ctx, danger: true,
          confirm: {title: 'Purge every dead letter?', text: 'All ' + n('dead letter', g.dead) + ' of ' + stream + ' / ' + group
            + ' are deleted for good; their messages are not delivered again.', ok: 'Purge all', danger: true},
          run: () => api.post(base + '/dead:purge', {all: true}), done: (r) => 'Purged ' + n('dead letter', r.purged)}),
      ]);
      renderIfChanged(dead, {rows: d.dead_letters, admin: ctx.admin()}, ({rows}) => table([
        {title: 'Message', num: true, get: (x) => String(x.message_id)},
        {title: 'Key', get: (x) => x.message_key || '—'},
        {title: 'Attempts', num: true, get: (x) => f.num(x.attempts)},
        {title: 'Last error', cls: 'error-text', get: (x) => errorText(x.last_error, 140)},
        {title: 'Dead since', get: (x) => f.time(x.dead_at)},
        {title: 'Actions', cls: 'actions', get: (x) => [
          actionButton({label: 'Redrive', test: 'redrive', ctx, small: true,
            confirm: {title: 'Redrive message ' + x.message_id + '?', text: 'It goes back to ' + group
              + ' and is delivered again.', detail: x.last_error ? 'Last error: ' + f.cut(x.last_error, 400) : null, ok: 'Redrive'},
            run: () => api.post(base + '/dead:redrive', {ids: [x.message_id]}),
            done: (r) => 'Redrove ' + n('dead letter', r.redriven)}),
          actionButton({label: 'Purge', test: 'purge', ctx, small: true, danger: true,
            confirm: {title: 'Purge message ' + x.message_id + '?', text: 'The dead letter is deleted for good; the message is '
              + 'not delivered to ' + group + ' again.', ok: 'Purge', danger: true},
            run: () => api.post(base + '/dead:purge', {ids: [x.message_id]}),
            done: (r) => 'Purged ' + n('dead letter', r.purged)}),
        ]},
      ], rows, {test: 'dead-letters-table', empty: 'No dead letters.', rowTest: (x) => ({id: x.message_id, test: 'dead-row'})}));
    },
  };
}

/** The rewind form: to a message id or an ISO-8601 time, with force. Returns what re-renders its button. */
function mountRewind(box, base, ctx) {
  const input = h('input', {type: 'text', id: 'rewind-to', dataset: {test: 'rewind-to'},
    placeholder: 'message id or 2026-01-01T00:00:00Z', spellcheck: 'false', autocomplete: 'off'});
  const force = h('input', {type: 'checkbox', id: 'rewind-force', dataset: {test: 'rewind-force'}});
  const slot = h('span');
  box.append(h('p', {class: 'hint'}, 'Moves the committed cursor to a message id or a time, so the group consumes again from '
    + 'there (or skips ahead). Without force, a rewind is refused while the group has work in flight or retrying.'),
  h('div', {class: 'form-row'}, h('label', {for: 'rewind-to'}, 'To'), input,
    h('label', {class: 'check'}, force, ' force'), slot));
  const target = () => input.value.trim();
  return () => renderIfChanged(slot, ctx.admin(), () => actionButton({label: 'Rewind', test: 'rewind', ctx, danger: true,
    confirm: () => target() ? {title: 'Rewind the group?', text: 'The cursor moves to ' + (/^\d+$/.test(target()) ? 'message id '
      : 'time ') + target() + (force.checked ? ', even with work in flight (force).' : '.'), ok: 'Rewind', danger: true} : null,
    refused: 'Give a message id or an ISO-8601 time to rewind to',
    run: () => {
      const v = target();
      const body = /^\d+$/.test(v) ? {to_id: Number(v)} : {to_time: v};
      body.force = force.checked;
      return api.post(base + ':rewind', body);
    },
    done: (g) => 'Rewound: committed ' + f.num(g.committed) + ', lag ' + f.num(g.lag)}));
}
