#!/usr/bin/env bash
# Builds the media worker's native modules against the Node headers of the machine, with the C
# compiler; no node-gyp, no download. Each is skipped when its build is newer than all its sources.
#   media-engine/native/rtp_io.c -> build/rtp_io.node   polled RTP sockets; without it the workers
#                                                       use node:dgram (same behaviour, dearer)
#   media-engine/native/rtp_uring*.c -> build/rtp_uring.node  every socket of a worker on one io_uring
#     + rtp_legs*.c                                     (liburing), and plain G.711 legs served in C;
#                                                       without it the workers use rtp_io.node and JS legs
#   media-engine/native/codec*.c -> build/codecs.node   Opus (libopus), G.722 + PLC (libspandsp), the
#                                                       resampler and echo canceller (libspeexdsp); without it the engine
#                                                       has G.711 only and refuses Opus/G.722 offers
# A module that cannot be built is reported with the reason and the other is still built.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=media-engine/native
log() { printf '[build-native] %s\n' "$*" >&2; }
prefix=$(node -p "require('path').resolve(process.execPath, '..', '..')")
inc=""
for d in "$prefix/include/node" /usr/include/node /usr/local/include/node; do
  if [ -f "$d/node_api.h" ]; then inc=$d; break; fi
done
cc=$(command -v cc || command -v gcc || true)

# build OUT "what it leaves without" "headers it includes" SOURCES... -- CFLAGS/LIBS...
build() {
  local out=$1 without=$2 headers=$3
  shift 3
  local srcs=() extra=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do srcs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  extra=("$@")
  local fresh=1
  # shellcheck disable=SC2086 # the header list is split into words on purpose
  for s in "${srcs[@]}" $headers; do
    [ -f "$out" ] && [ "$out" -nt "$s" ] || fresh=0
  done
  [ "$fresh" = 1 ] && return 0
  fail() { log "$(basename "$out"): $1: $without"; rm -f "$out.tmp"; }
  [ -n "$cc" ] || { fail "no C compiler"; return 0; }
  [ -n "$inc" ] || { fail "no Node headers (node_api.h) beside $prefix or in /usr/include/node"; return 0; }
  mkdir -p "$(dirname "$out")"
  "$cc" -std=gnu11 -O2 -Wall -fPIC -shared -isystem "$inc" "${srcs[@]}" -o "$out.tmp" "${extra[@]}" || { fail "the build failed"; return 0; }
  # it must load before it replaces anything (a header/runtime mismatch shows here, not in a worker)
  node -e "process.dlopen({ exports: {} }, require('path').resolve(process.argv[1]))" "$out.tmp" || { fail "the built module does not load"; return 0; }
  mv "$out.tmp" "$out"
  log "built $out"
}

build "$DIR/build/rtp_io.node" "media workers use node:dgram for RTP" "$DIR/rtp_common.h" "$DIR/rtp_io.c"

if [ -f /usr/include/liburing.h ]; then
  build "$DIR/build/rtp_uring.node" "media workers use rtp_io.node (a system call per packet)" "$DIR/rtp_common.h $DIR/rtp_legs.h $DIR/rtp_legs_int.h $DIR/rtp_uring_int.h" \
    "$DIR/rtp_uring.c" "$DIR/rtp_uring_io.c" "$DIR/rtp_legs.c" "$DIR/rtp_legs_jitter.c" "$DIR/rtp_legs_state.c" -- -luring -lm
else
  log "rtp_uring.node: missing liburing-dev: media workers use rtp_io.node (a system call per packet)"
fi

codec_libs_missing=""
[ -f /usr/include/opus/opus.h ] || codec_libs_missing="$codec_libs_missing libopus-dev"
[ -f /usr/include/spandsp/g722.h ] || codec_libs_missing="$codec_libs_missing libspandsp-dev"
[ -f /usr/include/speex/speex_resampler.h ] || codec_libs_missing="$codec_libs_missing libspeexdsp-dev"
if [ -n "$codec_libs_missing" ]; then
  log "codecs.node: missing$codec_libs_missing: the engine has G.711 only and refuses Opus and G.722"
else
  build "$DIR/build/codecs.node" "the engine has G.711 only and refuses Opus and G.722" "$DIR/codec_common.h" \
    "$DIR/codecs.c" "$DIR/codec_opus.c" "$DIR/codec_g722.c" "$DIR/codec_resample.c" "$DIR/codec_aec.c" -- \
    -I/usr/include/opus -lopus -lspandsp -lspeexdsp -lm
fi
