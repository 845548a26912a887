/**
 * The simulated caller's voice: espeak-ng (the platform's local voice) speaks a turn's text into a
 * WAV, sox makes it 8 kHz mono 16-bit; the samples are trimmed to their loud part, so a say() starts
 * and ends with the speech itself. Run as child processes (never on the event loop that paces RTP).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
/** below this level a sample is the silence around the words */
const QUIET = 300;

/** espeak-ng's voice for a BCP 47 tag (en-US → en-us). */
export const espeakVoice = (language: string): string => language.toLowerCase();

/**
 * Lines already made, by (text, voice), as their samples: espeak-ng says a line the same way each time,
 * and a run's calls say the same lines; at 50 concurrent calls each made its own, 100 child processes
 * started by the callers' event loop while it paced the calls already up. The most recently used
 * MEMO_LINES are kept (each a few seconds of 8 kHz audio, 16 kB a second); a line that failed is not.
 */
const MEMO_LINES = 64;
const memo = new Map<string, Promise<Int16Array>>();

/** `variant`: an espeak-ng voice variant (m1…m7, f1…f4: another talker, the babble's). Each caller gets its own copy of the samples. */
export async function speak(text: string, language: string, o: { variant?: string } = {}): Promise<Int16Array> {
  const key = JSON.stringify([text, espeakVoice(language), o.variant ?? '']);
  let made = memo.get(key);
  if (made)
    memo.delete(key); // re-inserted below: the most recently used last
  else {
    made = synthesise(text, language, o);
    const mine = made;
    void made.catch(() => memo.get(key) === mine && memo.delete(key));
  }
  memo.set(key, made);
  while (memo.size > MEMO_LINES) memo.delete(memo.keys().next().value!);
  return (await made).slice();
}

async function synthesise(text: string, language: string, o: { variant?: string }): Promise<Int16Array> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'evals-say-'));
  try {
    const wav = path.join(dir, 's.wav');
    const raw = path.join(dir, 's.raw');
    await run('espeak-ng', ['-v', espeakVoice(language) + (o.variant ? `+${o.variant}` : ''), '-w', wav, '--', text]);
    await run('sox', [wav, '-r', '8000', '-c', '1', '-e', 'signed', '-b', '16', '-t', 'raw', raw]);
    const b = await fs.readFile(raw);
    const x = new Int16Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
    let first = 0;
    let last = x.length;
    while (first < x.length && Math.abs(x[first]!) < QUIET) first++;
    while (last > first && Math.abs(x[last - 1]!) < QUIET) last--;
    return x.slice(first, last);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
