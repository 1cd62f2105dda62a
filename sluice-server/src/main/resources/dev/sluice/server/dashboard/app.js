// The dashboard's shell: hash router, 2-second polling (paused while a confirmation is open or the tab is
// hidden), the caller's role (whoami), the token box, the theme toggle and the error banner.

import * as api from './api.js';
import {h, replace} from './dom.js';
import {confirmOpen} from './confirm.js';
import {initTheme} from './theme.js';
import * as overview from './page-overview.js';
import * as stream from './page-stream.js';
import * as group from './page-group.js';
import * as queue from './page-queue.js';
import * as schedules from './page-schedules.js';
import * as locks from './page-locks.js';
import * as fleet from './page-fleet.js';

const POLL_MS = 2000;
const PAGES = {'': overview, streams: stream, groups: group, queues: queue, schedules, locks, fleet};

const who = {role: null, open: false, error: null};
let current = null; // {page, params, view, generation}
let generation = 0;
let timer = null;
let busy = false;

const ctx = {
  admin: () => who.role === 'admin',
  role: () => who.role,
  refresh: () => schedule(0),
  showError,
  clearError,
};

/** The route of the hash: '#/groups/a/b' → {name: 'groups', params: ['a', 'b']}. */
function parse(hash) {
  const raw = (hash || '').replace(/^#\/?/, '');
  const parts = raw === '' ? [] : raw.split('/').map((p) => {
    try {
      return decodeURIComponent(p);
    } catch (e) {
      return p;
    }
  });
  return {name: parts[0] || '', params: parts.slice(1)};
}

function showError(e) {
  const b = document.getElementById('error-banner');
  const title = e.status === 401 ? 'This server needs a token' : (e.name || 'Error');
  replace(b, h('strong', null, title + (e.code ? ' (' + e.code + ')' : '') + ': '), h('span', null, e.problem || e.message),
    e.fix ? h('div', {class: 'fix'}, 'Fix: ' + e.fix) : null);
  b.dataset.code = e.name || '';
  b.hidden = false;
}

function clearError() {
  const b = document.getElementById('error-banner');
  b.hidden = true;
  replace(b);
}

async function whoami() {
  try {
    const w = await api.get(api.path('whoami'));
    who.role = w.role;
    who.open = !!w.open_mode;
    who.error = null;
  } catch (e) {
    who.role = null;
    who.error = e;
  }
  const pill = document.getElementById('role-pill');
  pill.textContent = who.role ? who.role + (who.open ? ' · open mode' : '') : (who.error && who.error.status === 401 ? 'no token'
    : 'offline');
  pill.className = 'pill ' + (who.role === 'admin' ? 'ok' : who.role ? 'info' : 'bad');
  pill.dataset.role = who.role || '';
  document.getElementById('token-toggle').classList.toggle('attention', !who.role && !!who.error && who.error.status === 401);
}

function navigate() {
  const {name, params} = parse(location.hash);
  const page = PAGES[name];
  generation++;
  clearError();
  document.getElementById('toast').className = 'toast';
  const root = document.getElementById('app');
  replace(root);
  document.querySelectorAll('#nav a').forEach((a) => {
    const here = a.dataset.nav === name || (a.dataset.nav === '' && !PAGES[name]);
    a.classList.toggle('active', here);
    if (here) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  });
  if (!page) {
    current = null;
    root.appendChild(h('section', {class: 'card'}, h('h1', null, 'No such page'), h('p', null, 'Go back to the '),
      h('a', {href: '#/'}, 'overview'), '.'));
    return;
  }
  root.dataset.page = name || 'overview';
  const view = page.mount(root, params, ctx);
  current = {view, generation};
  schedule(0);
}

function schedule(ms) {
  clearTimeout(timer);
  timer = setTimeout(tick, ms);
}

async function tick() {
  if (busy) {
    schedule(200);
    return;
  }
  if (confirmOpen() || document.hidden || !current) {
    schedule(POLL_MS);
    return;
  }
  busy = true;
  const mine = current;
  const status = document.getElementById('live-status');
  try {
    await whoami();
    if (mine.generation !== generation) return;
    await mine.view.update();
    if (mine.generation !== generation) return;
    clearError();
    replace(status, h('span', {class: 'wide-only'}, 'live · '), new Date().toLocaleTimeString());
    status.className = 'live ok';
    status.dataset.updated = String(Date.now());
  } catch (e) {
    if (mine.generation === generation) {
      showError(e);
      status.textContent = e.status === 0 ? 'offline' : 'error';
      status.className = 'live bad';
    }
  } finally {
    busy = false;
    schedule(POLL_MS);
  }
}

function initToken() {
  const box = document.getElementById('token-box');
  const toggle = document.getElementById('token-toggle');
  const input = document.getElementById('token-input');
  toggle.addEventListener('click', () => {
    box.hidden = !box.hidden;
    toggle.setAttribute('aria-expanded', String(!box.hidden));
    if (!box.hidden) input.focus();
  });
  box.addEventListener('submit', (ev) => {
    ev.preventDefault();
    api.setToken(input.value.trim());
    input.value = '';
    box.hidden = true;
    toggle.setAttribute('aria-expanded', 'false');
    navigate();
  });
  document.getElementById('token-clear').addEventListener('click', () => {
    api.setToken('');
    input.value = '';
    navigate();
  });
}

initTheme(document.getElementById('theme-toggle'));
initToken();
window.addEventListener('hashchange', navigate);
document.addEventListener('visibilitychange', () => {
  if (!document.hidden) schedule(0);
});
navigate();
