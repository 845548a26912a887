// The music of a held member of a switch room (media-app/media-server/fsmrf/member-hold.ts) against our
// switch (test/esl/rig.ts, real on loopback), through the leg's own playMusic / stopPlayback / endMusic as
// media-app's hold loop calls them: a loop of the music ends at the done of its own file, not at a late
// done of an earlier file to the member; held, the member is deaf (it hears its file, or silence between
// two loops, never the room) until the hold ends, and stays deaf then if the room made it deaf before;
// a hold the switch refuses leaves the member not held, and the
// next play asks for the hold again (not a bare play that leaves it in the mix); the music is an http(s)
// URL, fetched through the egress policy into the directory shared with the switch (a real HTTP server on
// loopback), or the node's own music file, and nothing else.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { wavFile } from '../../../core/audio/wav';
import { EgressPolicy, egressSettingsFromEnv } from '../../../core/net';
import { mohFile } from '../../../media-app/kit/moh-source';
import type { Endpoint } from '../../../media-engine';
import type { FsmrfMix } from '../../../media-app/media-server/fsmrf/conference';
import type { FsmrfCallEndpoint } from '../../../media-app/media-server/fsmrf/endpoint';
import { SharedPrompts } from '../../../media-app/media-server/fsmrf/shared-prompts';
import { bounded } from '../../../testkit/bounded';
import { toneShare } from '../../../testkit/media-engine/far-end';
import { readWav } from '../../../testkit/media-engine/support';
import { PASSWORD, plainHeaders, RawClient } from '../../esl/support';
import { useFsmrfSuite } from './fsmrf-suite';

const toneWav = (hz: number, samples: number) =>
  wavFile(
    Int16Array.from({ length: samples }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / 8000))),
    8000,
  );

/** The hold ends as media-state ends it: the music stops (the hold stays), then the music is over (unhold). */
async function holdEnds(leg: { stopPlayback(): Promise<void>; endMusic(): Promise<void> }): Promise<void> {
  await leg.stopPlayback();
  await leg.endMusic();
}

describe("fsmrf: the music of a room member's hold (member-hold.ts)", function () {
  this.timeout(30_000);
  // the directory media-app shares with the switch: the switch's sounds directory
  const shared = fs.mkdtempSync(path.join(os.tmpdir(), 'fsmrf-mhold-'));
  const loopback = new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }));
  const suite = useFsmrfSuite({
    rig: { conferenceFiles: { recordings: path.join(shared, 'recordings'), sounds: shared } },
    ready: (backend) => backend.promptsIn(new SharedPrompts(path.join(shared, 'prompts'), loopback)),
  });
  // 1 s of 440 Hz
  const music = toneWav(440, 8000);
  let server: http.Server;
  let musicUrl = '';
  before(async () => {
    server = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'audio/wav' }).end(music));
    server.on('error', () => undefined);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    musicUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/music.wav`;
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

  /** The switch's next maintenance event `action` of member `id` (a client of the event socket subscribed now). */
  async function maintenance() {
    const c = await RawClient.authed(suite.rig.port, PASSWORD);
    undo.push(() => c.socket.destroy());
    expect((await c.command('event plain CUSTOM conference::maintenance')).headers['Reply-Text']).to.equal('+OK event listener enabled plain');
    return async (action: string, id: number) => {
      for (;;) {
        const h = plainHeaders((await c.next()).body);
        if (h['Action'] === action && h['Member-ID'] === String(id)) return h;
      }
    };
  }

  /** A leg in a room of its own (or `into` another's); its member id on the switch and the room's `conference <room> <args>`. */
  async function member(into?: FsmrfMix) {
    const mix = into ?? (await suite.backend.createMix(`mhold${process.pid}x${++seq}`));
    if (!into) rooms.push(mix);
    const { leg, peer } = await suite.call();
    await mix.join(leg);
    const api = async (args: string) => (await leg.fs.api('conference', `${mix.name} ${args}`)).getBody();
    const list = await api('list');
    const id = Number(new RegExp(`^(\\d+);[^;]*;${leg.fs.uuid};`, 'm').exec(list)?.[1]);
    expect(id, list).to.be.above(0);
    const flags = async () =>
      (await api('list'))
        .split('\n')
        .find((l) => l.startsWith(`${id};`))
        ?.split(';')[5] ?? '';
    return { mix, leg: leg as FsmrfCallEndpoint, peer, id, api, flags };
  }

  it("a loop of the music ends at its own file's done: a late done of an earlier file to the member does not end it", async () => {
    const { leg, id, api } = await member();
    // 0.8 s of 700 Hz played to the member first: the switch queues a member's files, the hold's file after it
    const earlier = path.join(shared, `earlier-${process.pid}.wav`);
    fs.writeFileSync(earlier, toneWav(700, 6400));
    undo.push(() => fs.rmSync(earlier, { force: true }));
    expect(await api(`play ${earlier} ${id} nomux`)).to.match(/Playing file .* to member/);
    const t0 = Date.now();
    const r = await bounded(leg.playMusic(musicUrl), 15_000, 'a loop of the music');
    expect(r.interrupted, 'played to its end').to.equal(false);
    expect(Date.now() - t0, "ended by its own file's done (1 s, queued behind the earlier one)").to.be.at.least(950);
    await holdEnds(leg);
    expect(left(), 'the music released at the hold end').to.deep.equal([]);
  });

  let n = 0;
  /** The share of `hz` in what the far end hears over 1 s (after 0.5 s for what was in flight). */
  async function hears(peer: Endpoint, hz: number): Promise<number> {
    const file = path.join(suite.dir, `hears-${n++}.wav`);
    await peer.record(file, { duration: 1.5 });
    return toneShare(readWav(file).samples.subarray(4000), hz, 8000);
  }

  it('between two loops of its music the held member hears silence, not the room (deaf while held); unhold: it hears the room again', async () => {
    const a = await member();
    const b = await member(a.mix);
    const talk = path.join(suite.dir, 'talk1000.wav');
    fs.writeFileSync(talk, toneWav(1000, 8000 * 30));
    void b.peer.play(talk).catch(() => undefined);
    expect(await hears(a.peer, 1000), 'a hears b').to.be.above(0.3);
    const r = await bounded(a.leg.playMusic(musicUrl), 15_000, 'a loop of the music');
    expect(r.interrupted, 'played to its end').to.equal(false);
    // the loop would ask for the next play now: held, with no file playing
    expect(await hears(a.peer, 1000), 'held between two loops, a does not hear b').to.be.below(0.05);
    await holdEnds(a.leg);
    expect(await hears(a.peer, 1000), 'unheld, a hears b again').to.be.above(0.3);
  });

  it('a member the room made deaf before its hold stays deaf when the hold ends', async () => {
    const a = await member();
    const b = await member(a.mix);
    const talk = path.join(suite.dir, 'talk1000.wav');
    fs.writeFileSync(talk, toneWav(1000, 8000 * 30));
    void b.peer.play(talk).catch(() => undefined);
    await a.mix.mute(a.leg, 'out', true);
    const p = a.leg.playMusic(musicUrl);
    await bounded(p, 15_000, 'a loop of the music');
    await holdEnds(a.leg);
    expect(await hears(a.peer, 1000), 'still deaf: a does not hear b').to.be.below(0.05);
    await a.mix.mute(a.leg, 'out', false);
    expect(await hears(a.peer, 1000), 'undeafened by the room: a hears b').to.be.above(0.3);
  });

  it('a hold the switch refuses: the play fails, the member is not held; the next play asks for the hold again', async () => {
    const { mix, leg, id, flags } = await member();
    const nextOf = await maintenance();
    // the switch's room without the member for the hold: `hold <id>` answers -ERR Non-Existant ID
    const room = suite.rig.esl.api.conferences!.get(mix.name)!;
    const m = room.members.get(id)!;
    room.members.delete(id);
    const refused = await leg.playMusic(musicUrl).then(
      () => null,
      (e: Error) => e,
    );
    room.members.set(id, m);
    expect(refused?.message).to.match(/Non-Existant ID/);
    expect(await flags(), 'not held').to.not.match(/hold/);
    const next = leg.playMusic(musicUrl);
    await bounded(nextOf('hold-member', id), 5000, 'the next play holds the member');
    expect(await flags(), 'held').to.match(/hold/);
    await holdEnds(leg);
    expect((await bounded(next, 5000, 'the play ended by the unhold')).interrupted).to.equal(true);
    expect(await flags(), 'unheld').to.not.match(/hold/);
  });

  it("music that is neither an http(s) URL nor the node's own music is refused before anything is copied or sent; the node's own plays", async () => {
    const { leg, id, flags } = await member();
    const nextOf = await maintenance();
    const local = path.join(suite.dir, 'someone-elses.wav');
    fs.writeFileSync(local, toneWav(700, 8000));
    for (const m of [local, 'file:///etc/hosts', '/etc/hosts', 'ftp://127.0.0.1/x.wav']) {
      const e = await leg.playMusic(m).then(
        () => null,
        (err: Error) => err,
      );
      expect(e?.message, m).to.match(/must be an http\(s\) URL or the node's own music/);
    }
    expect(left(), 'nothing copied').to.deep.equal([]);
    expect(await flags(), 'not held').to.not.match(/hold/);

    const node = await mohFile(path.join(suite.dir, 'data'));
    const p = leg.playMusic(node);
    await bounded(nextOf('hold-member', id), 5000, "held with the node's music");
    expect(left(), "the node's music copied where the switch reads it").to.have.length(1);
    await holdEnds(leg);
    expect((await bounded(p, 5000, 'the play ended by the unhold')).interrupted).to.equal(true);
  });
});
