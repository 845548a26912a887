/**
 * flite (CMU), a second offline voice: English only; voices kal, kal16, awb, rms, slt. SSML is
 * passed with `-ssml` (flite understands a subset). Output converted to 8 kHz by sox.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readWavInfo } from '../audio/wav';
import { TtsError, type TtsOptions, type TtsProvider, type TtsResult } from './provider';
import { runCommand, soxToEngine } from './run';

export interface FliteOptions {
  outDir: string;
  /** Default voice. Default 'slt' (female); 'male' maps to 'rms'. */
  voice?: string;
  timeoutMs?: number;
  name?: string;
  /** Used for languages other than English (flite has only English voices). */
  fallback?: TtsProvider & { synthesize(text: string, o?: TtsOptions, outPath?: string): Promise<TtsResult> };
}

const GENDER: Record<string, string> = { female: 'slt', male: 'rms' };

/** Whether the flite binary is installed. */
export function fliteAvailable(): boolean {
  // `flite --version` exits 1; only a failure to start means it is missing.
  return !spawnSync('flite', ['-lv'], { stdio: 'ignore' }).error;
}

export class FliteProvider implements TtsProvider {
  readonly name: string;

  constructor(private readonly opts: FliteOptions) {
    this.name = opts.name ?? 'flite';
  }

  async synthesize(text: string, o: TtsOptions = {}, outPath?: string): Promise<TtsResult> {
    if (!text.trim()) throw new TtsError('EMPTY_TEXT', 'nothing to say');
    const lang = (o.language ?? 'en-US').toLowerCase();
    if (!lang.startsWith('en') && this.opts.fallback) return this.opts.fallback.synthesize(text, o, outPath);
    if (!lang.startsWith('en')) throw new TtsError('UNSUPPORTED_LANGUAGE', `flite speaks English only, not "${o.language}"`);
    const v = o.voice ? (GENDER[o.voice.toLowerCase()] ?? o.voice) : (this.opts.voice ?? 'slt');
    if (!/^[a-z0-9_]+$/i.test(v)) throw new TtsError('SYNTHESIS_FAILED', `bad flite voice name "${v}"`);
    const out = outPath ?? path.join(this.opts.outDir, `flite-${crypto.randomUUID()}.wav`);
    fs.mkdirSync(path.dirname(out), { recursive: true });
    // Text goes through a file: flite takes an argument with a space as text, which breaks on
    // texts that look like file names.
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'flite-'));
    try {
      const txt = path.join(tmp, 'in.txt');
      const raw = path.join(tmp, 'out.wav');
      fs.writeFileSync(txt, text);
      const timeout = this.opts.timeoutMs ?? 20000;
      await runCommand('flite', ['-voice', v, ...(o.ssml ? ['-ssml'] : []), '-f', txt, '-o', raw], timeout);
      await soxToEngine(raw, out, timeout, !!o.wideband);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
    return { path: out, durationMs: readWavInfo(out).durationMs };
  }
}
