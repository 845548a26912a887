/**
 * Local audio on a call for the voicemail actions: greetings and messages are WAVs of the recordings
 * store, played on the call's endpoint (never through play's URLs, which only fetch http(s)); prompts
 * are spoken. Prompts and messages stop at the first key pressed (barge-in), which the caller's
 * DigitQueue keeps.
 */
import fs from 'node:fs';
import path from 'node:path';
import { storageBackend } from '../../core/storage/backend';
import type { CallPort } from '../flow/call-port';
import { abortError } from '../kit/clock';
import type { VoicemailDeps } from './service';
import { recordingsDir } from '../../core/data-dirs';
import { BEEP_TONE } from '../kit/tones';

/** Text for TTS: customer text (a box name) never turns into markup. */
export function speakable(s: string): string {
  return s.replace(/[<>&]/g, ' ').trim();
}

/** The keys a caller pressed, in order, kept across prompts (a key pressed during a prompt is a choice). */
export class DigitQueue {
  private readonly keys: string[] = [];
  private waiter: (() => void) | null = null;
  private readonly onDigit = (d: string) => {
    this.keys.push(d);
    this.waiter?.();
  };

  constructor(private readonly call: CallPort) {
    call.on('dtmf', this.onDigit);
  }

  close(): void {
    this.call.off('dtmf', this.onDigit);
  }

  get pending(): boolean {
    return this.keys.length > 0;
  }

  clear(): void {
    this.keys.length = 0;
  }

  /** The next key, or '' after `timeoutMs` without one. */
  async next(timeoutMs: number, signal: AbortSignal): Promise<string> {
    if (signal.aborted) throw abortError(signal);
    const k = this.keys.shift();
    if (k !== undefined) return k;
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        clearTimeout(t);
        signal.removeEventListener('abort', onAbort);
        this.waiter = null;
      };
      const t = setTimeout(() => {
        done();
        resolve();
      }, timeoutMs);
      const onAbort = () => {
        done();
        reject(abortError(signal));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiter = () => {
        done();
        resolve();
      };
    });
    return this.keys.shift() ?? '';
  }

  /** Keys up to `max` or the terminator `#` (not kept), each within `timeoutMs`. */
  async read(max: number, timeoutMs: number, signal: AbortSignal): Promise<string> {
    let s = '';
    while (s.length < max) {
      const k = await this.next(timeoutMs, signal);
      if (k === '' || k === '#') break;
      s += k;
    }
    return s;
  }
}

export class CallAudio {
  constructor(
    private readonly svc: VoicemailDeps,
    private readonly call: CallPort,
    private readonly language: string,
    /** When set, a key pressed stops the prompt (and stays in the queue). */
    private readonly digits: DigitQueue | null,
  ) {}

  private async endpoint(signal: AbortSignal) {
    await this.call.prepareMedia(signal);
    const ep = this.svc.endpointOf(this.call.info.id);
    if (!ep) throw new Error('voicemail: the call has no media');
    return ep;
  }

  private async run(signal: AbortSignal, play: (ep: Awaited<ReturnType<CallAudio['endpoint']>>) => Promise<unknown>): Promise<void> {
    if (this.digits?.pending) return;
    const ep = await this.endpoint(signal);
    const onAbort = () => void ep.stopPlayback().catch(() => undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await play(ep);
      if (signal.aborted) throw abortError(signal);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  async say(text: string, signal: AbortSignal): Promise<void> {
    await this.run(signal, (ep) => ep.say(text, { language: this.language || undefined, bargeIn: this.digits !== null }));
  }

  async beep(signal: AbortSignal): Promise<void> {
    await this.run(signal, (ep) => ep.play(BEEP_TONE));
  }

  /** Plays a file of the recordings store (a local copy when it is in object storage). */
  async file(filename: string, signal: AbortSignal): Promise<void> {
    const copy = await storageBackend(this.svc.config).recordings.localCopy(path.basename(filename));
    if (!copy) throw new Error(`voicemail: audio ${path.basename(filename)} is missing`);
    try {
      await this.run(signal, (ep) => ep.play(copy.path, { bargeIn: this.digits !== null }));
    } finally {
      await copy.release();
    }
  }

  /** Records the caller to a new file of the recordings store, until `#`, silence or `maxSec`. */
  async record(filename: string, maxSec: number, signal: AbortSignal): Promise<{ durationMs: number }> {
    const ep = await this.endpoint(signal);
    const dir = recordingsDir(this.svc.config.dataDir);
    fs.mkdirSync(dir, { recursive: true });
    const onAbort = () => void ep.stopRecord().catch(() => undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const r = await ep.record(path.join(dir, path.basename(filename)), { end_of_key: '#', end_of_silence: 5, duration: maxSec });
      return { durationMs: r.recordMilliseconds };
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }
}
