/**
 * The quarantine list (test/support/quarantine.json): the only tests the test command runs a second time
 * when they fail. Every other test gets no retry (scripts/test-run.ts, TEST_RETRIES default 0): a test
 * that fails now and then is either fixed (its cause found: often the product's, a race at the end of an
 * object's life) or listed here with the reason it is known to fail, so that a retry is a decision that
 * shows, not a default that hides the next race.
 *
 * An entry names its spec file and the test's full title (mocha's `fullTitle()`: the describe titles and
 * the test's, joined by spaces), why it is here, and the issue of the product race when it is one.
 * test/support/hooks.ts gives the listed tests their one retry in the split run and fails any mocha run
 * that loads an entry's spec file without finding its test (renamed or removed: the list cannot rot);
 * the runner prints the list with each entry's outcome; test/architecture/quarantine.test.ts holds its shape.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

/** Where the list lives, relative to the repository. */
export const QUARANTINE_FILE = 'test/support/quarantine.json';
/** Short by rule (issue 53): a longer list is a suite that passes by retrying again. */
export const QUARANTINE_MAX = 8;

export const QuarantineEntry = z
  .object({
    /** the spec file, relative to the repository, `/`-separated */
    file: z.string().regex(/^test\/(?:[\w.-]+\/)*[\w.-]+\.test\.ts$/, 'a spec file under test/, as test/<area>/<name>.test.ts'),
    /** the test's full title, as mocha's fullTitle() gives it */
    title: z.string().trim().min(1),
    /** what fails and what is known of why: the runs it failed in, the cause found or not */
    reason: z.string().trim().min(40, 'a reason says what fails and what is known of why'),
    /** the issue of the product race, when the failure is one */
    issue: z.number().int().positive().optional(),
  })
  .strict();
export type QuarantineEntry = z.infer<typeof QuarantineEntry>;

export const QuarantineList = z
  .object({
    note: z.string(),
    tests: z.array(QuarantineEntry).max(QUARANTINE_MAX, `at most ${QUARANTINE_MAX} tests: the list is short by rule`),
  })
  .strict();

/** A test's key: its spec file and full title. */
export const quarantineKey = (e: { file: string; title: string }): string => `${e.file} :: ${e.title}`;

/** The list in `file`, checked; a bad or doubled entry throws, naming the file. */
export function readQuarantine(file: string): QuarantineEntry[] {
  const parsed = QuarantineList.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ');
    throw new Error(`${file}: ${why}`);
  }
  const seen = new Set<string>();
  for (const e of parsed.data.tests) {
    if (seen.has(quarantineKey(e))) throw new Error(`${file}: listed twice: ${quarantineKey(e)}`);
    seen.add(quarantineKey(e));
  }
  return parsed.data.tests;
}

/** The entries whose spec file does not exist under `root`. */
export function missingSpecFiles(root: string, list: readonly QuarantineEntry[]): QuarantineEntry[] {
  return list.filter((e) => !fs.existsSync(path.join(root, e.file)));
}

/**
 * The entries a mocha run cannot find: their spec file is among the `loaded` tests' files but none of
 * those tests has the entry's title.
 */
export function staleEntries(list: readonly QuarantineEntry[], loaded: readonly { file: string; title: string }[]): QuarantineEntry[] {
  const files = new Set(loaded.map((t) => t.file));
  const keys = new Set(loaded.map(quarantineKey));
  return list.filter((e) => files.has(e.file) && !keys.has(quarantineKey(e)));
}

/** The message of a run that found stale entries. */
export function staleMessage(stale: readonly QuarantineEntry[]): string {
  const names = stale.map((e) => `"${e.title}" in ${e.file}`).join('; ');
  return `${QUARANTINE_FILE}: no such test: ${names}. Renamed or removed? Update or remove the entry: the list names only tests that exist.`;
}

/** An entry as the run prints it: its file and title, then its reason and issue. */
export function describeEntry(e: QuarantineEntry): [string, string] {
  return [`${e.file}: ${e.title}`, `why: ${e.reason}${e.issue ? ` (issue ${e.issue})` : ''}`];
}
