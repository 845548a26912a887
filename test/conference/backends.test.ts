// Conferences on both media backends: 'embedded' (media-engine's mixer in media-app) and 'fsmrf'
// (media-app's rooms on the switch's conference through drachtio-fsmrf, against our switch, esl/: the
// platform's `startPlatform({ mediaServer })`). Three sipp callers, each with an RtpParty talking a tone
// of its own, dial a number whose flow is answer → conference_join → sleep → hangup over the
// platform's SIP edge; each hears the two others and not itself, a mute and a kick take effect, a
// hangup leaves, and the room (made ends_when_empty) ends when its last member is out. The API
// lists the members throughout.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { conferencesRepo } from '../../core/repos/conferences';
import { testDb } from '../../testkit/db';
import type { Fixture } from '../../testkit/api';
import { sipp, until, type Platform } from '../../testkit/media-app/harness';
import { RtpParty, toneIn } from '../../testkit/conference/party';
import { readWav } from '../../media-engine/audio/wav';
import { MediaBackendUnsupported } from '../../media-app/media-server/port';
import type { FsmrfBackend } from '../../media-app/media-server/fsmrf/backend';
import type { ConferenceHost } from '../../media-app/conference';
import { uacWaitsForBye } from './sipp';
import { terminatedRoom, useConferenceStack } from './support';

const A = 500;
const B = 1100;
const C = 1700;
/** Share of 20 ms frames that must carry a party's tone for "hears it" (conference.test.ts says why it is well below 1). */
const HEARS = 0.5;

const BACKENDS = [
  { backend: 'embedded', prefix: '+8992100' },
  { backend: 'fsmrf', prefix: '+8992200' },
] as const;

for (const { backend, prefix } of BACKENDS)
  describe(`conferences on the ${backend} media backend (three sipp callers)`, function () {
    this.timeout(120_000);
    let p: Platform;
    let f: Fixture;
    const parties: RtpParty[] = [];
    const api = useConferenceStack({ trunk: 'confb', mediaServer: backend, parties }, (s) => ({ p, f } = s));

    async function joinedRows(conferenceId: string, n: number) {
      return until(
        async () => {
          const rows = await (await testDb())('conferencecalls').where({ conference_id: conferenceId, status: 'joined' });
          return rows.length === n ? rows : null;
        },
        20_000,
        `${n} participants joined`,
      );
    }

    /**
     * Waits for the change of the mix to reach `x` (`freq` heard again or gone), then measures: the
     * share of the next `frames` frames `x` hears (the measured media) that carry `freq`.
     */
    async function hears(x: RtpParty, freq: number, on: boolean, frames = 60): Promise<number> {
      await x.toneTurns(freq, on);
      const t0 = Date.now();
      await x.framesHeard(t0, frames);
      return x.presence(freq, t0, Date.now());
    }

    if (backend === 'fsmrf')
      it('a room the switch already has is refused with an Error naming it; destroy() ends the room on the switch', async () => {
        const media = p.app.media as FsmrfBackend;
        const name = `dup-${Date.now()}`;
        const first = await media.createMix(name);
        try {
          expect(p.switch!.sw.esl.api.conferences?.get(name), "the switch's room").to.not.equal(undefined);
          const err: unknown = await media.createMix(name).then(
            () => null,
            (e: unknown) => e,
          );
          expect(err).to.be.instanceOf(Error);
          expect((err as Error).message).to.match(/could not make conference dup-\d+: conference exists/);
        } finally {
          await first.destroy();
        }
        await until(async () => (p.switch!.sw.esl.api.conferences?.get(name) ? null : true), 10_000, "the switch's room gone");
      });

    it('three callers hear each other; the mix is recorded; a mute, a kick, talking and hangups take effect; the room ends when empty', async () => {
      const db = await testDb();
      const conf = await conferencesRepo(db).create({ customer_id: f.customer.id, type: 'conference', name: `${backend} room`, ends_when_empty: true });
      const flow = await flowsRepo(db).create({
        customer_id: f.customer.id,
        actions: parseActions([{ type: 'answer' }, { type: 'conference_join', option: { conference_id: conf.id } }, { type: 'sleep', option: { duration: 3000 } }, { type: 'hangup' }]),
      } as never);
      const number = `${prefix}00001`;
      await numbersRepo(db).create({ customer_id: f.customer.id, number, type: 'virtual', call_flow_id: flow.id });
      const [a, b, c] = await Promise.all([A, B, C].map((hz) => RtpParty.open(hz)));
      parties.push(a!, b!, c!);
      const dial = (x: RtpParty) =>
        sipp(uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, `+1555000${x.freq}`, x.port), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '60s'], { killAfterMs: 70_000 })
          .done;
      const calls = [dial(a!), dial(b!), dial(c!)];
      const joined = await joinedRows(conf.id, 3);
      const ccOf = (x: RtpParty) => {
        const row = joined.find((r) => r.reference_id === callIds.get(x.freq));
        if (!row) throw new Error(`no participant for ${x.freq}`);
        return row.id as string;
      };
      const callIds = new Map<number, string>();
      for (const x of [a!, b!, c!]) {
        const call = await db('calls')
          .where({ customer_id: f.customer.id })
          .whereRaw(`source->>'target' = ?`, [`+1555000${x.freq}`])
          .orderBy('tm_create', 'desc')
          .first();
        callIds.set(x.freq, (call as { id: string }).id);
      }

      // on fsmrf the room is the switch's conference (named by the conference's id), its three members in it
      if (backend === 'fsmrf') expect(p.switch!.sw.esl.api.conferences?.get(conf.id), "the switch's room").to.not.equal(undefined);

      // the API shows the room with its three members
      const listed = await api().get(`/conferences/${conf.id}`);
      expect(listed.status).to.equal(200);
      expect(listed.body).to.include({ status: 'progressing' });
      expect(listed.body.conferencecall_ids).to.have.members(joined.map((r) => r.id));
      const ccs = await api().get('/conferencecalls');
      expect(ccs.body.result.filter((r: { conference_id: string; status: string }) => r.conference_id === conf.id && r.status === 'joined')).to.have.length(3);

      // each hears the two others, not itself: once every party hears both others (the mix is up), a
      // window of 100 frames (2 s) each party hears is measured
      await Promise.all([a!, b!, c!].flatMap((me) => [a!, b!, c!].filter((o) => o !== me).map((o) => me.toneTurns(o.freq, true, 10_000))));
      const t0 = Date.now();
      await Promise.all([a!, b!, c!].map((x) => x.framesHeard(t0, 100)));
      const t1 = Date.now();
      for (const [me, others] of [
        [a!, [b!, c!]],
        [b!, [a!, c!]],
        [c!, [a!, b!]],
      ] as [RtpParty, RtpParty[]][]) {
        for (const o of others) expect(me.presence(o.freq, t0, t1), `${me.freq} hears ${o.freq}`).to.be.greaterThan(HEARS);
        expect(me.presence(me.freq, t0, t1), `${me.freq} hears itself`).to.be.lessThan(0.1);
      }

      // the whole mix recorded (on fsmrf the switch writes the platform's WAV): all three in it
      const rec = await api().post(`/conferences/${conf.id}/recording_start`, { format: 'wav', duration: 0 });
      expect(rec.status, JSON.stringify(rec.body)).to.equal(200);
      // the recording is the measured media: it runs until its file holds 2 s of the mix (written a second at a time)
      const started = await until(
        async () => (await db('recordings').where({ reference_type: 'conference', reference_id: conf.id, status: 'recording' }).first()) as { filenames: string[] } | undefined,
        10_000,
        'recording started',
      );
      const file = path.join(p.config.dataDir, 'recordings', started.filenames[0]!);
      await until(() => (fs.existsSync(file) && fs.statSync(file).size >= 44 + 2 * 16_000 ? true : null), 10_000, '2 s of the mix recorded');
      expect((await api().post(`/conferences/${conf.id}/recording_stop`)).status).to.equal(200);
      const recording = await until(
        async () => {
          const r = await db('recordings').where({ reference_type: 'conference', reference_id: conf.id }).first();
          return r?.status === 'ended' ? r : null;
        },
        10_000,
        'recording ended',
      );
      const wav = readWav(path.join(p.config.dataDir, 'recordings', recording.filenames[0]));
      expect(wav.info.format).to.include({ encoding: 'pcm', sampleRate: 8000, channels: 1, bitsPerSample: 16 });
      let allThree = 0;
      for (let w = 0; w + 160 <= wav.samples.length; w += 160) if ([A, B, C].every((hz) => toneIn(wav.samples, w, 160, hz))) allThree++;
      expect(allThree * 0.02, 'seconds of the recorded mix with all three callers').to.be.greaterThan(1.2);

      // what only the engine's mixer gives: on fsmrf refused by name, never a silent nothing
      if (backend === 'fsmrf') expect(() => p.app.factory.services.conferences!.mixOf(conf.id)).to.throw(MediaBackendUnsupported, /fsmrf/);
      else expect(p.app.factory.services.conferences!.mixOf(conf.id)).to.not.equal(undefined);

      // mute B: A and C stop hearing it; unmuted, they hear it again
      const mute = await api().post(`/conferencecalls/${ccOf(b!)}/mute`, { direction: 'in' });
      expect(mute.status, JSON.stringify(mute.body)).to.equal(200);
      expect(await hears(a!, B, false), 'A does not hear muted B').to.be.lessThan(0.1);
      expect(c!.presence(A, Date.now() - 1000), 'C still hears A').to.be.greaterThan(HEARS);
      expect((await api().del(`/conferencecalls/${ccOf(b!)}/mute`, { direction: 'in' })).status).to.equal(200);
      expect(await hears(a!, B, true), 'A hears B again').to.be.greaterThan(HEARS);

      // kick C: out of the mix, its call goes on (its flow sleeps, then hangs up)
      const kick = await api().del(`/conferencecalls/${ccOf(c!)}`);
      expect(kick.status, JSON.stringify(kick.body)).to.equal(200);
      await until(async () => (await api().get(`/conferencecalls/${ccOf(c!)}`)).body.status === 'leaved', 10_000, 'C leaved');
      expect(await hears(a!, C, false, 50), 'A does not hear kicked C').to.be.lessThan(0.1);
      expect(c!.presence(A, Date.now() - 1000), 'kicked C does not hear A').to.be.lessThan(0.1);
      expect(c!.framesBetween(Date.now() - 1000), 'C still gets RTP').to.be.greaterThan(20);
      expect(a!.presence(B, Date.now() - 1000), 'A still hears B').to.be.greaterThan(HEARS);
      const rc = await calls[2]!;
      expect(rc.code, rc.errors + rc.messages).to.equal(0);
      expect((await api().get(`/conferences/${conf.id}`)).body.conferencecall_ids).to.have.members([ccOf(a!), ccOf(b!)]);

      // B goes quiet: the mix reports that it stopped talking (the room's speaker events: on fsmrf the switch's stop-talking)
      const mix = (p.app.factory.services.conferences as ConferenceHost).room(conf.id)!.media;
      const bLeg = p.app.factory.get(callIds.get(B)!)!.endpoint!.uuid;
      let stopped = false;
      mix.on('speaker', (e) => (stopped ||= e.memberId === bLeg && !e.talking));
      b!.quiet();
      await until(async () => (stopped ? true : null), 5000, 'quiet B stopped talking');

      // B's call is hung up: it leaves; A alone is still in the room
      expect((await api().post(`/calls/${callIds.get(B)}/hangup`)).status).to.equal(200);
      const rb = await calls[1]!;
      expect(rb.code, rb.errors + rb.messages).to.equal(0);
      await until(async () => ((await api().get(`/conferences/${conf.id}`)).body.conferencecall_ids?.length === 1 ? true : null), 10_000, 'B out');
      expect((await db('conferences').where({ id: conf.id }).first())!.status).to.equal('progressing');

      // A hangs up too: the room is empty and ends
      expect((await api().post(`/calls/${callIds.get(A)}/hangup`)).status).to.equal(200);
      const ra = await calls[0]!;
      expect(ra.code, ra.errors + ra.messages).to.equal(0);
      const row = await terminatedRoom(conf.id, 'terminated when empty');
      expect(row.conferencecall_ids).to.deep.equal([]);
      expect((await db('conferencecalls').where({ conference_id: conf.id })).map((r) => r.status)).to.deep.equal(['leaved', 'leaved', 'leaved']);
      if (backend === 'fsmrf') {
        // the switch's room is gone with it
        await until(async () => (p.switch!.sw.esl.api.conferences?.get(conf.id) ? null : true), 10_000, "the switch's room gone");
      }
    });
  });
