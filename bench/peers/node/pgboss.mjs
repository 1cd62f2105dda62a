// pg-boss driver for bench/peers: enqueue N jobs with insert() (its raw bulk path), drain them with
// `workers` workers fetching `fetch` jobs per batch (no-op handler), then pickup latency at light
// load with send(). Fastest documented settings: LISTEN/NOTIFY (useListenNotify + queue notify),
// polling at the documented minimum (0.5 s), burst fetching while batches come back full. First a
// warm-up that is not measured: --warmup-jobs jobs enqueued and drained the same way (every driver does this).
import { PgBoss } from 'pg-boss';
import { readFileSync } from 'node:fs';
import {
  parseArgs, payload, PAYLOAD_BYTES, now, Tally, enqueueAll, measurePickup, adminPool, checkpoint,
  queryNumber, waitUntil, emit, round, log, settle, warmUp,
} from './common.mjs';

const o = parseArgs(process.argv);
const schema = o.schema ?? 'peers_pgboss';
const queue = 'peers';
const version = JSON.parse(readFileSync(new URL('./node_modules/pg-boss/package.json', import.meta.url))).version;

const admin = adminPool(o.url);
const boss = new PgBoss({
  connectionString: o.url,
  schema,
  // The connection budget every system gets: the workers plus two.
  max: o.workers + 2,
  useListenNotify: true,
});
let lastError = null;
boss.on('error', (e) => { lastError = e; log('pg-boss error:', e?.message ?? e); });
const warnings = new Set();
boss.on('warning', (w) => {
  const text = typeof w === 'string' ? w : (w?.type ? `${w.type}: ${w.message ?? ''}` : JSON.stringify(w));
  warnings.add(text);
  log('pg-boss warning:', text);
});

await boss.start();
await boss.createQueue(queue, { notify: true });

const workOptions = {
  localConcurrency: o.workers,
  batchSize: o.fetch,
  pollingIntervalSeconds: 0.5,
  notifyPollingIntervalSeconds: 0.5,
  burstWhenBatchFull: true,
};
const remainingSql = `SELECT count(*) FROM ${schema}.job WHERE name = $1 AND state IN ('created', 'retry', 'active')`;

await warmUp(o, 'pg-boss',
  (seqs) => boss.insert(queue, seqs.map((s) => ({ data: payload(s) }))),
  (handled) => boss.work(queue, workOptions, async (jobs) => { handled(jobs.length); }),
  () => queryNumber(admin, remainingSql, [queue]),
  async () => {
    await boss.offWork(queue);
    // pg-boss keeps completed jobs; the other systems delete theirs, so the measured drain starts as theirs does.
    await boss.deleteAllJobs(queue);
  });

// Phase 1: enqueue with no worker running.
await checkpoint(admin);
log(`pg-boss ${version}: enqueue ${o.jobs} jobs, insert() batches of ${o.enqueueBatch}, ${o.enqueueCallers} callers`);
const enq = await enqueueAll(o, (seqs) => boss.insert(queue, seqs.map((s) => ({ data: payload(s) }))));
log(`enqueue: ${enq.perS.toFixed(0)} jobs/s`);

// Phase 2: drain.
await settle(admin, schema);
const tally = new Tally(o.jobs);
const startedAt = new Map();
log(`drain with ${JSON.stringify(workOptions)}`);
const t0 = now();
await boss.work(queue, workOptions, async (jobs) => {
  const t = now();
  for (const j of jobs) {
    const seq = j.data.seq;
    if (seq >= o.jobs) {
      if (!startedAt.has(seq)) startedAt.set(seq, t);
    } else {
      tally.hit(seq);
    }
  }
});
const handledAll = await waitUntil(() => tally.handled >= o.jobs, o.drainTimeoutS * 1000, 5);
const tHandled = now();
// Handled is not done: the drain ends when every job is completed in the database.
await waitUntil(async () => (await queryNumber(admin, remainingSql, [queue])) === 0, 60_000, 5);
const tDone = now();
const remaining = await queryNumber(admin, remainingSql, [queue]);
const drainS = (tDone - t0) / 1000;
log(`drain: ${(o.jobs / drainS).toFixed(0)} jobs/s (handled all after ${((tHandled - t0) / 1000).toFixed(2)} s, completed after ${drainS.toFixed(2)} s)`);

// Phase 3: pickup latency, idle workers.
await settle(admin, schema);
const lat = await measurePickup(o, (seq) => boss.send(queue, payload(seq)), startedAt);
log(`pickup: p50 ${lat.p50.toFixed(2)} ms, p95 ${lat.p95.toFixed(2)} ms`);

await boss.stop({ graceful: true, timeout: 10_000 });
await admin.end();

emit({
  system: 'pg-boss',
  version,
  enqueue_per_s: round(enq.perS),
  drain_per_s: round(handledAll && remaining === 0 ? o.jobs / drainS : NaN),
  p50_ms: round(lat.p50, 2),
  p95_ms: round(lat.p95, 2),
  jobs: o.jobs,
  handled: tally.handled,
  duplicates: tally.duplicates,
  remaining,
  latency_lost: lat.lost,
  latency_early: lat.early,
  payload_bytes: PAYLOAD_BYTES,
  error: lastError ? String(lastError.message ?? lastError) : null,
  warnings: [...warnings],
  settings: `insert() x${o.enqueueBatch}, ${o.enqueueCallers} callers; work localConcurrency ${o.workers}, batchSize ${o.fetch}, burstWhenBatchFull, polling 0.5 s, LISTEN/NOTIFY; pool ${o.workers + 2}`,
});
