#!/usr/bin/env bash
# Shared set-up for both README commands. Idempotent: installs what is missing, starts the embedded
# Postgres and Redis under .data/ when no DATABASE_URL / REDIS_URL is given, and writes the resolved
# URLs to .data/env so the caller can source it. Usage: bash scripts/setup.sh [--test]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
DATA_DIR=${DATA_DIR:-$ROOT/.data}
mkdir -p "$DATA_DIR"
STARTED=""   # services this run started (scripts/start.sh stops exactly these on exit)
log() { printf '[setup] %s\n' "$*" >&2; }

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

# 1. Debian packages (what every part of the platform uses at run time or in tests).
PKGS="postgresql redis-server prometheus sip-tester espeak-ng flite sox libsox-fmt-all pocketsphinx pocketsphinx-en-us openssl kamailio kamailio-websocket-modules kamailio-tls-modules rtpengine-daemon chromium chromium-driver baresip linphone-cli tcpdump zbar-tools gcc libc6-dev libopus-dev libspandsp-dev libspeexdsp-dev liburing-dev"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  log "installing Debian packages:$missing"
  $SUDO apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
  # Debian's prometheus package starts a Prometheus service (port 9090, every interface) when it is
  # installed; the platform needs only its binaries (promtool, and the one a test starts on loopback),
  # so the service this run installed is stopped and disabled. An operator's own Prometheus is left alone.
  case " $missing " in *" prometheus "*) $SUDO systemctl disable --now prometheus >/dev/null 2>&1 || true ;; esac
fi

# 2. npm dependencies (skipped when the lock file has not changed since the last install).
stamp="$ROOT/node_modules/.install-stamp"
want=$(cat package.json package-lock.json 2>/dev/null | sha1sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "installing npm dependencies"
  # npm install (not ci): it honours the lock file and never wipes a node_modules that is in use.
  # ONNXRUNTIME_NODE_INSTALL=skip: onnxruntime-node (the neural VAD) ships its CPU library in the
  # package; its install script would only fetch GPU libraries from nuget.org, which is not reachable.
  ONNXRUNTIME_NODE_INSTALL=skip flock /tmp/npm.lock npm install --no-audit --no-fund --loglevel=error >/dev/null
  want=$(cat package.json package-lock.json 2>/dev/null | sha1sum | cut -d' ' -f1)
  echo "$want" > "$stamp"
fi

# 3. Embedded services.
PG_PORT=${EMBEDDED_PG_PORT:-55432}
REDIS_PORT=${EMBEDDED_REDIS_PORT:-56379}
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)

as_pg() { # the Postgres server refuses to run as root: use the postgres system user then
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

if [ -z "${DATABASE_URL:-}" ]; then
  PGDATA="$DATA_DIR/pg"
  if [ ! -f "$PGDATA/PG_VERSION" ]; then
    log "creating the embedded Postgres cluster in $PGDATA"
    mkdir -p "$PGDATA"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$PGDATA"
    chmod 700 "$PGDATA"
    as_pg "$PGBIN/initdb" -D "$PGDATA" -U postgres --auth=trust -E UTF8 >/dev/null
  fi
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$DATA_DIR" 2>/dev/null || true
  if ! as_pg "$PGBIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then
    if "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" 2>/dev/null; then
      log "another Postgres already listens on 127.0.0.1:$PG_PORT: stop it, set EMBEDDED_PG_PORT, or set DATABASE_URL"
      exit 1
    fi
    log "starting the embedded Postgres on 127.0.0.1:$PG_PORT"
    as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -l "$PGDATA/server.log" -w -t 60 \
      -o "-p $PG_PORT -k $PGDATA -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off -c synchronous_commit=off" start >/dev/null
    STARTED="$STARTED pg"
  fi
  for db in platform platform_test; do
    if ! as_pg "$PGBIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -tAc "select 1 from pg_database where datname='$db'" postgres | grep -q 1; then
      as_pg "$PGBIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres "$db"
    fi
  done
  DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/platform"
  TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/platform_test"
fi

if [ -z "${REDIS_URL:-}" ]; then
  mkdir -p "$DATA_DIR/redis"
  if ! redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1; then
    log "starting the embedded Redis on 127.0.0.1:$REDIS_PORT"
    # Registrations and queued commands must survive a Redis crash (docs/reliability.md): AOF, fsync
    # every second. Starting with appendonly yes before an AOF exists would ignore the RDB data, so
    # the first start loads the RDB and turns AOF on at run time (which writes it from memory).
    AOF=no; [ -d "$DATA_DIR/redis/appendonlydir" ] && AOF=yes
    redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$DATA_DIR/redis" \
      --save 60 1 --stop-writes-on-bgsave-error no --appendonly "$AOF" --appendfsync everysec --pidfile "$DATA_DIR/redis/redis.pid" --logfile "$DATA_DIR/redis/redis.log" >/dev/null
    STARTED="$STARTED redis"
    for _ in $(seq 1 50); do redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
    [ "$AOF" = yes ] || redis-cli -h 127.0.0.1 -p "$REDIS_PORT" config set appendonly yes >/dev/null
  fi
  REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
  TEST_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/1"
fi

# 4. Schema: every pending knex migration on the platform database (the test suites migrate their own).
DATABASE_URL="$DATABASE_URL" npx tsx core/db/migrate-cli.ts >/dev/null

# 5. The media workers' native modules: RTP sockets (node:dgram when they cannot build) and codecs
#    (Opus, G.722, the resampler; without them the engine offers G.711 only).
bash scripts/build-native.sh

# 6. The browser apps (web/<app>/) bundled with esbuild into dist/web/<app>/.
npx tsx scripts/build-web.ts >/dev/null

# 7. The reference API's types (for the conformance suite's generated client), when the reference document is there.
npx tsx scripts/reference-client.ts >/dev/null

cat > "$DATA_DIR/env" <<ENV
export DATABASE_URL='$DATABASE_URL'
export REDIS_URL='$REDIS_URL'
export TEST_DATABASE_URL='${TEST_DATABASE_URL:-${DATABASE_URL}}'
export TEST_REDIS_URL='${TEST_REDIS_URL:-${REDIS_URL}}'
ENV
echo "$STARTED" > "$DATA_DIR/started"
log "ready (DATABASE_URL and REDIS_URL in $DATA_DIR/env)"
