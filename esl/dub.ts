/**
 * `uuid_dub` (jambonz's mod_dub, which drachtio-fsmrf's `Endpoint.dub` drives): extra audio tracks
 * mixed into what a channel sends, over whatever it plays (a prompt, a bridge, a conference), as the
 * module's write-replace media bug mixes them. Owns the channel → tracks relation: a track is added by
 * `addTrack`, plays a WAV file (`playOnTrack`, once or looped) or text through the TTS (`sayOnTrack`),
 * is silenced or removed, and ends with the channel's endpoint. Each track is an engine audio fork of
 * the channel whose injected audio is the track (its loop timer owned by the track). Answers as
 * dub_function does: `+OK Success`, `-ERR Operation Failed`, `-ERR Invalid session`, `-USAGE: …`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EspeakProvider, readWav, type AudioFork, type Endpoint } from '../media-engine';
import type { Channel } from './channel';
import { separateString } from './fork/args';
import { injectRateFor, toInjectRate } from './fork/playout';

export const DUB_SYNTAX = '<uuid> [addTrack|removeTrack|silenceTrack|playOnTrack|sayOnTrack|setGain] track [url|text|gain] [gain] [loop]';
/** mod_dub's MAX_DUB_TRACKS */
export const MAX_DUB_TRACKS = 2;

const OK = '+OK Success\n';
const FAILED = '-ERR Operation Failed\n';

/** `gain` dB (atoi's integer) applied to a clip, clamped to 16 bits. */
export function withGain(samples: Int16Array, db: number): Int16Array {
  if (!db) return samples;
  const k = 10 ** (db / 20);
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round(samples[i]! * k)));
  return out;
}

/** C's atoi: the leading integer, 0 when none. */
const atoi = (s: string | undefined) => Number.parseInt(s ?? '', 10) || 0;

/**
 * One track: its engine fork (opened at its first clip) and the clip it plays, looped by a timer it owns.
 * Its plays, silences and close run one after another (two commands at once, bgapi or two connections,
 * would each start a fork and a loop, and leak the first).
 */
class Track {
  private fork: AudioFork | null = null;
  private loop: NodeJS.Timeout | null = null;
  private closed = false;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly endpoint: Endpoint) {}

  /** Plays `samples` (at 8 or 16 kHz) on the track from now, replacing what it played; `loop` again and again. */
  play(samples: Int16Array, rate: 8000 | 16000, loop: boolean): Promise<void> {
    return this.serial(async () => {
      if (this.closed) return;
      await this.quiet();
      this.fork ??= await this.endpoint.forkAudioStart({ mix: 'in', onFrame: () => undefined });
      if (this.closed) return; // the close queued behind this stops the fork
      const ms = (samples.length * 1000) / rate;
      const once = () => this.fork?.inject(samples, rate);
      once();
      if (loop && ms >= 20) this.loop = setInterval(once, ms);
    });
  }

  /** Drops what the track has not played and stops its loop; the track stays. */
  silence(): Promise<void> {
    return this.serial(() => this.quiet());
  }

  /** The loop stops now; the fork once what was asked before is done. */
  close(): void {
    this.closed = true;
    this.stopLoop();
    void this.serial(async () => {
      if (this.fork) await this.endpoint.forkAudioStop(this.fork).catch(() => undefined);
      this.fork = null;
    });
  }

  private async quiet(): Promise<void> {
    this.stopLoop();
    await this.fork?.clearInjected();
  }

  private stopLoop(): void {
    if (this.loop) clearInterval(this.loop);
    this.loop = null;
  }

  private serial(op: () => Promise<void>): Promise<void> {
    const run = this.tail.then(op);
    this.tail = run.catch(() => undefined);
    return run;
  }
}

export interface DubHost {
  /** the live channels by uuid (EslServer.channels) */
  readonly channels: ReadonlyMap<string, { readonly channel: Channel }>;
}

export class DubTracks {
  /** channel uuid → track name → track */
  private readonly byChannel = new Map<string, Map<string, Track>>();
  private tts: EspeakProvider | null = null;

  constructor(private readonly host: DubHost) {}

  /** The tracks of a channel now. */
  tracks(uuid: string): string[] {
    return [...(this.byChannel.get(uuid)?.keys() ?? [])];
  }

  /** `uuid_dub <args>`: its output. */
  async command(args: string): Promise<string> {
    const a = separateString(args.trim(), 6);
    if (a.length < 3 || !a[0] || !a[1] || !a[2]) return FAILED; // "Error with command"
    const channel = this.host.channels.get(a[0])?.channel;
    if (!channel) return '-ERR Invalid session\n';
    const [action, name] = [a[1], a[2]];
    const tracks = this.byChannel.get(channel.uuid);
    const track = tracks?.get(name);
    switch (action) {
      case 'addTrack':
        return this.add(channel, name) ? OK : FAILED;
      case 'removeTrack':
        if (!track) return FAILED;
        track.close();
        tracks!.delete(name);
        return OK;
      case 'silenceTrack':
        if (!track) return FAILED;
        await track.silence();
        return OK;
      case 'playOnTrack':
      case 'sayOnTrack': {
        if (a.length < 4) return `-USAGE: ${DUB_SYNTAX}\n`;
        if (!track) return FAILED;
        const clip = action === 'playOnTrack' ? this.fileClip(a[3]!) : await this.sayClip(a[3]!);
        if (!clip) return FAILED;
        const rate = injectRateFor(clip.rate);
        await track.play(withGain(toInjectRate(clip.samples, clip.rate), atoi(a[5])), rate, action === 'playOnTrack' && a[4] === 'loop');
        return OK;
      }
      default:
        // setGain (the gain of the channel's own audio) is not served: the engine has no such gain
        return action === 'setGain' ? FAILED : `-USAGE: ${DUB_SYNTAX}\n`;
    }
  }

  /** A new track (at most MAX_DUB_TRACKS a channel, names unique); false when refused. */
  private add(channel: Channel, name: string): boolean {
    let tracks = this.byChannel.get(channel.uuid);
    if (tracks?.has(name) || (tracks?.size ?? 0) >= MAX_DUB_TRACKS) return false;
    if (!tracks) {
      const mine = new Map<string, Track>();
      tracks = mine;
      this.byChannel.set(channel.uuid, mine);
      // the channel's end ends its tracks (the module's media bug closes)
      channel.endpoint.once('destroy', () => {
        for (const t of mine.values()) t.close();
        this.byChannel.delete(channel.uuid);
      });
    }
    tracks.set(name, new Track(channel.endpoint));
    return true;
  }

  /**
   * A local WAV file (mono; 8 kHz or a multiple of 8000 up to 64 kHz), an absolute path as the module's
   * file loader takes it. http(s) URLs (the module downloads mp3) are not served: null, -ERR.
   */
  private fileClip(file: string): { samples: Int16Array; rate: number } | null {
    if (!path.isAbsolute(file) || !file.toLowerCase().endsWith('.wav')) return null;
    try {
      const { info, samples } = readWav(file);
      const rate = info.format.sampleRate;
      if (info.format.channels !== 1 || rate % 8000 !== 0 || rate > 64000) return null;
      return { samples, rate };
    } catch {
      return null;
    }
  }

  /** Text spoken by espeak-ng (en-us), the engine's default voice, at 8 kHz; null when it fails. */
  private async sayClip(text: string): Promise<{ samples: Int16Array; rate: number } | null> {
    this.tts ??= new EspeakProvider({ outDir: os.tmpdir() });
    try {
      const r = await this.tts.synthesize(text, { voice: 'en-us' });
      const { samples } = readWav(r.path);
      fs.rmSync(r.path, { force: true });
      return { samples, rate: 8000 };
    } catch {
      return null;
    }
  }
}
