/**
 * Silero VAD v5 against WebRTC VAD (fvad, mode 2: what ai_talk's tap uses) on the same audio, the
 * measurement behind `vad_config.engine`'s default (docs/ai.md "Turn-taking"): for espeak-ng
 * utterances (8 kHz µ-law, as a phone leg hears them; and 16 kHz) the delay from the first loud
 * frame to the turn's 'start' and whether the turn was found at all; on noise (white, pink, brown
 * at telephone levels, and 50 Hz hum with harmonics) the false turn starts per minute. Both with
 * the voice loop's turn logic: a turn starts after 200 ms of speech.
 *
 *   npx tsx scripts/bench/ai/vad-compare.ts
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createVad } from '../../../media-engine/dsp/vad';
import { SpeechTurns } from '../../../media-engine/dsp/speech-turns';
import { SileroVad } from '../../../media-app/ai/vad/silero';

const START_MS = 200;
const STOP_MS = 500;

const UTTERANCES = [
  'What time is it.',
  'I would like to book a table for two tomorrow evening.',
  'Stop.',
  'Wait, no, that is not what I said.',
  'okay',
  'mm hm',
  'Can you tell me more about the second option please.',
  'My number is five five five, one two three four.',
];

/** sox/espeak-ng output as 16-bit mono PCM at `rate` (through µ-law at 8 kHz, as a phone leg carries it). */
function pcm(args: string[], rate: 8000 | 16000, dir: string): Int16Array {
  const raw = path.join(dir, `x${Math.random()}.raw`);
  const via = rate === 8000 ? path.join(dir, `x${Math.random()}.ul`) : null;
  if (via) {
    execFileSync('sox', [...args, '-r', '8000', '-c', '1', '-t', 'ul', via]);
    execFileSync('sox', ['-t', 'ul', '-r', '8000', '-c', '1', via, '-t', 'raw', '-e', 'signed', '-b', '16', raw]);
  } else execFileSync('sox', [...args, '-r', String(rate), '-c', '1', '-t', 'raw', '-e', 'signed', '-b', '16', raw]);
  const b = fs.readFileSync(raw);
  return new Int16Array(b.buffer, b.byteOffset, b.length >> 1);
}

function padded(x: Int16Array, rate: number, leadMs: number, trailMs: number): Int16Array {
  const out = new Int16Array(Math.round((rate * (leadMs + trailMs)) / 1000) + x.length);
  out.set(x, Math.round((rate * leadMs) / 1000));
  return out;
}

function firstLoudMs(x: Int16Array, rate: number): number {
  const n = rate / 50;
  for (let i = 0; i + n <= x.length; i += n) {
    let s = 0;
    for (let k = i; k < i + n; k++) s += Math.abs(x[k]!);
    if (s / n > 300) return (i / rate) * 1000;
  }
  return -1;
}

/** fvad (8 kHz only: the tap runs on the leg's 8 kHz frames): turn starts, ms. */
async function fvadStarts(x: Int16Array, inTurn = { ms: 0 }): Promise<number[]> {
  const vad = await createVad({ mode: 2, engine: 'fvad' });
  const turns = new SpeechTurns({ startMs: START_MS, stopMs: STOP_MS });
  const starts: number[] = [];
  for (let i = 0, t = 0; i + 160 <= x.length; i += 160) {
    t += 20;
    if (turns.push(vad.process(x.subarray(i, i + 160))) === 'start') starts.push(t);
    if (turns.inTurn) inTurn.ms += 20;
  }
  vad.close();
  return starts;
}

async function sileroStarts(x: Int16Array, rate: 8000 | 16000, inTurn = { ms: 0 }): Promise<number[]> {
  const v = await SileroVad.open({ rate, startMs: START_MS, stopMs: STOP_MS });
  const starts: number[] = [];
  const f = rate / 50;
  const written = Math.floor(x.length / f) * f;
  const windows = Math.floor(written / (rate === 8000 ? 256 : 512));
  let seen = 0;
  const done = new Promise<void>((resolve) => {
    v.on('prob', () => {
      if (v.inTurn) inTurn.ms += 32;
      if (++seen === windows) resolve();
    });
  });
  v.on('speech', (e) => e.state === 'start' && starts.push(e.offsetMs));
  for (let i = 0; i + f <= x.length; i += f) v.write(x.subarray(i, i + f));
  await done;
  v.close();
  return starts;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vad-compare-'));
  try {
    const rows: string[] = [];
    for (const rate of [8000, 16000] as const) {
      const delays: Record<string, number[]> = { fvad: [], silero: [] };
      const missed: Record<string, number> = { fvad: 0, silero: 0 };
      for (const text of UTTERANCES) {
        const wav = path.join(dir, 'u.wav');
        execFileSync('espeak-ng', ['-v', 'en-us', '-s', '160', '-w', wav, text]);
        const x = padded(pcm([wav], rate, dir), rate, 500, 800);
        const onset = firstLoudMs(x, rate);
        const engines: [string, Promise<number[]>][] = [['silero', sileroStarts(x, rate)]];
        if (rate === 8000) engines.push(['fvad', fvadStarts(x)]);
        for (const [name, p] of engines) {
          const s = (await p).find((t) => t >= onset);
          if (s === undefined) missed[name]!++;
          else delays[name]!.push(s - onset);
        }
      }
      for (const name of rate === 8000 ? ['fvad', 'silero'] : ['silero'])
        rows.push(
          `${rate} Hz ${name}: turn start after speech onset p50 ${pct(delays[name]!, 50).toFixed(0)} ms, max ${Math.max(...delays[name]!).toFixed(0)} ms; missed ${missed[name]} of ${UTTERANCES.length}`,
        );
    }
    const NOISE_S = 30;
    const noises: [string, string[]][] = [
      ['white -20 dBFS', ['-n', '-t', 'wav', path.join(dir, 'n.wav'), 'synth', String(NOISE_S), 'whitenoise', 'gain', '-20']],
      ['white -30 dBFS', ['-n', '-t', 'wav', path.join(dir, 'n.wav'), 'synth', String(NOISE_S), 'whitenoise', 'gain', '-30']],
      ['pink -20 dBFS', ['-n', '-t', 'wav', path.join(dir, 'n.wav'), 'synth', String(NOISE_S), 'pinknoise', 'gain', '-20']],
      ['brown -15 dBFS', ['-n', '-t', 'wav', path.join(dir, 'n.wav'), 'synth', String(NOISE_S), 'brownnoise', 'gain', '-15']],
      ['hum 50 Hz+harmonics -20 dBFS', ['-n', '-t', 'wav', path.join(dir, 'n.wav'), 'synth', String(NOISE_S), 'square', '50', 'gain', '-20']],
      ['pink bursts (door, rustle) -12 dBFS', ['-n', '-t', 'wav', path.join(dir, 'n.wav'), 'synth', String(NOISE_S), 'pinknoise', 'tremolo', '0.7', '100', 'gain', '-12']],
    ];
    for (const [name, args] of noises) {
      execFileSync('sox', args);
      const x8 = pcm([path.join(dir, 'n.wav')], 8000, dir);
      const x16 = pcm([path.join(dir, 'n.wav')], 16000, dir);
      const t = { f: { ms: 0 }, s8: { ms: 0 }, s16: { ms: 0 } };
      const f = (await fvadStarts(x8, t.f)).length;
      const s8 = (await sileroStarts(x8, 8000, t.s8)).length;
      const s16 = (await sileroStarts(x16, 16000, t.s16)).length;
      const share = (o: { ms: number }) => `${((100 * o.ms) / (NOISE_S * 1000)).toFixed(0)} %`;
      rows.push(
        `noise ${name}: false turn starts per minute / share of the time taken for speech: fvad ${((f * 60) / NOISE_S).toFixed(0)} / ${share(t.f)}, silero 8k ${((s8 * 60) / NOISE_S).toFixed(0)} / ${share(t.s8)}, silero 16k ${((s16 * 60) / NOISE_S).toFixed(0)} / ${share(t.s16)}`,
      );
    }
    console.log(rows.join('\n'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}

void main();
