// A member's announcement on the fsmrf backend (media-app/media-server/fsmrf/conference-say.ts, MemberSay)
// has a bound of its own: a timer armed once the switch took the room's `play`, on the backend's timers
// (here virtual ones: they fire when the test moves time on), of the file's length and 2 s. Against our
// switch (test/esl/rig.ts, real on loopback): a step the switch ends (play-file-member-done) clears its
// timer; a switch that never ends it (here the member's file held in the switch) fails the step at the
// bound, not before, and leaves nothing armed. A <Play>'s file is fetched by media-app through its egress
// policy into the directory shared with the switch (shared-prompts.ts; a real HTTP server on loopback,
// allowed by the policy); a <Say>'s is synthesised by media-app with the platform's voices (the engine's
// TTS, its cache given here so the test knows the speech's length); each removed whether the switch ended
// it or the bound did.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { wavFile } from '../../core/audio/wav';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';
import { SharedPrompts } from '../../media-app/media-server/fsmrf/shared-prompts';
import type { FsmrfMix } from '../../media-app/media-server/fsmrf/conference';
import { PLAY_SLACK_MS, SayTimeout } from '../../media-app/media-server/fsmrf/conference-say';
import { createTtsProvider } from '../../media-engine';
import { boundedOnce, bounded } from '../../testkit/bounded';
import { useFsmrfSuite } from '../media-app/media-server/fsmrf-suite';
import { watchedTimers } from '../support/virtual-timers';

describe('fsmrf conference announcement: the bound of a member say', function () {
  this.timeout(30_000);
  const { clock, armings, timers } = watchedTimers();
  // the directory media-app shares with the switch: the switch's sounds directory
  const shared = fs.mkdtempSync(path.join(os.tmpdir(), 'fsmrf-prompts-'));
  const loopback = new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }));
  const suite = useFsmrfSuite({
    rig: { conferenceFiles: { recordings: path.join(shared, 'recordings'), sounds: shared } },
    connect: { timers },
    ready: (backend) => backend.promptsIn(new SharedPrompts(path.join(shared, 'prompts'), loopback, { cacheDir: path.join(shared, 'cache') })),
  });
  /** The bound of a <Say> of `text`: its speech's length (the cache the backend's prompts use) and the slack. */
  const sayBoundMs = async (text: string) => (await createTtsProvider('espeak-ng', { cacheDir: path.join(shared, 'cache', 'tts') }).synthesize(text, { ssml: false })).durationMs + PLAY_SLACK_MS;
  // 1 s of 440 Hz at 8 kHz
  const tone = wavFile(
    Int16Array.from({ length: 8000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000))),
    8000,
  );
  let server: http.Server;
  let toneUrl = '';
  before(async () => {
    server = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'audio/wav' }).end(tone));
    server.on('error', () => undefined);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    toneUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tone.wav`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    fs.rmSync(shared, { recursive: true, force: true });
  });
  const left = () => (fs.existsSync(path.join(shared, 'prompts')) ? fs.readdirSync(path.join(shared, 'prompts')) : []);
  const undo: (() => void)[] = [];
  const rooms: FsmrfMix[] = [];
  let seq = 0;
  afterEach(async () => {
    for (const u of undo.splice(0)) u();
    for (const r of rooms.splice(0)) await r.destroy().catch(() => undefined);
  });

  async function member() {
    const mix = await suite.backend.createMix(`saybound${process.pid}x${++seq}`);
    rooms.push(mix);
    const { leg } = await suite.call();
    await mix.join(leg);
    return { mix, leg };
  }

  it('a say the switch ends clears its timer', async () => {
    const { mix, leg } = await member();
    const text = 'one two three';
    const armed = boundedOnce(armings, 'set', 10_000, "the say's bound armed");
    await bounded(mix.announceTo(leg).say(text, {}), 15_000, 'the say ended by the switch');
    expect((await armed)[0], 'its delay').to.equal(await sayBoundMs(text));
    expect(clock.pending(), 'nothing left armed').to.equal(0);
    expect(left(), 'no file left in the shared directory').to.deep.equal([]);
  });

  it('a switch that never ends it: the say fails at its bound, not before, its file removed, and nothing is left armed', async () => {
    const { mix, leg } = await member();
    // the switch's channel for the leg: its file held until the test ends (no play-file-member-done)
    const engineEp = suite.rig.esl.channels.get(leg.fs.uuid)!.channel.endpoint;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const real = engineEp.play.bind(engineEp);
    engineEp.play = async (...args) => {
      await held;
      return real(...args);
    };
    undo.push(() => {
      delete (engineEp as { play?: unknown }).play;
      release();
    });
    const text = 'never ended';
    const armed = boundedOnce(armings, 'set', 10_000, "the say's bound armed");
    const said = mix.announceTo(leg).say(text, {});
    const outcome = said.then(
      () => 'resolved',
      (e: Error) => e,
    );
    const ms = (await armed)[0] as number;
    expect(ms).to.equal(await sayBoundMs(text));
    expect(left(), 'the file is there while it plays').to.have.length(1);
    clock.advance(ms - 1);
    const early = await Promise.race([outcome, new Promise((r) => setImmediate(() => r('pending')))]);
    expect(early, 'not before its bound').to.equal('pending');
    clock.advance(1);
    const e = await bounded(outcome, 5000, 'the say failed');
    expect(e).to.be.an.instanceOf(SayTimeout);
    expect((e as Error).message).to.match(new RegExp(`no play-file-member-done\\) within ${ms} ms`));
    expect(clock.pending(), 'nothing left armed').to.equal(0);
    expect(left(), 'no file left in the shared directory').to.deep.equal([]);
  });

  it("a <Play> the switch ends: its bound (the file's length and 2 s) cleared, its file removed", async () => {
    const { mix, leg } = await member();
    const armed = boundedOnce(armings, 'set', 10_000, "the play's bound armed");
    await bounded(mix.announceTo(leg).play([toneUrl]), 15_000, 'the play ended by the switch');
    expect((await armed)[0], 'its delay').to.equal(3000);
    expect(clock.pending(), 'nothing left armed').to.equal(0);
    expect(left(), 'no file left in the shared directory').to.deep.equal([]);
  });

  it('a <Play> the switch never ends fails at its bound, not before; its file removed, nothing left armed', async () => {
    const { mix, leg } = await member();
    const engineEp = suite.rig.esl.channels.get(leg.fs.uuid)!.channel.endpoint;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const real = engineEp.play.bind(engineEp);
    engineEp.play = async (...args) => {
      await held;
      return real(...args);
    };
    undo.push(() => {
      delete (engineEp as { play?: unknown }).play;
      release();
    });
    const armed = boundedOnce(armings, 'set', 10_000, "the play's bound armed");
    const outcome = mix
      .announceTo(leg)
      .play([toneUrl])
      .then(
        () => 'resolved',
        (e: Error) => e,
      );
    const ms = (await armed)[0] as number;
    expect(ms).to.equal(3000);
    expect(left(), 'the file is there while it plays').to.have.length(1);
    clock.advance(ms - 1);
    const early = await Promise.race([outcome, new Promise((r) => setImmediate(() => r('pending')))]);
    expect(early, 'not before its bound').to.equal('pending');
    clock.advance(1);
    const e = await bounded(outcome, 5000, 'the play failed');
    expect(e).to.be.an.instanceOf(SayTimeout);
    expect(clock.pending(), 'nothing left armed').to.equal(0);
    expect(left(), 'no file left in the shared directory').to.deep.equal([]);
  });

  it("a <Play> ends at its own file's done: a late done of an earlier file to the member does not end it", async () => {
    const { mix, leg } = await member();
    // 0.8 s of 700 Hz in the switch's sounds directory, played to the member first: the switch queues a
    // member's files, so the announcement's file plays after it, and this file's done comes meanwhile
    const earlier = path.join(shared, `earlier-${process.pid}.wav`);
    fs.writeFileSync(
      earlier,
      wavFile(
        Int16Array.from({ length: 6400 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 700 * i) / 8000))),
        8000,
      ),
    );
    undo.push(() => fs.rmSync(earlier, { force: true }));
    const list = (await leg.fs.api('conference', `${mix.name} list`)).getBody();
    const id = new RegExp(`^(\\d+);[^;]*;${leg.fs.uuid};`, 'm').exec(list)?.[1];
    expect(id, list).to.be.a('string');
    expect((await leg.fs.api('conference', `${mix.name} play ${earlier} ${id} nomux`)).getBody()).to.match(/Playing file .* to member/);
    const t0 = Date.now();
    await bounded(mix.announceTo(leg).play([toneUrl]), 15_000, 'the play ended by the switch');
    // its own 1 s file, queued behind the earlier one: not over within a second of the command
    expect(Date.now() - t0, "ended by its own file's done").to.be.at.least(950);
    expect(left(), 'no file left in the shared directory').to.deep.equal([]);
  });
});
