// Keyset paging of a list: a stack of cursors (null is the first page), with First and Next buttons.

import {h, replace} from './dom.js';

/** Keyset paging: a stack of cursors, with First and Next buttons in el. */
export function pages(el, test, ctx) {
  const cursors = [null];
  let next = null;
  const first = h('button', {type: 'button', class: 'button small', dataset: {test: test + '-first'}}, '⇤ First');
  const more = h('button', {type: 'button', class: 'button small', dataset: {test: test + '-next'}}, 'Next page →');
  const where = h('span', {class: 'hint'});
  el.append(first, more, where);
  first.addEventListener('click', () => {
    cursors.length = 1;
    ctx.refresh();
  });
  more.addEventListener('click', () => {
    if (next) cursors.push(next);
    ctx.refresh();
  });
  return {
    cursor: () => cursors[cursors.length - 1],
    reset: () => {
      cursors.length = 1;
    },
    show(nextCursor, count) {
      next = nextCursor;
      more.disabled = !next;
      first.disabled = cursors.length === 1;
      replace(where, 'page ' + cursors.length + (count ? '' : ' (empty)'));
    },
  };
}
