// A recording's `.mp3` is sox's output (control-api/twilio/mp3.ts): its status waits for sox's first bytes, so a
// sox that cannot start or ends with nothing is an error to report, not a 200 with no body, and a spawn failure
// is an 'error' event handled, never one that ends the API process. Real sox on real files.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { mp3Of, Mp3Unavailable } from '../../control-api/twilio/mp3';

async function drain(s: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of s) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

describe('twilio: a recording as MP3 (sox)', function () {
  this.timeout(20_000);
  let dir: string;
  before(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mp3-'))));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a WAV file: MP3 bytes from the first chunk on, decodable, the whole length', async () => {
    const wav = path.join(dir, 'tone.wav');
    execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-e', 'signed', '-b', '16', wav, 'synth', '2', 'sine', '440']);
    const mp3 = await mp3Of(wav);
    const bytes = await drain(mp3.stream);
    await mp3.ended;
    const out = path.join(dir, 'tone.mp3');
    fs.writeFileSync(out, bytes);
    expect(Number(execFileSync('soxi', ['-D', out], { encoding: 'utf8' }).trim())).to.be.within(1.9, 2.2);
  });

  it('sox not installed: rejects with Mp3Unavailable naming the spawn error, nothing thrown past it', async () => {
    const err = await mp3Of(path.join(dir, 'x.wav'), path.join(dir, 'no-such-sox')).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(Mp3Unavailable);
    expect((err as Error).message).to.match(/sox did not start: ENOENT/);
  });

  it('a file sox cannot read: rejects with its exit and its words, not an empty MP3', async () => {
    const bad = path.join(dir, 'bad.wav');
    fs.writeFileSync(bad, 'not a wave file at all');
    const err = await mp3Of(bad).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(Mp3Unavailable);
    expect((err as Error).message).to.match(/sox ended with exit [1-9]\d* and no output: .+/);
  });
});
