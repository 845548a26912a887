// The browser suites' fake-microphone tone (testkit/webphone/harness.ts toneWav) is one file per tone in the
// system's temporary folder, shared by the parallel mocha processes of scripts/test-run.ts (webphone,
// console and scale sit in different shards). It must appear only whole: a process that finds it while
// another is still writing it would feed Chromium a cut WAV.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

describe('testkit/webphone/harness.ts toneWav: the file appears only whole', function () {
  this.timeout(60_000);

  it('the first time the file is seen, it already has its full size', async () => {
    const hz = 400 + (process.pid % 97);
    const seconds = 300;
    const file = path.join(os.tmpdir(), `webphone-tone-${hz}-${seconds}.wav`);
    fs.rmSync(file, { force: true });
    const full = 44 + seconds * 48_000 * 2;
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', '-e', `require('./testkit/webphone/harness').toneWav(${hz}, ${seconds})`], { cwd: ROOT, stdio: 'ignore' });
    const ended = new Promise<number | null>((resolve) => child.on('close', resolve));
    let done = false;
    void ended.then(() => (done = true));
    let firstSeen = -1;
    try {
      while (!done && firstSeen < 0) {
        try {
          firstSeen = fs.statSync(file).size;
        } catch {
          await new Promise((r) => setImmediate(r));
        }
      }
      expect(await ended, 'toneWav exit').to.equal(0);
      if (firstSeen < 0) firstSeen = fs.statSync(file).size;
      expect(firstSeen, 'size when first seen').to.equal(full);
    } finally {
      child.kill();
      fs.rmSync(file, { force: true });
    }
  });
});
