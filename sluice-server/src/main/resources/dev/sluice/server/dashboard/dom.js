// Small DOM helpers. Everything the server sends is hostile input: text goes in through textContent
// (or attribute values set one by one), never through innerHTML or markup strings.

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * Makes an element: h('a', {href: '#/', class: 'x', dataset: {test: 'y'}, onclick: fn}, 'text', child, ...).
 * Strings and numbers become text nodes; null, undefined and false children are skipped; arrays are flattened.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

/** Like h() but in the SVG namespace (for charts). */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

function apply(el, attrs) {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'dataset') {
      for (const [dk, dv] of Object.entries(v)) {
        if (dv !== null && dv !== undefined) el.dataset[dk] = String(dv);
      }
    } else if (k.startsWith('on') && typeof v === 'function') {
      el.addEventListener(k.slice(2), v);
    } else if (k === 'class') {
      el.setAttribute('class', String(v));
    } else if (k === 'text') {
      el.textContent = String(v);
    } else if (k === 'style') {
      throw new Error('no inline styles (the content policy refuses them): use a class');
    } else if (v === true) {
      el.setAttribute(k, '');
    } else {
      el.setAttribute(k, String(v));
    }
  }
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replaces the children of el with the given ones. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/**
 * Renders into el only when the data differ from what it last showed (so a poll that brings nothing new
 * leaves the page alone: no flicker, no lost scroll, no stale buttons under the pointer).
 */
export function renderIfChanged(el, data, render) {
  const key = JSON.stringify(data);
  if (el.dataset.rendered === key) return false;
  el.dataset.rendered = key;
  replace(el, render(data));
  return true;
}

/** A link to a dashboard route made of segments, each encoded: link(['streams', name], text). */
export function link(segments, text, attrs) {
  return h('a', Object.assign({href: route(segments)}, attrs || {}), text);
}

/** The hash of a route: route(['groups', 's', 'g']) → '#/groups/s/g'. */
export function route(segments) {
  return '#/' + segments.map((x) => encodeURIComponent(String(x))).join('/');
}

/**
 * A table: columns [{title, get: row → Node|string|number, cls, num}], rows, options {test, empty, rowTest}.
 * Wrapped in a scroller so wide tables scroll at phone width instead of breaking the layout.
 */
export function table(columns, rows, opts = {}) {
  const head = h('tr', null, columns.map((c) => h('th', {class: c.num ? 'num' : null, scope: 'col'}, c.title)));
  const body = h('tbody');
  if (!rows || rows.length === 0) {
    body.appendChild(h('tr', {class: 'empty'}, h('td', {colspan: columns.length}, opts.empty || 'Nothing here.')));
  } else {
    for (const r of rows) {
      const tr = h('tr', {dataset: opts.rowTest ? opts.rowTest(r) : null});
      for (const c of columns) {
        const v = c.get(r);
        tr.appendChild(h('td', {class: [c.num ? 'num' : '', c.cls || ''].join(' ').trim() || null, dataset: {label: c.title}}, v));
      }
      body.appendChild(tr);
    }
  }
  return h('div', {class: 'table-scroll'},
    h('table', {class: 'grid', dataset: {test: opts.test}}, h('thead', null, head), body));
}

/** A definition list of [label, value] pairs. */
export function facts(pairs, test) {
  return h('dl', {class: 'facts', dataset: {test}}, pairs.map(([k, v, t]) => [
    h('dt', null, k), h('dd', {dataset: {test: t}}, v === null || v === undefined || v === '' ? '—' : v),
  ]));
}

/** A card with a title and a body. */
export function card(title, body, attrs) {
  return h('section', Object.assign({class: 'card'}, attrs || {}), title ? h('h2', null, title) : null, body);
}

/** A big figure of the summary strip. */
export function stat(label, value, test, tone) {
  return h('div', {class: 'stat' + (tone ? ' ' + tone : ''), dataset: {test}},
    h('div', {class: 'stat-value'}, value === null || value === undefined ? '—' : value),
    h('div', {class: 'stat-label'}, label));
}

/** A small status pill. */
export function pill(text, tone) {
  return h('span', {class: 'pill ' + (tone || '')}, text);
}

/** An error text cut to n characters (the whole of it as a tooltip), or a muted dash. */
export function errorText(text, n) {
  if (text === null || text === undefined || text === '') return h('span', {class: 'muted'}, '—');
  const full = String(text);
  return h('span', {title: full.length > n ? full.slice(0, 2000) : null}, full.length > n ? full.slice(0, n - 1) + '…' : full);
}
