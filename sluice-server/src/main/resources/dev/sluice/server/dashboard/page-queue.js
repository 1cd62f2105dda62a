// A queue: its jobs by state (counts and a chart), live jobs of one state (paged), and its dead jobs (paged;
// revive or purge one, or all).

import * as api from './api.js';
import {card, h, link, pill, renderIfChanged, stat, table, errorText} from './dom.js';
import {actionButton, adminNote, n} from './confirm.js';
import {chart, COL, widthOf} from './chart.js';
import * as f from './format.js';
import {pages} from './pager.js';

const PAGE = 20;
const STATES = ['pending', 'processing', 'waiting'];

export function mount(root, params, ctx) {
  const name = params[0] || '';
  const base = api.path('queues', name);
  const figures = h('div', {class: 'stats', dataset: {test: 'queue-stats'}});
  const charts = h('div', {class: 'charts'});
  const tabs = h('div', {class: 'tabs', role: 'tablist'});
  const jobs = h('div');
  const jobsPager = h('div', {class: 'pager'});
  const note = h('div');
  const deadTools = h('div', {class: 'toolbar'});
  const dead = h('div');
  const deadPager = h('div', {class: 'pager'});
  let state = 'pending';
  const jobPages = pages(jobsPager, 'jobs', ctx);
  const deadPages = pages(deadPager, 'dead', ctx);
  for (const st of STATES) {
    const b = h('button', {type: 'button', class: 'tab', role: 'tab', dataset: {test: 'jobs-tab-' + st, state: st}}, st);
    b.addEventListener('click', () => {
      state = st;
      jobPages.reset();
      ctx.refresh();
    });
    tabs.appendChild(b);
  }

  root.append(
    h('p', {class: 'crumbs'}, link([], 'Overview'), ' / queue'),
    h('h1', {dataset: {test: 'queue-name'}}, name),
    figures,
    card('Depth, last 15 minutes', charts),
    card('Live jobs', [tabs, jobs, jobsPager], {id: 'queue-jobs'}),
    card('Dead jobs', [note, deadTools, dead, deadPager], {id: 'queue-dead'}));

  return {
    async update() {
      const [list, j, d, hist] = await Promise.all([
        api.get(api.path('queues')),
        api.get(api.query(base + '/jobs', {state, limit: PAGE, cursor: jobPages.cursor()})),
        api.get(api.query(base + '/dead', {limit: PAGE, cursor: deadPages.cursor()})),
        api.get(api.path('history')),
      ]);
      const q = list.queues.find((x) => x.name === name) || {name, pending: 0, scheduled: 0, processing: 0, waiting: 0, dead: 0};
      renderIfChanged(figures, q, () => [
        stat('due', f.num(q.pending - q.scheduled), 'queue-due'),
        stat('scheduled', f.num(q.scheduled), 'queue-scheduled'),
        stat('processing', f.num(q.processing), 'queue-processing'),
        stat('waiting', f.num(q.waiting), 'queue-waiting'),
        stat('dead', f.num(q.dead), 'queue-dead-count', q.dead > 0 ? 'warn' : null),
      ]);
      const points = hist.series['queue:' + name] || [];
      renderIfChanged(charts, {points, w: widthOf(charts)}, ({w}) => chart({width: w, title: 'Jobs by state', test: 'queue-chart', lines: [
        {label: 'pending', points, column: COL.pending}, {label: 'processing', points, column: COL.processing},
        {label: 'dead', points, column: COL.dead}]}));
      for (const b of tabs.children) {
        b.classList.toggle('active', b.dataset.state === state);
        b.setAttribute('aria-selected', String(b.dataset.state === state));
      }
      jobPages.show(j.next_cursor, j.jobs.length);
      renderIfChanged(jobs, {state, rows: j.jobs}, ({rows}) => table([
        {title: 'Job', num: true, get: (x) => String(x.id)},
        {title: 'State', get: (x) => x.state},
        {title: 'Priority', num: true, get: (x) => String(x.priority)},
        {title: 'Attempts', num: true, get: (x) => x.attempts + ' / ' + x.max_attempts},
        {title: 'Run at', get: (x) => f.time(x.run_at)},
        {title: 'Worker', get: (x) => x.worker_id || '—'},
        {title: 'Unique key', get: (x) => x.unique_key || '—'},
        {title: 'Size', num: true, get: (x) => f.bytes(x.payload_bytes)},
        {title: 'Last error', cls: 'error-text', get: (x) => errorText(x.last_error, 120)},
      ], rows, {test: 'jobs-table', empty: 'No ' + state + ' jobs.', rowTest: (x) => ({id: x.id})}));
      deadPages.show(d.next_cursor, d.dead.length);
      renderIfChanged(note, ctx.admin(), () => adminNote(ctx));
      renderIfChanged(deadTools, {admin: ctx.admin(), count: q.dead}, () => [
        actionButton({label: 'Revive all', test: 'revive-all', ctx,
          confirm: {title: 'Revive every dead job?', text: 'All ' + n('dead job', q.dead) + ' of ' + name
            + ' are queued again with fresh attempts.', ok: 'Revive all'},
          run: () => api.post(base + '/dead:revive', {all: true}), done: (r) => 'Revived ' + n('job', r.revived)}),
        actionButton({label: 'Purge all', test: 'purge-all-jobs', ctx, danger: true,
          confirm: {title: 'Purge every dead job?', text: 'All ' + n('dead job', q.dead) + ' of ' + name
            + ' are deleted for good.', ok: 'Purge all', danger: true},
          run: () => api.post(base + '/dead:purge', {all: true}), done: (r) => 'Purged ' + n('dead job', r.purged)}),
      ]);
      renderIfChanged(dead, {rows: d.dead, admin: ctx.admin()}, ({rows}) => table([
        {title: 'Job', num: true, get: (x) => String(x.id)},
        {title: 'Reason', get: (x) => pill(x.reason, 'warn')},
        {title: 'Attempts', num: true, get: (x) => x.attempts + ' / ' + x.max_attempts},
        {title: 'Last error', cls: 'error-text', get: (x) => errorText(x.last_error, 140)},
        {title: 'Died', get: (x) => f.time(x.died_at)},
        {title: 'Purged after', get: (x) => f.time(x.purge_after)},
        {title: 'Actions', cls: 'actions', get: (x) => [
          actionButton({label: 'Revive', test: 'revive', ctx, small: true,
            confirm: {title: 'Revive job ' + x.id + '?', text: 'It is queued again on ' + name + ' with fresh attempts.',
              detail: x.last_error ? 'Last error: ' + f.cut(x.last_error, 400) : null, ok: 'Revive'},
            run: () => api.post(base + '/dead:revive', {ids: [x.id]}), done: (r) => 'Revived ' + n('job', r.revived)}),
          actionButton({label: 'Purge', test: 'purge-job', ctx, small: true, danger: true,
            confirm: {title: 'Purge job ' + x.id + '?', text: 'The dead job is deleted for good.', ok: 'Purge', danger: true},
            run: () => api.post(base + '/dead:purge', {ids: [x.id]}), done: (r) => 'Purged ' + n('dead job', r.purged)}),
        ]},
      ], rows, {test: 'dead-jobs-table', empty: 'No dead jobs.', rowTest: (x) => ({id: x.id, test: 'dead-job-row'})}));
    },
  };
}
