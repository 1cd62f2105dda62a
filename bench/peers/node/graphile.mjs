// graphile-worker driver for bench/peers: enqueue N jobs with addJobs() (one add_jobs call per
// batch), drain them with `workers` concurrent jobs (no-op task), then pickup latency at light load
// with addJob(). Fastest documented settings (worker.graphile.org/docs/performance): localQueue
// batching (size 500), completeJobBatchDelay 0, failJobBatchDelay 0; LISTEN/NOTIFY is built in. First
// a warm-up that is not measured: --warmup-jobs jobs enqueued and drained the same way (every driver does this).
import { run, makeWorkerUtils } from 'graphile-worker';
import { readFileSync } from 'node:fs';
import {
  parseArgs, payload, PAYLOAD_BYTES, now, Tally, enqueueAll, measurePickup, adminPool, checkpoint,
  queryNumber, waitUntil, emit, round, log, settle, warmUp,
} from './common.mjs';

const o = parseArgs(process.argv);
const schema = o.schema ?? 'peers_graphile';
const localQueueSize = Number(process.env.PEERS_GRAPHILE_LOCAL_QUEUE ?? 500);
const version = JSON.parse(readFileSync(new URL('./node_modules/graphile-worker/package.json', import.meta.url))).version;

// Worker's own logs go to stderr only when they are warnings or errors.
const { Logger } = await import('graphile-worker');
const logger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') log(`graphile-worker ${level}:`, message);
});

const admin = adminPool(o.url);
const utils = await makeWorkerUtils({ connectionString: o.url, schema, logger, maxPoolSize: o.enqueueCallers + 1 });
await utils.migrate();

const workerPreset = {
  connectionString: o.url,
  schema,
  concurrentJobs: o.workers,
  // The connection budget every system gets: the workers plus two (also graphile's own advice).
  maxPoolSize: o.workers + 2,
  localQueue: { size: localQueueSize },
  completeJobBatchDelay: 0,
  failJobBatchDelay: 0,
};
const remainingSql = `SELECT count(*) FROM ${schema}._private_jobs`;

await warmUp(o, 'graphile-worker',
  (seqs) => utils.addJobs(seqs.map((s) => ({ identifier: 'peer', payload: payload(s) }))),
  (handled) => run({ noHandleSignals: true, logger, preset: { worker: workerPreset },
    taskList: { peer: async () => { handled(1); } } }),
  () => queryNumber(admin, remainingSql),
  (runner) => runner.stop());

// Phase 1: enqueue with no worker running.
await checkpoint(admin);
log(`graphile-worker ${version}: enqueue ${o.jobs} jobs, addJobs() batches of ${o.enqueueBatch}, ${o.enqueueCallers} callers`);
const enq = await enqueueAll(o, (seqs) => utils.addJobs(seqs.map((s) => ({ identifier: 'peer', payload: payload(s) }))));
log(`enqueue: ${enq.perS.toFixed(0)} jobs/s`);

// Phase 2: drain.
await settle(admin, schema);
const tally = new Tally(o.jobs);
const startedAt = new Map();
log(`drain with ${JSON.stringify({ ...workerPreset, connectionString: undefined })}`);
const t0 = now();
const runner = await run({
  noHandleSignals: true,
  logger,
  preset: { worker: workerPreset },
  taskList: {
    peer: async (p) => {
      const seq = p.seq;
      if (seq >= o.jobs) {
        if (!startedAt.has(seq)) startedAt.set(seq, now());
      } else {
        tally.hit(seq);
      }
    },
  },
});
// Completed jobs are deleted by graphile-worker: the drain ends when the jobs table is empty.
const handledAll = await waitUntil(() => tally.handled >= o.jobs, o.drainTimeoutS * 1000, 5);
const tHandled = now();
await waitUntil(async () => (await queryNumber(admin, remainingSql)) === 0, 60_000, 5);
const tDone = now();
const remaining = await queryNumber(admin, remainingSql);
const drainS = (tDone - t0) / 1000;
log(`drain: ${(o.jobs / drainS).toFixed(0)} jobs/s (handled all after ${((tHandled - t0) / 1000).toFixed(2)} s, completed after ${drainS.toFixed(2)} s)`);

// Phase 3: pickup latency, idle workers.
await settle(admin, schema);
const lat = await measurePickup(o, (seq) => utils.addJob('peer', payload(seq)), startedAt);
log(`pickup: p50 ${lat.p50.toFixed(2)} ms, p95 ${lat.p95.toFixed(2)} ms`);

await runner.stop();
await utils.release();
await admin.end();

emit({
  system: 'graphile-worker',
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
  error: null,
  settings: `addJobs() x${o.enqueueBatch}, ${o.enqueueCallers} callers; concurrentJobs ${o.workers}, localQueue ${localQueueSize}, completeJobBatchDelay 0, failJobBatchDelay 0, LISTEN/NOTIFY; pool ${o.workers + 2}`,
});
