#!/usr/bin/env bash
# Stops the embedded Postgres and Redis under .data/ (only those: never a server configured by URL).
# Usage: bash scripts/stop-services.sh [pg] [redis]   (no argument: both)
set -uo pipefail
cd "$(dirname "$0")/.."
DATA_DIR=${DATA_DIR:-$(pwd)/.data}
which=${*:-pg redis}
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
for s in $which; do
  case "$s" in
    pg) if [ -f "$DATA_DIR/pg/postmaster.pid" ]; then
          if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$PGBIN/pg_ctl" -D "$DATA_DIR/pg" -m fast -w stop >/dev/null
          else "$PGBIN/pg_ctl" -D "$DATA_DIR/pg" -m fast -w stop >/dev/null; fi
          echo "[stop] embedded Postgres stopped"
        fi ;;
    redis) if [ -f "$DATA_DIR/redis/redis.pid" ]; then
          kill "$(cat "$DATA_DIR/redis/redis.pid")" 2>/dev/null && echo "[stop] embedded Redis stopped"
        fi ;;
  esac
done
