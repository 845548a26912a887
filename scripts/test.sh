#!/usr/bin/env bash
# The README's test command: set-up (packages, npm, embedded Postgres and Redis), type check, then every suite.
# Extra arguments go to mocha, e.g. `bash scripts/test.sh 'test/control-api/**/*.test.ts'`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source .data/env
export NODE_ENV=test
echo "[test] tsc --noEmit"
npx tsc --noEmit -p .
if ls web/*/main.ts* >/dev/null 2>&1; then npx tsc --noEmit -p web; fi
if [ -f dist/reference-api/paths.d.ts ]; then npx tsc --noEmit -p tsconfig.reference.json; fi
echo "[test] mocha"
if [ "$#" -gt 0 ]; then
  npx mocha --reporter test/support/reporter.js "$@"
else
  npx mocha --reporter test/support/reporter.js 'test/**/*.test.ts'
fi
