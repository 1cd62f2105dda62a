// Formatting of figures and times for display (all output is plain text).

const NUM = new Intl.NumberFormat(undefined, {maximumFractionDigits: 0});
const RATE = new Intl.NumberFormat(undefined, {maximumFractionDigits: 1});

/** An integer with grouping, or an em dash. */
export function num(v) {
  return v === null || v === undefined || Number.isNaN(v) ? '—' : NUM.format(v);
}

/** A rate per second. */
export function rate(v) {
  return v === null || v === undefined ? '—' : RATE.format(v) + '/s';
}

/** Bytes as B, KiB, MiB. */
export function bytes(v) {
  if (v === null || v === undefined) return '—';
  if (v < 1024) return v + ' B';
  if (v < 1024 * 1024) return RATE.format(v / 1024) + ' KiB';
  return RATE.format(v / 1024 / 1024) + ' MiB';
}

/** An ISO instant as local date and time (seconds), or an em dash. */
export function time(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toLocaleString(undefined, {year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit',
    second: '2-digit'});
}

/** How far an instant is from now: 'in 12s', '3m ago'. */
export function relative(iso, now = Date.now()) {
  if (!iso) return '—';
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return String(iso);
  const diff = t - now;
  const text = span(Math.abs(diff));
  return diff >= 0 ? 'in ' + text : text + ' ago';
}

/** Milliseconds as '850ms', '12s', '4m 10s', '3h 5m', '2d 4h'. */
export function span(ms) {
  if (ms < 1000) return Math.round(ms) + 'ms';
  const sec = Math.round(ms / 1000);
  if (sec < 60) return sec + 's';
  const min = Math.floor(sec / 60);
  if (min < 60) return min + 'm' + (sec % 60 ? ' ' + (sec % 60) + 's' : '');
  const hr = Math.floor(min / 60);
  if (hr < 48) return hr + 'h' + (min % 60 ? ' ' + (min % 60) + 'm' : '');
  return Math.floor(hr / 24) + 'd' + (hr % 24 ? ' ' + (hr % 24) + 'h' : '');
}

/** An ISO-8601 duration (PT1H30M, P7D) as a short text; other text is shown as it is. */
export function duration(iso) {
  if (iso === null || iso === undefined) return '—';
  const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?)?$/.exec(String(iso));
  if (!m) return String(iso);
  const ms = ((+(m[1] || 0) * 24 + +(m[2] || 0)) * 60 + +(m[3] || 0)) * 60000 + +(m[4] || 0) * 1000;
  return ms === 0 ? '0' : span(ms);
}

/** Cuts a text to n characters (with an ellipsis). */
export function cut(text, n) {
  if (text === null || text === undefined) return '';
  const t = String(text);
  return t.length > n ? t.slice(0, n - 1) + '…' : t;
}
