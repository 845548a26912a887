#!/usr/bin/env bash
# The whole benchmark suite, one area after another (never two at once: they would measure each
# other), each with its default sizes.
#   bash scripts/bench/run.sh              # every area (about 25 minutes on 2 cores)
#   bash scripts/bench/run.sh sip media    # just these
# Each area's full output goes to .data/bench/<area>.log (some areas also write dist/bench/<area>.md);
# a failed area is reported and the rest run. Nothing here edits docs/: update the area's rows in
# docs/benchmarks.md by hand from the log (figure, same-run baseline, load, date).
set -uo pipefail
cd "$(dirname "$0")/../.."
bash scripts/setup.sh >/dev/null || { echo "setup failed: run bash scripts/setup.sh" >&2; exit 1; }
set -a
# shellcheck disable=SC1091
source .data/env
set +a
export LOG_LEVEL=silent

declare -A CMD=(
  [sip]="npx tsx scripts/bench/sip/run.ts"
  [sip-parser]="npx tsx scripts/bench/sip-parser/parse-bench.ts"
  [api]="npx tsx scripts/bench/api/run.ts --duration 10"
  [media]="npx tsx scripts/bench/media/run.ts --levels 100,250,500"
  [media-dsp]="npx tsx scripts/bench/media-dsp/run.ts"
  [codecs]="npx tsx scripts/bench/media/codecs.ts"
  [calls]="npx tsx scripts/bench/calls/run.ts"
  [flow]="npx tsx scripts/bench/flow/run.ts"
  [media-gap]="npx tsx scripts/bench/flow/media-gap.ts"
  [events]="npx tsx scripts/bench/events/run.ts --subs 1000 --burst 200 --webhooks 1000"
  [conference]="npx tsx scripts/bench/conference/run.ts"
  [esl]="npx tsx scripts/bench/esl/run.ts"
  [queue]="npx tsx scripts/bench/queue/run.ts 30"
  [streams]="npx tsx scripts/bench/streams/run.ts --calls 30 --seconds 10"
  [speech]="npx tsx scripts/bench/speech/run.ts"
  [ai]="npx tsx scripts/bench/ai/run.ts"
  [campaigns]="npx tsx scripts/bench/campaigns/run.ts --calls 100 --level 20"
  [blf]="npx tsx scripts/bench/pbx/blf-notify.ts"
  [mwi]="npx tsx scripts/bench/pbx/mwi-lamp.ts --calls 8"
  [turn-taking]="npx tsx scripts/bench/ai/turn-taking.ts --calls 5 --turns 10"
  # not in ORDER (about 10 minutes, it kills processes): bash scripts/bench/run.sh chaos
  [chaos]="npx tsx scripts/bench/chaos/run.ts --calls 50"
)
ORDER=(sip sip-parser api media media-dsp codecs calls flow media-gap events conference esl queue streams speech ai campaigns blf mwi turn-taking)

areas=("$@")
[ ${#areas[@]} -eq 0 ] && areas=("${ORDER[@]}")
mkdir -p .data/bench
failed=()
for a in "${areas[@]}"; do
  cmd=${CMD[$a]:-}
  if [ -z "$cmd" ]; then
    echo "unknown area: $a (known: ${ORDER[*]})" >&2
    failed+=("$a")
    continue
  fi
  log=.data/bench/$a.log
  echo "== $a: $cmd  (load $(cut -d' ' -f1 /proc/loadavg))"
  start=$(date +%s)
  if timeout 1200 bash -c "$cmd" >"$log" 2>&1; then
    echo "   done in $(( $(date +%s) - start )) s; last lines of $log:"
    tail -n 6 "$log" | sed 's/^/   /'
  else
    echo "   FAILED (exit $?) after $(( $(date +%s) - start )) s; see $log"
    failed+=("$a")
  fi
done
echo "logs in .data/bench/; update the rows of docs/benchmarks.md from them"
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
