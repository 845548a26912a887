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
 * started by the callers' event loop while it paced the calls already up. The most recently used are
 * kept, at most MEMO_LINES and MEMO_SAMPLES in all (a line can be a minute: 1000 characters); a line that
 * failed is not. A goal caller's lines (an LLM's, never said twice) are made with `memo: false`.
 */
const MEMO_LINES = 64;
const MEMO_SAMPLES = 4_000_000; // 8 MB: about 8 minutes of 8 kHz speech

/** Samples by key, the most recently used kept: at most `maxLines` and `maxSamples` in all; a make that fails is not kept. */
export class SampleMemo {
  private readonly lines = new Map<string, { made: Promise<Int16Array>; samples: number }>();
  private samples = 0;

  constructor(
    private readonly maxLines: number,
    private readonly maxSamples: number,
  ) {}

  /** The samples of `key`, made by `make` when not kept (one make for callers asking at once). */
  get(key: string, make: () => Promise<Int16Array>): Promise<Int16Array> {
    let m = this.lines.get(key);
    if (m)
      this.lines.delete(key); // re-inserted below: the most recently used last
    else {
      const entry = { made: make(), samples: 0 };
      m = entry;
      entry.made.then(
        (x) => {
          if (this.lines.get(key) !== entry) return;
          entry.samples = x.length;
          this.samples += x.length;
          this.trim();
        },
        () => this.lines.get(key) === entry && this.forget(key),
      );
    }
    this.lines.set(key, m);
    this.trim();
    return m.made;
  }

  size(): { lines: number; samples: number } {
    return { lines: this.lines.size, samples: this.samples };
  }

  private forget(key: string): void {
    const m = this.lines.get(key);
    if (!m) return;
    this.lines.delete(key);
    this.samples -= m.samples;
  }

  private trim(): void {
    while (this.lines.size > this.maxLines || (this.samples > this.maxSamples && this.lines.size > 0)) this.forget(this.lines.keys().next().value!);
  }
}

const memo = new SampleMemo(MEMO_LINES, MEMO_SAMPLES);

/**
 * `variant`: an espeak-ng voice variant (m1…m7, f1…f4: another talker, the babble's); `memo: false`: a line
 * said once, not kept. Each caller gets its own copy of the samples.
 */
export async function speak(text: string, language: string, o: { variant?: string; memo?: boolean } = {}): Promise<Int16Array> {
  if (o.memo === false) return synthesise(text, language, o);
  const key = JSON.stringify([text, espeakVoice(language), o.variant ?? '']);
  return (await memo.get(key, () => synthesise(text, language, o))).slice();
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
