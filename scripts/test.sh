#!/usr/bin/env bash
# The README's test command: set-up (packages, npm, embedded Postgres and Redis), type checks, lint and format
# checks (eslint.config.mjs, .prettierrc; `npm run lint`, `npm run format`), then every suite, split over
# TEST_JOBS parallel mocha processes (default 3) by scripts/test-run.ts; its last line is
# the sum over them, "N passed, N failed, N skipped". Extra arguments narrow it to one mocha run over them,
# e.g. `bash scripts/test.sh 'test/control-api/**/*.test.ts'`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source .data/env
export NODE_ENV=test
echo "[test] tsc --noEmit"
npx tsc --noEmit -p .
if ls web/*/main.ts* >/dev/null 2>&1; then npx tsc --noEmit -p web; fi
npx tsc --noEmit -p tsconfig.reference.json
echo "[test] eslint"
npx eslint .
echo "[test] prettier --check"
npx prettier --check .
echo "[test] mocha"
exec npx tsx scripts/test-run.ts "$@"
