// mod_conference's `stop <current|all> <member>` on our switch (conference_api_sub_stop with a member id,
// FreeSWITCH 1.10's `Stopped <n> files.`): what plays to that member alone stops, its
// play-file-member-done follows, and a hold stands (the room still does not hear the member). The music
// of a room member's hold stops so when it changes (media-app/media-server/fsmrf/member-hold.ts). Each
// member is a channel whose far end is a media-engine endpoint (real RTP on loopback); who hears what is
// measured at the far ends, as test/esl/conference-relate.test.ts does.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { Conference } from 'drachtio-fsmrf';
import type { Endpoint } from '../../media-engine';
import { readWav } from '../../testkit/media-engine/support';
import { toneShare } from '../../testkit/media-engine/far-end';
import { plainHeaders, type RawClient } from './support';
import { useFsmrfRig, type FsmrfRig } from './rig';

describe('esl: conference stop <current|all> <member> (FreeSWITCH 1.10) through fsmrf on the media engine', function () {
  this.timeout(60_000);
  const tone: Record<number, string> = {};
  const confs: Conference[] = [];
  const failures: string[] = [];
  afterEach(async () => {
    for (const c of confs.splice(0)) await c.destroy().catch(() => undefined);
  });
  const fx = useFsmrfRig((d) => ({ conferenceFiles: { recordings: path.join(d, 'recordings'), sounds: d } }));
  let rig: FsmrfRig;
  let dir: string;
  before(() => {
    ({ rig, dir } = fx);
    rig.esl.on('failed', (e) => failures.push(e.message));
    for (const hz of [440, 1000, 700]) {
      tone[hz] = path.join(dir, `tone${hz}.wav`);
      execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', tone[hz], 'synth', '30', 'sine', String(hz), 'vol', '0.5']);
    }
  });
  afterEach(() => {
    expect(failures.splice(0)).to.deep.equal([]);
  });

  /** A member talking its tone, in `conf`; its member id. */
  async function member(conf: Conference, hz: number) {
    const m = await fx.call();
    const { memberId } = await m.ep.join(conf);
    void m.peer.play(tone[hz]!).catch(() => undefined);
    return { ...m, id: Number(memberId) };
  }

  /** The next maintenance event with that Action, its headers. */
  async function nextAction(c: RawClient, action: string): Promise<Record<string, string>> {
    for (;;) {
      const h = plainHeaders((await c.next()).body);
      if (h['Action'] === action) return h;
    }
  }

  let n = 0;
  /** The share of each tone in what the far end hears over 1 s (after 0.5 s for what was in flight). */
  async function hears(peer: Endpoint, ...hz: number[]): Promise<number[]> {
    const file = path.join(dir, `hears-${n++}.wav`);
    await peer.record(file, { duration: 1.5 });
    const s = readWav(file).samples.subarray(4000);
    return hz.map((f) => toneShare(s, f, 8000));
  }

  it("stop current <member>: the held member's file stops (play-file-member-done), the member still held; an unknown member is named", async () => {
    const conf = await rig.ms.createConference('stop-room');
    confs.push(conf);
    const raw = await fx.subscriber('CUSTOM conference::maintenance');
    const a = await member(conf, 440);
    const b = await member(conf, 1000);
    const body = async (args: string) => (await b.ep.api('conference', `stop-room ${args}`)).getBody();
    expect(await body(`hold ${a.id} ${tone[700]}`)).to.equal(`+OK hold ${a.id}\n`);
    await nextAction(raw, 'hold-member');
    expect((await hears(a.peer, 700))[0], 'the held member hears its hold file').to.be.above(0.3);

    expect(await body(`stop current ${a.id}`)).to.equal('Stopped 1 files.\n');
    expect(await nextAction(raw, 'play-file-member-done')).to.include({ 'Member-ID': String(a.id), File: tone[700] });
    expect((await hears(a.peer, 700))[0], 'the file stopped').to.be.below(0.05);
    expect((await hears(b.peer, 440))[0], 'still held: b does not hear a').to.be.below(0.05);

    expect(await body(`stop all ${a.id}`), 'nothing plays to it any more').to.equal('Stopped 0 files.\n');
    expect(await body('stop current 9999')).to.equal('Member: 9999 not found.\n');
    expect(await body(`stop louder ${a.id}`)).to.equal('stop <[current|all|async|last]> [<member_id>]');
  });
});
