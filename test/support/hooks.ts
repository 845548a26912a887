// Loaded by mocha before every suite (see .mocharc.json): keeps test logs quiet unless asked for, and
// applies the quarantine list (scripts/quarantine.ts) through a root hook.
import path from 'node:path';
import { QUARANTINE_FILE, quarantineKey, readQuarantine, staleEntries, staleMessage, type QuarantineEntry } from '../../scripts/quarantine';

process.env.LOG_LEVEL ??= 'silent';
process.env.NODE_ENV ??= 'test';
// The processes tests spawn (sip-server, media-app) would otherwise all open their metrics listener on
// the same fixed default port; a test that wants one names a free port (test/observability/).
process.env.SIP_METRICS_LISTEN ??= 'off';
process.env.MEDIA_APP_METRICS_LISTEN ??= 'off';

const ROOT = path.resolve(__dirname, '../..');
const QUARANTINE = readQuarantine(path.join(ROOT, QUARANTINE_FILE));

/** A test the list names carries its entry, for test/support/reporter.js. */
export type QuarantinedTest = Mocha.Test & { quarantine?: QuarantineEntry };

/** A spec file's path as the list names it: relative to the repository, `/`-separated. */
const relative = (file: string) => path.relative(ROOT, file).split(path.sep).join('/');

function allTests(suite: Mocha.Suite): Mocha.Test[] {
  return [...suite.tests, ...suite.suites.flatMap(allTests)];
}

/**
 * Before the first test of the run: every loaded test the list names is marked with its entry and, in
 * the split run (scripts/test-run.ts sets TEST_QUARANTINE_RETRY=1), given one retry; no other test gets
 * one here. An entry whose spec file is loaded but holds no test of its title fails the run at once.
 */
function applyQuarantine(root: Mocha.Suite): void {
  const byKey = new Map(QUARANTINE.map((e) => [quarantineKey(e), e]));
  const loaded = allTests(root).map((test) => ({ test, file: relative(test.file ?? ''), title: test.fullTitle() }));
  // a run narrowed by .only drops the other tests of a file: their entries are not looked for
  const only = (root as Mocha.Suite & { hasOnly?: () => boolean }).hasOnly?.() ?? false; // mocha's, not in its types
  const stale = only ? [] : staleEntries(QUARANTINE, loaded);
  if (stale.length > 0) throw new Error(staleMessage(stale));
  const retry = process.env.TEST_QUARANTINE_RETRY === '1';
  for (const t of loaded) {
    const entry = byKey.get(quarantineKey(t));
    if (!entry) continue;
    (t.test as QuarantinedTest).quarantine = entry;
    if (retry) t.test.retries(Math.max(t.test.retries(), 1));
  }
}

export const mochaHooks: Mocha.RootHookObject = {
  // named: a failure reads '"before all" hook: quarantineList'
  beforeAll: function quarantineList(this: Mocha.Context) {
    // a root hook's parent is the root suite, which holds every loaded spec file's suites
    const root = this.test?.parent;
    if (root) applyQuarantine(root);
  },
};
