// The quarantine list (test/support/quarantine.json, scripts/quarantine.ts) as a rule: the only tests the
// test command runs once more when they fail, each named by an existing spec file and its full title, with
// the reason it is there; short. That an entry's test exists in its file is checked where the file is
// loaded (test/support/hooks.ts fails the run: test/scripts/test-run.test.ts shows it).
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { missingSpecFiles, QUARANTINE_FILE, QUARANTINE_MAX, readQuarantine, staleEntries, type QuarantineEntry } from '../../scripts/quarantine';

const ROOT = path.resolve(__dirname, '../..');

describe('architecture: the quarantine list', () => {
  it(`is well formed, at most ${QUARANTINE_MAX} tests, each in a spec file that exists, its last title words in that file`, () => {
    const list = readQuarantine(path.join(ROOT, QUARANTINE_FILE));
    expect(list.length).to.be.at.most(QUARANTINE_MAX);
    expect(missingSpecFiles(ROOT, list).map((e) => e.file)).to.deep.equal([]);
    for (const e of list) {
      // mocha's full title ends with the test's own; its last words are written in the spec file
      const tail = e.title.split(' ').slice(-4).join(' ');
      expect(fs.readFileSync(path.join(ROOT, e.file), 'utf8'), `${e.file}: "${tail}"`).to.include(tail);
    }
  });

  it('refuses a list that is not one: bad fields, no reason, a path outside test/, a test twice, too many', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarantine-'));
    const file = path.join(dir, 'q.json');
    const entry = { file: 'test/a/b.test.ts', title: 'a b', reason: 'fails under load for a reason written here' };
    const refused = (tests: unknown, note: unknown = 'n') => {
      fs.writeFileSync(file, JSON.stringify({ note, tests }));
      return () => readQuarantine(file);
    };
    try {
      expect(refused([entry, { ...entry, title: 'a c', issue: 53 }])()).to.have.length(2);
      expect(refused([{ ...entry, reason: 'flaky' }])).to.throw(/tests\.0\.reason: a reason says what fails/);
      for (const bad of ['../x.test.ts', '/abs/x.test.ts', 'src/x.test.ts', 'test/x.ts']) expect(refused([{ ...entry, file: bad }]), bad).to.throw(/tests\.0\.file/);
      expect(refused([{ ...entry, title: ' ' }])).to.throw(/tests\.0\.title/);
      expect(refused([{ ...entry, issue: 'fifty' }])).to.throw(/tests\.0\.issue/);
      expect(refused([{ ...entry, owner: 'me' }])).to.throw(/tests\.0/);
      expect(refused([entry, entry])).to.throw(/listed twice: test\/a\/b\.test\.ts :: a b/);
      const many = Array.from({ length: QUARANTINE_MAX + 1 }, (_, i) => ({ ...entry, title: `t${i}` }));
      expect(refused(many)).to.throw(/short by rule/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an entry is stale when its file is loaded without its test; a file not loaded is not looked in', () => {
    const e = (file: string, title: string): QuarantineEntry => ({ file, title, reason: 'a reason long enough to be one, for the check' });
    const loaded = [
      { file: 'test/a/x.test.ts', title: 'x one' },
      { file: 'test/a/x.test.ts', title: 'x two' },
    ];
    const list = [e('test/a/x.test.ts', 'x one'), e('test/a/x.test.ts', 'x renamed'), e('test/b/y.test.ts', 'y')];
    expect(staleEntries(list, loaded).map((s) => s.title)).to.deep.equal(['x renamed']);
  });
});
