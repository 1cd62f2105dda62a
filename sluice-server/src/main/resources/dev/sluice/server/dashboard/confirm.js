// The confirmation dialog of admin actions (our own <dialog>, not window.confirm, so a browser test can
// drive it), the admin-only buttons, and the toast that reports what an action did.

import {h, replace} from './dom.js';

let openCount = 0;

/** Whether a confirmation is open (the poller pauses meanwhile). */
export function confirmOpen() {
  return openCount > 0;
}

/**
 * Asks: resolves true when confirmed, false when cancelled (Escape, Cancel, or a click outside).
 * {title, text, detail, ok, danger}
 */
export function ask({title, text, detail, ok, danger}) {
  const dialog = document.getElementById('confirm-dialog');
  replace(document.getElementById('confirm-title'), title);
  replace(document.getElementById('confirm-text'), text);
  const d = document.getElementById('confirm-detail');
  replace(d, detail || '');
  d.hidden = !detail;
  const okButton = document.getElementById('confirm-ok');
  okButton.textContent = ok || 'Confirm';
  okButton.className = danger ? 'button danger' : 'button primary';
  openCount++;
  return new Promise((resolve) => {
    let done = false;
    const finish = (answer) => {
      if (done) return;
      done = true;
      openCount--;
      okButton.removeEventListener('click', onOk);
      cancel.removeEventListener('click', onCancel);
      dialog.removeEventListener('close', onClose);
      if (dialog.open) dialog.close();
      resolve(answer);
    };
    const onOk = () => finish(true);
    const onCancel = () => finish(false);
    const onClose = () => finish(false);
    const cancel = document.getElementById('confirm-cancel');
    okButton.addEventListener('click', onOk);
    cancel.addEventListener('click', onCancel);
    dialog.addEventListener('close', onClose);
    dialog.showModal();
    cancel.focus();
  });
}

let toastTimer = null;

/** Shows a short message at the bottom of the page (tone: ok or error). */
export function toast(text, tone) {
  const t = document.getElementById('toast');
  t.textContent = text;
  t.className = 'toast show ' + (tone || 'ok');
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    t.className = 'toast';
  }, 4000);
}

/**
 * A button for an admin action: disabled, with the reason as a hint, unless the caller is admin.
 * The action asks for confirmation first; then runs; then reports through a toast and refreshes the page.
 * opts: {label, test, ctx, confirm: {title, text, detail, ok, danger}, run: async () => result,
 *        done: result → message, small, danger}
 */
export function actionButton(opts) {
  const {label, test, ctx} = opts;
  const admin = ctx.admin();
  const b = h('button', {
    type: 'button',
    class: 'button' + (opts.small ? ' small' : '') + (opts.danger ? ' danger-outline' : ''),
    dataset: {test, admin: 'true'},
    disabled: !admin,
    title: admin ? null : adminHint(ctx),
  }, label);
  b.addEventListener('click', async () => {
    if (!ctx.admin()) return;
    const question = typeof opts.confirm === 'function' ? opts.confirm() : opts.confirm;
    if (!question) {
      toast(opts.refused || 'Nothing to do', 'error');
      return;
    }
    const yes = await ask(question);
    if (!yes) return;
    b.disabled = true;
    try {
      const result = await opts.run();
      toast(opts.done ? opts.done(result) : 'Done', 'ok');
    } catch (e) {
      toast((e.name ? e.name + ': ' : '') + (e.problem || e.message), 'error');
      ctx.showError(e);
    } finally {
      b.disabled = !ctx.admin();
    }
    ctx.refresh();
  });
  return b;
}

/** Why admin actions are disabled. */
export function adminHint(ctx) {
  const role = ctx.role();
  return role ? 'Needs the admin role; this token has the ' + role + ' role' : 'Needs the admin role: set an admin token';
}

/** A one-line note shown above admin actions when they are disabled. */
export function adminNote(ctx) {
  return ctx.admin() ? null : h('p', {class: 'hint', dataset: {test: 'admin-hint'}}, adminHint(ctx) + ' (actions are disabled).');
}

/** Plural: n('dead letter', 2) → '2 dead letters'. */
export function n(word, count) {
  return count + ' ' + word + (count === 1 ? '' : 's');
}
