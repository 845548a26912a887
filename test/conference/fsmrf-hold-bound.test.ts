// A held member's music on the fsmrf backend (media-app/media-server/fsmrf/member-hold.ts) has a bound
// for each play, as an announcement's step has (fsmrf-announce-bound.test.ts): a timer armed on the
// backend's timers (here virtual ones: they fire when the test moves time on) once the switch took the
// play, of the file's length and PLAY_SLACK_MS, cleared when the play ends either way. Against our switch
// (testkit/esl/switch-rig.ts, real on loopback): the hold's file is removed from the directory shared with the switch
// after media-app fetched it, so the switch answers `+OK hold` and plays nothing (FreeSWITCH does the same
// with a file it cannot open): no play-file-member-done ever comes. The play fails with MusicTimeout at
// its bound, not before, and the call's music loop (media-app/call/media-state.ts) is told the music
// failed (onMusicFailed: hold-music.ts gives way to the node's music), never a held member left in
// silence. A play the switch ends clears its bound.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { wavFile } from '../../core/audio/wav';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';
import { CallMediaState } from '../../media-app/call/media-state';
import { SharedPrompts } from '../../media-app/media-server/fsmrf/shared-prompts';
import type { FsmrfMix } from '../../media-app/media-server/fsmrf/conference';
import { PLAY_SLACK_MS } from '../../media-app/media-server/fsmrf/conference-say';
import { MusicTimeout } from '../../media-app/media-server/fsmrf/member-hold';
import { boundedOnce, bounded } from '../../testkit/bounded';
import { useFsmrfSuite } from '../../testkit/esl/fsmrf-suite';
import { watchedTimers } from '../support/virtual-timers';

describe('fsmrf hold music: the bound of a held member play', function () {
  this.timeout(30_000);
  const { clock, armings, timers } = watchedTimers();
  const shared = fs.mkdtempSync(path.join(os.tmpdir(), 'fsmrf-hold-bound-'));
  const loopback = new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }));
  let prompts!: SharedPrompts;
  const suite = useFsmrfSuite({
    rig: { conferenceFiles: { recordings: path.join(shared, 'recordings'), sounds: shared } },
    connect: { timers },
    ready: (backend) => backend.promptsIn((prompts = new SharedPrompts(path.join(shared, 'prompts'), loopback, { cacheDir: path.join(shared, 'cache') }))),
  });
  // 1 s of 440 Hz at 8 kHz: its bound is 1000 ms and the slack
  const tone = wavFile(
    Int16Array.from({ length: 8000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000))),
    8000,
  );
  const BOUND_MS = 1000 + PLAY_SLACK_MS;
  let server: http.Server;
  let base = '';
  before(async () => {
    server = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'audio/wav' }).end(tone));
    server.on('error', () => undefined);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    fs.rmSync(shared, { recursive: true, force: true });
  });
  const rooms: FsmrfMix[] = [];
  const releases: (() => void)[] = [];
  let seq = 0;
  afterEach(async () => {
    for (const r of rooms.splice(0)) await r.destroy().catch(() => undefined);
    for (const r of releases.splice(0)) r();
  });

  async function member() {
    const mix = await suite.backend.createMix(`holdbound${process.pid}x${++seq}`);
    rooms.push(mix);
    const { leg } = await suite.call();
    await mix.join(leg);
    return { mix, leg };
  }

  /** A URL whose file media-app fetched into the shared directory, then removed from it: the switch holds the member and plays nothing. */
  async function unreadable(name: string): Promise<string> {
    const url = `${base}/${name}.wav`;
    const p = await prompts.hold(url);
    releases.push(() => p.release());
    fs.rmSync(p.path);
    return url;
  }

  /** Whether `p` is still pending once the events already due have run. */
  const pending = (p: Promise<unknown>) => Promise.race([p.then(() => false), new Promise<boolean>((r) => setImmediate(() => r(true)))]);

  it('a hold the switch never ends fails at its bound, not before; nothing left armed; other music then plays', async () => {
    const { leg } = await member();
    const url = await unreadable(`gone-${seq}`);
    const armed = boundedOnce(armings, 'set', 10_000, "the play's bound armed");
    const outcome = leg.playMusic(url, 'hold').then(
      () => 'resolved',
      (e: Error) => e,
    );
    const ms = (await armed)[0] as number;
    expect(ms, "the file's length and the slack").to.equal(BOUND_MS);
    clock.advance(ms - 1);
    expect(await pending(outcome), 'not before its bound').to.equal(true);
    clock.advance(1);
    const e = await bounded(outcome, 5000, 'the play failed');
    expect(e).to.be.an.instanceOf(MusicTimeout);
    expect((e as Error).message).to.match(new RegExp(`no play-file-member-done\\) within ${BOUND_MS} ms`));
    expect(clock.pending(), 'nothing left armed').to.equal(0);

    // what the platform falls back to plays to the member still held, and the switch's done clears its bound
    const next = boundedOnce(armings, 'set', 10_000, "the next play's bound armed");
    const r = await bounded(leg.playMusic(`${base}/fallback-${seq}.wav`, 'hold'), 15_000, 'the other music ended by the switch');
    expect((await next)[0]).to.equal(BOUND_MS);
    expect(r.interrupted, 'played to its end').to.equal(false);
    expect(clock.pending(), 'its bound cleared').to.equal(0);
  });

  it("the call's music loop is told the music failed (onMusicFailed), within the bound", async () => {
    const { leg } = await member();
    const url = await unreadable(`loop-${seq}`);
    const state = new CallMediaState(() => leg);
    let failed!: (r: [string, Error]) => void;
    const told = new Promise<[string, Error]>((r) => (failed = r));
    state.onMusicFailed = (music, err) => failed([music, err]);
    const armed = boundedOnce(armings, 'set', 10_000, "the play's bound armed");
    await state.set({ held: true, music: url });
    const ms = (await armed)[0] as number;
    expect(ms).to.equal(BOUND_MS);
    clock.advance(ms - 1);
    expect(await pending(told), 'not before its bound').to.equal(true);
    clock.advance(1);
    const [music, err] = await bounded(told, 5000, 'onMusicFailed');
    expect(music).to.equal(url);
    expect(err).to.be.an.instanceOf(MusicTimeout);
    expect(clock.pending(), 'nothing left armed').to.equal(0);
    await state.set({ held: false });
  });
});
