// mocha's spec reporter plus the plain closing line CI reads: "N passed, N failed, N skipped".
// Run as one shard of scripts/test-run.ts (TEST_SHARD of TEST_SHARDS set), the line is prefixed
// "[shard i/n] " so that only the runner's sum over the shards reads as the closing line, and the counts
// and each spec file's seconds are written as JSON to TEST_SUMMARY_FILE for the runner to add up, with
// the tests that passed only on a retry, which are also printed, and the failures. A test of the
// quarantine list (marked by test/support/hooks.ts: the only tests with a retry by default) is reported
// apart, with its outcome: passed, passed on its retry (and its first error), failed, skipped.
'use strict';
const fs = require('node:fs');
const Mocha = require('mocha');
const { EVENT_RUN_END, EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_TEST_RETRY, EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING } = Mocha.Runner.constants;

/** An error's first line, cut at 300 characters. */
function firstLine(err) {
  return String((err && err.message) || err)
    .split('\n')[0]
    .slice(0, 300);
}

class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const began = new Map();
    const fileMs = {};
    // a test that failed and is run again (a quarantined one, or any with TEST_RETRIES): its first error,
    // kept until it passes
    const firstError = new Map();
    const retried = [];
    // the quarantine list's tests: their entry by full title (a retry runs a copy of the test, which the
    // hook did not mark), and the outcome of each, as { file, title, outcome }
    const entries = new Map();
    const quarantine = [];
    const entryOf = (test) => {
      const key = test.fullTitle();
      if (test.quarantine) entries.set(key, test.quarantine);
      return entries.get(key);
    };
    const outcome = (test, what) => {
      const e = entryOf(test);
      if (!e) return false;
      const key = test.fullTitle();
      const first = firstError.get(key);
      const said = what === 'passed' && first !== undefined ? `passed on its retry; its first error: ${first}` : what;
      quarantine.push({ file: e.file, title: e.title, outcome: said });
      return true;
    };
    runner.on(EVENT_TEST_RETRY, (test, err) => {
      entryOf(test);
      const key = test.fullTitle();
      if (!firstError.has(key)) firstError.set(key, firstLine(err));
    });
    // failed on its retry too: mocha shows the last error; the first one may differ (a retry of a test
    // that is not idempotent fails on what its first run left), so it is printed as well
    const failedTwice = [];
    // every failure with its error's first line, for the runner's closing lines (a CI log may keep only
    // its tail, far from where the spec reporter printed the failure)
    const failures = [];
    runner.on(EVENT_TEST_FAIL, (test, err) => {
      const key = test.fullTitle && test.fullTitle();
      if (key && firstError.has(key)) failedTwice.push(`${key}: ${firstError.get(key)}`);
      failures.push(`${key || (test.title ?? 'a hook')}${test.file ? ` (${test.file})` : ''}: ${firstLine(err)}`);
      if (test.type === 'test') outcome(test, `failed: ${firstLine(err)}`);
    });
    runner.on(EVENT_TEST_PASS, (test) => {
      const key = test.fullTitle();
      if (outcome(test, 'passed')) return;
      if (firstError.has(key)) retried.push(`${key}: ${firstError.get(key)}`);
    });
    runner.on(EVENT_TEST_PENDING, (test) => outcome(test, 'skipped'));
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (suite.file && suite.parent && suite.parent.root) began.set(suite, Date.now());
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      const t = began.get(suite);
      if (t === undefined) return;
      began.delete(suite);
      fileMs[suite.file] = (fileMs[suite.file] || 0) + (Date.now() - t);
    });
    runner.once(EVENT_RUN_END, () => {
      const s = this.stats;
      const shard = process.env.TEST_SHARD && process.env.TEST_SHARDS ? `[shard ${process.env.TEST_SHARD}/${process.env.TEST_SHARDS}] ` : '';
      if (process.env.TEST_SUMMARY_FILE) {
        const files = Object.fromEntries(Object.entries(fileMs).map(([f, ms]) => [f, Math.round(ms / 100) / 10]));
        fs.writeFileSync(process.env.TEST_SUMMARY_FILE, JSON.stringify({ passed: s.passes, failed: s.failures, skipped: s.pending, files, retried, failures, quarantine }));
      }
      for (const q of quarantine) process.stdout.write(`\n${shard}quarantined: ${q.title}: ${q.outcome}`);
      for (const t of retried) process.stdout.write(`\n${shard}passed on a retry: ${t}`);
      for (const t of failedTwice) process.stdout.write(`\n${shard}failed on its retry too; its first error: ${t}`);
      process.stdout.write(`\n${shard}${s.passes} passed, ${s.failures} failed, ${s.pending} skipped\n`);
    });
  }
}
module.exports = SpecWithSummary;
