// The simulated caller's lines made once (evals/speech.ts): the same line said by many calls of a run
// is synthesised by espeak-ng once, each call getting the same samples; another voice is another line.
// espeak-ng is the real one, behind a wrapper on PATH that counts its runs.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { SampleMemo, speak } from '../../evals/speech';

describe("evals caller's voice: a line made once", function () {
  this.timeout(60_000);
  let dir = '';
  let log = '';
  const path0 = process.env.PATH;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'speech-memo-'));
    log = path.join(dir, 'runs.log');
    const real = execFileSync('sh', ['-c', 'command -v espeak-ng'], { encoding: 'utf8' }).trim();
    fs.writeFileSync(path.join(dir, 'espeak-ng'), `#!/bin/sh\necho run >> '${log}'\nexec '${real}' "$@"\n`, { mode: 0o755 });
    process.env.PATH = `${dir}:${path0}`;
  });
  after(() => {
    process.env.PATH = path0;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const runs = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0);

  it('three calls saying the same line (two at once, one after): espeak-ng runs once, each gets the samples', async () => {
    const line = `the memo line ${process.pid}`;
    const [a, b] = await Promise.all([speak(line, 'en-US'), speak(line, 'en-US')]);
    const c = await speak(line, 'en-US');
    expect(runs()).to.equal(1);
    expect(a!.length).to.be.above(4000); // half a second of speech at least
    expect(Buffer.from(b!.buffer).equals(Buffer.from(a!.buffer))).to.equal(true);
    expect(Buffer.from(c.buffer).equals(Buffer.from(a!.buffer))).to.equal(true);
    // each caller its own copy: one changing its samples changes no other's
    a![0] = 12345;
    expect((await speak(line, 'en-US'))[0]).to.not.equal(12345);
    expect(runs()).to.equal(1);
  });

  it('another voice variant of the line is another line: made again', async () => {
    const before = runs();
    await speak(`the memo line ${process.pid}`, 'en-US', { variant: 'f2' });
    expect(runs()).to.equal(before + 1);
  });
});

describe('evals speech memo: bounded by lines and by samples', () => {
  const line = (n: number) => () => Promise.resolve(new Int16Array(n));

  it('keeps the most recently used lines, at most maxSamples in all; the oldest go first', async () => {
    const m = new SampleMemo(10, 1000);
    await m.get('a', line(400));
    await m.get('b', line(400));
    expect(m.size()).to.deep.equal({ lines: 2, samples: 800 });
    await m.get('a', line(400)); // used again: the most recent
    await m.get('c', line(400)); // 1200 > 1000: the oldest (b) goes
    expect(m.size()).to.deep.equal({ lines: 2, samples: 800 });
    let made = 0;
    await m.get('a', () => (made++, Promise.resolve(new Int16Array(400))));
    expect(made, 'a kept').to.equal(0);
    await m.get('b', () => (made++, Promise.resolve(new Int16Array(400))));
    expect(made, 'b made again').to.equal(1);
  });

  it('at most maxLines; a line that failed is not kept', async () => {
    const m = new SampleMemo(2, 1e9);
    for (const k of ['a', 'b', 'c']) await m.get(k, line(1));
    expect(m.size().lines).to.equal(2);
    const n = new SampleMemo(2, 1e9);
    await n.get('a', line(1));
    await n.get('x', () => Promise.reject(new Error('espeak-ng failed'))).catch(() => undefined);
    expect(n.size()).to.deep.equal({ lines: 1, samples: 1 });
  });
});
