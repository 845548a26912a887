#!/usr/bin/env bash
# Builds the media worker's native RTP sockets (media-engine/native/rtp_io.c) against the Node headers
# of the machine, with the C compiler; no node-gyp, no download. Skipped when the build is newer than
# its source. Without a compiler or headers it says so and leaves the workers on node:dgram.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=media-engine/native/rtp_io.c
OUT=media-engine/native/build/rtp_io.node
log() { printf '[build-native] %s\n' "$*" >&2; }
if [ -f "$OUT" ] && [ "$OUT" -nt "$SRC" ]; then exit 0; fi
prefix=$(node -p "require('path').resolve(process.execPath, '..', '..')")
inc=""
for d in "$prefix/include/node" /usr/include/node /usr/local/include/node; do
  if [ -f "$d/node_api.h" ]; then inc=$d; break; fi
done
cc=$(command -v cc || command -v gcc || true)
fallback() { log "$1: media workers use node:dgram for RTP"; rm -f "$OUT.tmp"; exit 0; }
[ -n "$cc" ] || fallback "no C compiler"
[ -n "$inc" ] || fallback "no Node headers (node_api.h) beside $prefix or in /usr/include/node"
mkdir -p "$(dirname "$OUT")"
"$cc" -std=gnu11 -O2 -Wall -fPIC -shared -isystem "$inc" "$SRC" -o "$OUT.tmp" || fallback "the build failed"
# it must load before it replaces anything (a header/runtime mismatch shows here, not in a worker)
node -e "process.dlopen({ exports: {} }, require('path').resolve(process.argv[1]))" "$OUT.tmp" || fallback "the built module does not load"
mv "$OUT.tmp" "$OUT"
log "built $OUT"
