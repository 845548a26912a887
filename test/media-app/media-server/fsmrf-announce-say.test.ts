// A conference announcement's <Say> to one member on the fsmrf backend (media-app/media-server/fsmrf/
// conference-say.ts) against our switch (testkit/esl/switch-rig.ts, real on loopback). FreeSWITCH 1.10 sends no
// play-file-member-done for a spoken node (mod_conference conference_member_add_file_data closes, and so
// reports, only a node that is not NODE_TYPE_SPEECH), so media-app no longer asks the room for
// `saymember`: it synthesises the text with the platform's voices (the embedded engine's TTS) into the
// directory shared with the switch and the room plays that file to the member (`play <path> <id> nomux`),
// done at that file's play-file-member-done. Checked on the switch's own maintenance events (no
// speak-text-member, a play-file-member of a file in the shared directory, its done) and by hearing:
// the far end of the member's leg records espeak-ng's speech. Any provider the platform has speaks
// (provider_b was refused before); one it has not fails with the engine's TTS error; the file goes once
// played.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { EgressPolicy, egressSettingsFromEnv } from '../../../core/net';
import type { Endpoint } from '../../../media-engine';
import type { FsmrfMix } from '../../../media-app/media-server/fsmrf/conference';
import type { FsmrfCallEndpoint } from '../../../media-app/media-server/fsmrf/endpoint';
import { SharedPrompts } from '../../../media-app/media-server/fsmrf/shared-prompts';
import { bounded } from '../../../testkit/bounded';
import { readWav } from '../../../testkit/media-engine/support';
import { PASSWORD, plainHeaders, RawClient } from '../../../testkit/esl/client';
import { useFsmrfSuite } from '../../../testkit/esl/fsmrf-suite';

describe("fsmrf: a conference announcement's <Say> is a file the room plays (conference-say.ts)", function () {
  this.timeout(30_000);
  const shared = fs.mkdtempSync(path.join(os.tmpdir(), 'fsmrf-asay-'));
  const prompts = path.join(shared, 'prompts');
  const loopback = new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }));
  const suite = useFsmrfSuite({
    rig: { conferenceFiles: { recordings: path.join(shared, 'recordings'), sounds: shared } },
    ready: (backend) => backend.promptsIn(new SharedPrompts(prompts, loopback, { cacheDir: path.join(shared, 'cache') })),
  });
  after(() => fs.rmSync(shared, { recursive: true, force: true }));
  const left = () => (fs.existsSync(prompts) ? fs.readdirSync(prompts) : []);
  const undo: (() => void)[] = [];
  const rooms: FsmrfMix[] = [];
  let seq = 0;
  afterEach(async () => {
    for (const u of undo.splice(0)) u();
    for (const r of rooms.splice(0)) await r.destroy().catch(() => undefined);
  });

  /** A leg in a room of its own, its member id, and a client of the switch's maintenance events subscribed now. */
  async function member(): Promise<{ mix: FsmrfMix; leg: FsmrfCallEndpoint; peer: Endpoint; id: number; events: RawClient }> {
    const mix = await suite.backend.createMix(`asay${process.pid}x${++seq}`);
    rooms.push(mix);
    const { leg, peer } = await suite.call();
    await mix.join(leg);
    const list = (await leg.fs.api('conference', `${mix.name} list`)).getBody();
    const id = Number(new RegExp(`^(\\d+);[^;]*;${leg.fs.uuid};`, 'm').exec(list)?.[1]);
    expect(id, list).to.be.above(0);
    const events = await RawClient.authed(suite.rig.port, PASSWORD);
    undo.push(() => events.socket.destroy());
    expect((await events.command('event plain CUSTOM conference::maintenance')).headers['Reply-Text']).to.equal('+OK event listener enabled plain');
    return { mix, leg, peer, id, events };
  }

  /** The member's file and speech events (Action and File) up to its first play-file-member-done. */
  async function untilDone(events: RawClient, room: string, id: number): Promise<{ action: string; file?: string }[]> {
    const seen: { action: string; file?: string }[] = [];
    for (;;) {
      const h = plainHeaders((await events.next()).body);
      if (h['Conference-Name'] !== room || h['Member-ID'] !== String(id) || !/^(play-file|speak)/.test(h['Action'] ?? '')) continue;
      seen.push({ action: h['Action']!, file: h['File'] });
      if (h['Action'] === 'play-file-member-done') return seen;
    }
  }

  /** The loud samples (|s| > 1000) of what `peer` recorded while `run` ran: speech, not silence, has hundreds. */
  async function loudWhile(peer: Endpoint, run: () => Promise<unknown>): Promise<number> {
    const heard = path.join(suite.dir, `heard-${seq}-${Date.now()}.wav`);
    const rec = await peer.startRecord(heard);
    try {
      await run();
    } finally {
      await peer.stopRecord(heard);
      await rec.done;
    }
    return readWav(heard).samples.filter((s) => Math.abs(s) > 1000).length;
  }

  it('no saymember: the room plays a file media-app synthesised in the shared directory, the member hears the words, the file goes after', async () => {
    const { mix, leg, peer, id, events } = await member();
    const loud = await loudWhile(peer, () => bounded(mix.announceTo(leg).say('one two three four', {}), 15_000, 'the say'));
    const seen = await bounded(untilDone(events, mix.name, id), 10_000, "the member's events");
    expect(
      seen.map((e) => e.action),
      'no speak-text-member (saymember)',
    ).to.not.include('speak-text-member');
    const played = seen.find((e) => e.action === 'play-file-member');
    expect(played?.file, 'a file in the directory shared with the switch').to.be.a('string');
    expect(path.dirname(path.dirname(played!.file!))).to.equal(prompts);
    expect(seen[seen.length - 1], 'done at that file').to.deep.equal({ action: 'play-file-member-done', file: played!.file });
    expect(loud, 'the far end heard speech, not silence').to.be.above(800);
    expect(left(), 'the file removed once played').to.deep.equal([]);
  });

  it('a provider other than espeak-ng that the platform has (provider_b) speaks; one it has not fails with the TTS error', async () => {
    const { mix, leg, peer, id, events } = await member();
    const loud = await loudWhile(peer, () => bounded(mix.announceTo(leg).say('welcome to the room', { provider: 'provider_b' }), 15_000, 'the say'));
    expect(loud, 'provider_b heard').to.be.above(800);
    expect((await bounded(untilDone(events, mix.name, id), 10_000, "the member's events")).map((e) => e.action)).to.deep.equal(['play-file-member', 'play-file-member-done']);
    const bad = await mix
      .announceTo(leg)
      .say('hello', { provider: 'no_such_voice' })
      .then(
        () => null,
        (e: Error) => e,
      );
    expect(bad?.message).to.match(/unknown TTS provider "no_such_voice"/);
    expect(left(), 'nothing left').to.deep.equal([]);
  });
});
