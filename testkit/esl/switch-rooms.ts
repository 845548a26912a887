// Rooms of our switch through fsmrf's public API (MediaServer.createConference, Endpoint.join), on the
// switch rig (switch-rig.ts, all real on loopback): each member a channel whose far end is a media-engine
// endpoint talking a tone (real RTP), and what a member hears measured at its far end by the share of each
// tone. The esl conference suites (conference, relate, member stop) share it; the fsmrf backend's rooms
// (fsmrf-rooms.ts) measure with `toneSharesHeard` too.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { Conference } from 'drachtio-fsmrf';
import type { Endpoint } from '../../media-engine';
import { toneShare } from '../media-engine/far-end';
import { readWav } from '../media-engine/support';
import type { RawClient } from './client';
import { useFsmrfRig, type FsmrfFixture, type FsmrfRig, type RigCall } from './switch-rig';

/** A sine of `hz` for `secs` at half scale, 8 kHz 16-bit mono, written by sox to `file`. */
export function soxTone(file: string, hz: number, secs: number): string {
  execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', file, 'synth', String(secs), 'sine', String(hz), 'vol', '0.5']);
  return file;
}

/**
 * The share of each tone in what the far end hears over 1 s: a 1.5 s recording into `file`, its first
 * 0.5 s (what was in flight) left out. A far end's recording holds its own tone too: a member that hears
 * one other has about half of each.
 */
export async function toneSharesHeard(peer: Endpoint, file: string, ...hz: number[]): Promise<number[]> {
  await peer.record(file, { duration: 1.5 });
  const s = readWav(file).samples.subarray(4000);
  return hz.map((f) => toneShare(s, f, 8000));
}

/** A member of a room: its channel and far end, and its member id on the switch. */
export interface SwitchMember extends RigCall {
  id: number;
}

export interface SwitchRooms {
  /** the switch rig and its fixture (calls, subscribers) */
  readonly fx: FsmrfFixture;
  readonly rig: FsmrfRig;
  /** the rig's directory: the switch's sounds directory, recordings under `recordings/` */
  readonly dir: string;
  /** each tone's file, by its frequency (written before the tests) */
  readonly tone: Record<number, string>;
  /** what a test changed on the real parts, undone after it (before the rooms end) */
  readonly undo: (() => void)[];
  /** the switch's own failures since the last check (a test may take the ones it expects) */
  readonly failures: string[];
  /** A room of the switch, ended after the test (before its members' channels hang up). */
  conference(name: string): Promise<Conference>;
  /** A room the test ended itself: not ended again after it. */
  ended(conf: Conference): void;
  /** A member of `conf` talking its tone (none: silent). */
  member(conf: Conference, hz?: number): Promise<SwitchMember>;
  /** toneSharesHeard at `peer`, into a fresh file of the rig's directory. */
  hears(peer: Endpoint, ...hz: number[]): Promise<number[]>;
  /** An inbound client subscribed to the rooms' maintenance events (plain), closed after the test. */
  maintenance(): Promise<RawClient>;
}

/**
 * The switch rig for a describe with rooms on it: `tones` ([hz, seconds]) written into its directory, every
 * room a test made ended after it, and after each test the switch's own failures (a handler that threw, an
 * engine call that failed) must be none.
 */
export function useSwitchRooms(tones: readonly (readonly [number, number])[]): SwitchRooms {
  const tone: Record<number, string> = {};
  const confs: Conference[] = [];
  const failures: string[] = [];
  const undo: (() => void)[] = [];
  // before the rig's own afterEach: the rooms end before their members' channels hang up
  afterEach(async () => {
    for (const u of undo.splice(0)) u();
    for (const c of confs.splice(0)) await c.destroy().catch(() => undefined);
  });
  const fx = useFsmrfRig((d) => ({ conferenceFiles: { recordings: path.join(d, 'recordings'), sounds: d } }));
  before(() => {
    fx.rig.esl.on('failed', (e) => failures.push(e.message));
    for (const [hz, secs] of tones) tone[hz] = soxTone(path.join(fx.dir, `tone${hz}.wav`), hz, secs);
  });
  afterEach(() => {
    expect(failures.splice(0), "the switch's own failures").to.deep.equal([]);
  });
  let n = 0;
  return {
    fx,
    get rig() {
      return fx.rig;
    },
    get dir() {
      return fx.dir;
    },
    tone,
    undo,
    failures,
    async conference(name) {
      const c = await fx.rig.ms.createConference(name);
      confs.push(c);
      return c;
    },
    ended(conf) {
      const i = confs.indexOf(conf);
      if (i >= 0) confs.splice(i, 1);
    },
    async member(conf, hz) {
      const m = await fx.call();
      const { memberId } = await m.ep.join(conf);
      if (hz) void m.peer.play(tone[hz]!).catch(() => undefined);
      return { ...m, id: Number(memberId) };
    },
    hears: (peer, ...hz) => toneSharesHeard(peer, path.join(fx.dir, `hears-${n++}.wav`), ...hz),
    maintenance: () => fx.subscriber('CUSTOM conference::maintenance'),
  };
}
