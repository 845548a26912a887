#!/usr/bin/env bash
# The README's start command: set-up, then every process of the platform on local embedded defaults.
# Ctrl-C stops the processes, and the embedded Postgres and Redis when this command started them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source .data/env
started=$(cat .data/started 2>/dev/null || true)
[ -f .env ] && { set -a; source .env; set +a; }
# media worker threads at nice -10: the 20 ms clock wins the CPU without real-time scheduling, and CFS
# weights keep a busy worker from starving the host (docs/benchmarks.md); needs root or CAP_SYS_NICE
export MEDIA_WORKER_NICE="${MEDIA_WORKER_NICE--10}"
# ... and on SCHED_RR 10 while a worker uses under 80 % of a core (MEDIA_WORKER_RT_MAX_CPU): above that a
# watchdog drops it back to the nice value, so it can never starve the host; refused without the right
# (a warning, nothing else changes). MEDIA_WORKER_RT_PRIORITY= in .env turns it off.
export MEDIA_WORKER_RT_PRIORITY="${MEDIA_WORKER_RT_PRIORITY-10}"
# SIP over WebSocket on loopback (SIP_WS_HOST) for the browser phone; SIP_WS_PORT= in .env turns it off
export SIP_WS_PORT="${SIP_WS_PORT-5066}"
# the browser phone's WebSocket URL (/phone/config.json, its CSP): that loopback listener unless set
if [ -n "$SIP_WS_PORT" ]; then export SIP_WSS_PUBLIC_URL="${SIP_WSS_PUBLIC_URL-ws://127.0.0.1:${SIP_WS_PORT}}"; fi
# ESL_LISTEN set (in .env): also the event socket for drachtio-fsmrf and its sip-server (scripts/processes.ts)
trap ':' INT   # the node supervisor handles Ctrl-C and stops its children; this shell then cleans up
status=0
node --require tsx/cjs scripts/start.ts "$@" || status=$?
[ -n "${started// /}" ] && bash scripts/stop-services.sh $started
exit $status
