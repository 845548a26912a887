// Rooms of media-app's fsmrf backend (FsmrfMix) on our switch (fsmrf-suite.ts, all real on loopback), with
// the prompts directory media-app shares with the switch (shared-prompts.ts: the switch's sounds
// directory, files fetched through an egress policy that allows loopback) and a real HTTP server on
// loopback serving one WAV there. Each member is a leg called through the backend whose far end is a
// media-engine endpoint (real RTP); its member id, its `conference <room> …` and its flags are read from
// the switch. The announcement and member-hold suites share it.
import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { wavFile } from '../../core/audio/wav';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';
import type { FsmrfConnectOptions } from '../../media-app/media-server/fsmrf/backend';
import type { FsmrfMix } from '../../media-app/media-server/fsmrf/conference';
import type { FsmrfCallEndpoint } from '../../media-app/media-server/fsmrf/endpoint';
import { SharedPrompts } from '../../media-app/media-server/fsmrf/shared-prompts';
import type { Endpoint } from '../../media-engine';
import { listenOnLoopback } from '../loopback-server';
import { nextAction, PASSWORD, subscribed } from './client';
import { useFsmrfSuite, type FsmrfSuite } from './fsmrf-suite';
import { toneSharesHeard } from './switch-rooms';

/** `samples` of a sine of `hz` at 8 kHz (amplitude 8000), as a WAV file's bytes. */
export const toneWav = (hz: number, samples: number): Buffer =>
  wavFile(
    Int16Array.from({ length: samples }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / 8000))),
    8000,
  );

/** A member of a backend room: its leg and far end, its id on the switch, its room's API and its flags there. */
export interface FsmrfMember {
  mix: FsmrfMix;
  leg: FsmrfCallEndpoint;
  peer: Endpoint;
  id: number;
  /** the switch's `conference <room> <args>`, its body */
  api(args: string): Promise<string>;
  /** the member's flags in the room's list (hold, floor, …) */
  flags(): Promise<string>;
}

export interface FsmrfRooms {
  readonly suite: FsmrfSuite;
  /** the directory media-app shares with the switch (the switch's sounds directory) */
  readonly shared: string;
  /** the URL of the served WAV (set before the tests) */
  readonly url: string;
  /** what a test changed on the real parts, undone after it (before its rooms end) */
  readonly undo: (() => void)[];
  /** the files left in the shared prompts directory */
  left(): string[];
  /** A leg in a room of its own (ended after the test), or `into` another's. */
  member(into?: FsmrfMix): Promise<FsmrfMember>;
  /** The switch's next maintenance event `action` of member `id`, from a client subscribed now (closed after the test). */
  maintenance(): Promise<(action: string, id: number) => Promise<Record<string, string>>>;
  /** 0.8 s of 700 Hz played to `m` now (nomux): the switch queues a member's files, the next one after it. */
  playEarlier(m: FsmrfMember): Promise<void>;
  /** The share of `hz` in what `peer` hears over 1 s (toneSharesHeard, into the suite's directory). */
  hears(peer: Endpoint, hz: number): Promise<number>;
  /** The switch's channel of `leg` holds what it is asked to `say` or `play` until the test ends (a switch that never ends it). */
  holdOnSwitch(leg: FsmrfCallEndpoint, method: 'say' | 'play'): void;
}

/**
 * The backend's rooms for a describe: rooms named `<prefix><pid>x<n>`, the WAV `serve.body` served at
 * `/<serve.name>`, the backend connected with `connect` (its timers, say). After each test (after the
 * suite's legs end) what it changed is undone and its rooms end; after them all the server closes and the
 * shared directory goes.
 */
export function useFsmrfRooms(opts: { prefix: string; serve: { name: string; body: Buffer }; connect?: Partial<FsmrfConnectOptions> }): FsmrfRooms {
  const shared = fs.mkdtempSync(path.join(os.tmpdir(), `fsmrf-${opts.prefix}-`));
  const loopback = new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }));
  const suite = useFsmrfSuite({
    rig: { conferenceFiles: { recordings: path.join(shared, 'recordings'), sounds: shared } },
    ...(opts.connect ? { connect: opts.connect } : {}),
    // the prompts' cache in the shared directory too: a test can find a <Say>'s speech there (its length)
    ready: (backend) => backend.promptsIn(new SharedPrompts(path.join(shared, 'prompts'), loopback, { cacheDir: path.join(shared, 'cache') })),
  });
  const served = serveOnLoopback(opts.serve.name, opts.serve.body);
  after(() => fs.rmSync(shared, { recursive: true, force: true }));
  const undo: (() => void)[] = [];
  const rooms: FsmrfMix[] = [];
  afterEach(async () => {
    for (const u of undo.splice(0)) u();
    for (const r of rooms.splice(0)) await r.destroy().catch(() => undefined);
  });
  let seq = 0;
  let n = 0;
  return {
    suite,
    shared,
    get url() {
      return served.url;
    },
    undo,
    left: () => (fs.existsSync(path.join(shared, 'prompts')) ? fs.readdirSync(path.join(shared, 'prompts')) : []),
    async member(into) {
      const mix = into ?? (await suite.backend.createMix(`${opts.prefix}${process.pid}x${++seq}`));
      if (!into) rooms.push(mix);
      const { leg, peer } = await suite.call();
      await mix.join(leg);
      return memberOf(mix, leg, peer);
    },
    async maintenance() {
      const c = await subscribed(suite.rig.port, PASSWORD, 'CUSTOM conference::maintenance');
      undo.push(() => c.socket.destroy());
      return (action, id) => nextAction(c, action, id);
    },
    async playEarlier(m) {
      const earlier = path.join(shared, `earlier-${process.pid}.wav`);
      fs.writeFileSync(earlier, toneWav(700, 6400));
      undo.push(() => fs.rmSync(earlier, { force: true }));
      expect(await m.api(`play ${earlier} ${m.id} nomux`)).to.match(/Playing file .* to member/);
    },
    holdOnSwitch: (leg, method) => holdOnSwitch(switchChannel(suite, leg), method, undo),
    hears: async (peer, hz) => (await toneSharesHeard(peer, path.join(suite.dir, `hears-${n++}.wav`), hz))[0]!,
  };
}

/** A real HTTP server on loopback serving `body` at `/<name>` as audio/wav, from before the tests until after them. */
function serveOnLoopback(name: string, body: Buffer): { readonly url: string } {
  let listening: { port: number; close(): Promise<void> } | undefined;
  let url = '';
  before(async () => {
    const server = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'audio/wav' }).end(body));
    server.on('error', () => undefined);
    listening = await listenOnLoopback(server);
    url = `http://127.0.0.1:${listening.port}/${name}`;
  });
  // nothing to close when an earlier hook of the suite failed before this one ran
  after(() => listening?.close());
  return {
    get url() {
      return url;
    },
  };
}

/** `ep`'s say or play holds what it is asked until `undo` runs (then it goes on, and `ep` is as it was). */
function holdOnSwitch(ep: Endpoint, method: 'say' | 'play', undo: (() => void)[]): void {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  if (method === 'say') {
    const real = ep.say.bind(ep);
    ep.say = async (...args) => {
      await held;
      return real(...args);
    };
  } else {
    const real = ep.play.bind(ep);
    ep.play = async (...args) => {
      await held;
      return real(...args);
    };
  }
  undo.push(() => {
    delete (ep as { say?: unknown; play?: unknown })[method];
    release();
  });
}

/** The engine endpoint of the switch's channel for `leg` (the far end of the leg, on the switch). */
function switchChannel(suite: FsmrfSuite, leg: FsmrfCallEndpoint): Endpoint {
  const ch = suite.rig.esl.channels.get(leg.fs.uuid);
  if (!ch) throw new Error(`no channel ${leg.fs.uuid} on the switch`);
  return ch.channel.endpoint;
}

/** The member `leg` of `mix`: its id read from the room's list on the switch. */
async function memberOf(mix: FsmrfMix, leg: FsmrfCallEndpoint, peer: Endpoint): Promise<FsmrfMember> {
  const api = async (args: string) => (await leg.fs.api('conference', `${mix.name} ${args}`)).getBody();
  const list = await api('list');
  const id = Number(new RegExp(`^(\\d+);[^;]*;${leg.fs.uuid};`, 'm').exec(list)?.[1]);
  expect(id, list).to.be.above(0);
  const flags = async () =>
    (await api('list'))
      .split('\n')
      .find((l) => l.startsWith(`${id};`))
      ?.split(';')[5] ?? '';
  return { mix, leg, peer, id, api, flags };
}
