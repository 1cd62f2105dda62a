// Shared by the Node drivers (pgboss.mjs, graphile.mjs): arguments, the 1 KB payload, the clock,
// percentiles and the one result line run.sh reads. The protocol is the same in every driver of
// bench/peers (Java ones included): see bench/peers/README.md.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';

export function parseArgs(argv) {
  const o = {
    url: process.env.PEERS_DATABASE_URL,
    jobs: 100_000,
    enqueueBatch: 1000,
    enqueueCallers: 4,
    workers: 8,
    fetch: 256,
    latencyJobs: 200,
    latencyRate: 20,
    schema: null,
    drainTimeoutS: 1800,
    warmupJobs: 100_000,
  };
  for (let i = 2; i < argv.length; i++) {
    const a = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    switch (a) {
      case '--url': o.url = v(); break;
      case '--jobs': o.jobs = int(v(), a); break;
      case '--enqueue-batch': o.enqueueBatch = int(v(), a); break;
      case '--enqueue-callers': o.enqueueCallers = int(v(), a); break;
      case '--workers': o.workers = int(v(), a); break;
      case '--fetch': o.fetch = int(v(), a); break;
      case '--latency-jobs': o.latencyJobs = int(v(), a); break;
      case '--latency-rate': o.latencyRate = int(v(), a); break;
      case '--schema': o.schema = v(); break;
      case '--drain-timeout-s': o.drainTimeoutS = int(v(), a); break;
      case '--warmup-jobs': o.warmupJobs = int(v(), a); break;
      default: throw new Error(`unknown argument ${a}`);
    }
  }
  if (!o.url) throw new Error('--url postgres://user:password@host:port/db (or PEERS_DATABASE_URL) is required');
  return o;
}

function int(s, name) {
  const n = Number(s);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer (got ${s})`);
  return n;
}

/** Monotonic milliseconds (fractional) of this process. */
export const now = () => performance.now();

/**
 * The payload of job `seq`: about 1 KB of JSON ({"seq":…, "pad": 1000 base64 characters}); the pad is
 * random, drawn once per process, so no system can compress a run of equal bytes.
 */
const PAD = randomBytes(750).toString('base64');
export const payload = (seq) => ({ seq, pad: PAD });
export const PAYLOAD_BYTES = JSON.stringify(payload(99999)).length;

export function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function waitUntil(cond, timeoutMs, stepMs = 5) {
  const deadline = now() + timeoutMs;
  while (!(await cond())) {
    if (now() > deadline) return false;
    await sleep(stepMs);
  }
  return true;
}

/** A small admin pool (CHECKPOINT between phases, counting what is left), outside the system's own budget. */
export function adminPool(url) {
  return new pg.Pool({ connectionString: url, max: 1 });
}

/** Flushes dirty buffers before a phase so no phase pays for the previous one's checkpoint (needs superuser or pg_checkpoint). */
export async function checkpoint(admin) {
  try {
    await admin.query('CHECKPOINT');
  } catch {
    // not allowed for this role: measure anyway
  }
}

/**
 * The settle step before the drain and before the pickup phase, the same for every system (the Java
 * drivers do the same): VACUUM (ANALYZE) every table of the system's own schema, then CHECKPOINT. No
 * figure then depends on whether autovacuum happened to analyze a freshly filled table before the
 * phase began (plans chosen on an "empty" table's statistics made one peer's drain 4x slower in some
 * runs), and pickup is measured at light load rather than among the dead rows of the 100k burst.
 */
export async function settle(admin, schema) {
  const r = await admin.query(
    "SELECT format('%I.%I', schemaname, relname) AS t FROM pg_stat_user_tables WHERE schemaname = $1", [schema]);
  for (const row of r.rows) await admin.query(`VACUUM (ANALYZE) ${row.t}`);
  await checkpoint(admin);
}

export async function queryNumber(admin, sql, params = []) {
  const r = await admin.query(sql, params);
  return Number(Object.values(r.rows[0])[0]);
}

/**
 * Runs `enqueueBatch(seqs)` over all jobs in batches, `callers` at a time (each caller sends its next
 * batch when the previous one returned), and returns jobs per second.
 */
export async function enqueueAll(o, enqueueBatch) {
  let next = 0;
  const t0 = now();
  async function caller() {
    for (;;) {
      const from = next;
      if (from >= o.jobs) return;
      next = Math.min(o.jobs, from + o.enqueueBatch);
      const seqs = [];
      for (let s = from; s < next; s++) seqs.push(s);
      await enqueueBatch(seqs);
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, o.enqueueCallers) }, caller));
  const secs = (now() - t0) / 1000;
  return { seconds: secs, perS: o.jobs / secs };
}

/**
 * The warm-up every driver runs before phase 1, not measured: `o.warmupJobs` jobs (seqs -1, -2, …) enqueued
 * through `enqueueBatch(seqs)` as phase 1 does, then drained by the worker `startWorker(handled)` starts
 * (it calls `handled(n)` for every n jobs it ran) until every job ran and `remaining()` reads 0; then
 * `stopWorker(worker)`. So the JIT has compiled the hot paths before anything is timed.
 */
export async function warmUp(o, name, enqueueBatch, startWorker, remaining, stopWorker) {
  if (o.warmupJobs <= 0) return;
  log(`${name}: warm-up, ${o.warmupJobs} jobs`);
  await enqueueAll({ ...o, jobs: o.warmupJobs }, (seqs) => enqueueBatch(seqs.map((s) => -1 - s)));
  let warm = 0;
  const worker = await startWorker((n) => { warm += n; });
  await waitUntil(() => warm >= o.warmupJobs, o.drainTimeoutS * 1000, 5);
  await waitUntil(async () => (await remaining()) === 0, 60_000, 5);
  await stopWorker(worker);
}

/** Counts handler starts by seq; duplicates are reported, not hidden. */
export class Tally {
  constructor(n) {
    this.seen = new Uint8Array(n);
    this.handled = 0;
    this.duplicates = 0;
  }
  hit(seq) {
    if (seq < 0 || seq >= this.seen.length) return;
    if (this.seen[seq]) this.duplicates++;
    else {
      this.seen[seq] = 1;
      this.handled++;
    }
  }
}

/**
 * Pickup latency at light load: `latencyJobs` single enqueues at `latencyRate` per second with idle
 * workers; `enqueueOne(seq)` resolves once the system's enqueue call returned (its commit), and the
 * driver's handler calls `started(seq)` first thing. Negative gaps (the handler ran before the
 * enqueue call returned) count as 0 and are reported as `early`.
 */
export async function measurePickup(o, enqueueOne, startedAt) {
  const committedAt = new Map();
  const interval = 1000 / o.latencyRate;
  const t0 = now();
  const pending = [];
  for (let i = 0; i < o.latencyJobs; i++) {
    const due = t0 + i * interval;
    const wait = due - now();
    if (wait > 0) await sleep(wait);
    const seq = o.jobs + i;
    pending.push(enqueueOne(seq).then(() => committedAt.set(seq, now())));
  }
  await Promise.all(pending);
  await waitUntil(() => [...committedAt.keys()].every((s) => startedAt.has(s)), 30_000, 10);
  const ms = [];
  let early = 0;
  let lost = 0;
  for (const [seq, c] of committedAt) {
    const s = startedAt.get(seq);
    if (s === undefined) { lost++; continue; }
    let d = s - c;
    if (d < 0) { early++; d = 0; }
    ms.push(d);
  }
  ms.sort((a, b) => a - b);
  return { p50: quantile(ms, 0.5), p95: quantile(ms, 0.95), p99: quantile(ms, 0.99), max: ms[ms.length - 1], early, lost };
}

export function emit(result) {
  process.stdout.write('PEERS_RESULT ' + JSON.stringify(result) + '\n');
}

export const round = (x, d = 1) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : null);

export function log(...args) {
  process.stderr.write(`[${new Date().toISOString()}] ${args.join(' ')}\n`);
}
