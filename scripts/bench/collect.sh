#!/usr/bin/env bash
# Rebuilds docs/benchmarks.md: the summary below plus every area's figures (docs/benchmarks-<area>.md,
# each written by its own scripts/bench/<area>/ run together with the command that produced it).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=docs/benchmarks.md
{
  cat docs/benchmarks-summary.md
  for f in sip api media capacity media-dsp codecs calls flow events conference queue streams speech ai campaigns; do
    [ -f "docs/benchmarks-$f.md" ] || continue
    printf '\n---\n\n'
    # demote the area file's headings one level so they nest under this document's title
    sed -e 's/^#/##/' "docs/benchmarks-$f.md"
  done
} > "$out"
echo "wrote $out"
