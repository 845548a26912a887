// No process may end because a child process could not start: a spawn failure (ENOENT: the program is not
// installed; EAGAIN: no process slot) is an 'error' event on the ChildProcess, and an 'error' event with no
// listener is thrown out of the event loop. Every file of the platform that spawns handles 'error' (a file's
// children get theirs where they are made: control-api/twilio/mp3.ts, media-engine/tts/run.ts's collect).
// A coarse claim that finds a file that forgot it, as control-api's MP3 download did (test/twilio/mp3.test.ts).
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, sourceFiles } from './source-files';

const ROOMS = ['core', 'control-api', 'media-app', 'media-engine', 'sip-server', 'esl', 'evals', 'scripts'];

/** True when the file spawns a child (spawn, fork) and never listens for an 'error' event. */
export function spawnsUnheard(text: string): boolean {
  const code = text
    .split('\n')
    .filter((l) => !/^\s*(\/\/|\*)/.test(l))
    .join('\n');
  return /\b(?:spawn|fork)\(/.test(code) && !/\.(?:on|once)\('error',/.test(code);
}

describe('architecture: a child process that cannot start ends nothing', () => {
  it('the check finds a spawn without an error handler and lets a handled one through', () => {
    expect(spawnsUnheard("const c = spawn('sox', args);\nc.stdout.pipe(res);")).to.equal(true);
    expect(spawnsUnheard("const c = spawn('sox', args);\nc.once('error', fail);")).to.equal(false);
    expect(spawnsUnheard("// spawn('sox') is described here\nconst x = 1;")).to.equal(false);
  });

  it("every file of the platform that spawns listens for 'error'", () => {
    const bad = ROOMS.flatMap(sourceFiles)
      .filter((f) => !f.startsWith('scripts/bench/'))
      .filter((f) => spawnsUnheard(fs.readFileSync(path.join(ROOT, f), 'utf8')));
    expect(bad).to.deep.equal([]);
  });
});
