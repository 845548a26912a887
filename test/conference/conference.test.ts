// Conferences end to end: sip-server + a media-app node + control-api on the test Postgres/Redis, on
// both media backends (the embedded engine; fsmrf against our switch, esl/: the room is the switch's).
// Callers are sipp UACs (signalling) with an RtpParty each (audio: a tone of its own frequency);
// they dial a virtual number whose flow is answer → conference_join → hangup.
import { endedActiveflow } from '../../testkit/call-ends';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { conferencesRepo } from '../../core/repos/conferences';
import { ConferenceCommands } from '../../core/conferences/commands';
import { commandBus } from '../../control-api/calls/bus';
import { readWav } from '../../media-engine/audio/wav';
import { testDb } from '../../testkit/db';
import type { Fixture, TestApp } from '../../testkit/api';
import { eventsFor, sipp, until, type Platform } from '../../testkit/media-app/harness';
import { bounded } from '../../testkit/bounded';
import { RtpParty, toneIn } from '../../testkit/conference/party';
import { uacHangsUpAfter, uacWaitsForBye } from './sipp';
import { terminatedRoom, useConferenceStack } from './support';
import type { ConferencecallStatus } from '../../core/conferences/model';
import { MediaBackendUnsupported } from '../../media-app/media-server/port';

const A = 500;
const B = 1100;
const C = 1700;
/**
 * Share of 20 ms frames that must carry a party's tone for "hears it". The parties' RTP is sent from
 * this test process's event loop, which shares 2 busy cores with everything else: late packets
 * leave gaps, so this is well below 1 while "does not hear" stays below 0.1.
 */
const HEARS = 0.5;

const BACKENDS = [
  { backend: 'embedded', prefix: '+8992000' },
  { backend: 'fsmrf', prefix: '+8992300' },
] as const;

for (const { backend, prefix } of BACKENDS)
  describe(`conferences end to end (${backend} media backend)`, function () {
    this.timeout(120_000);
    let p: Platform;
    let t: TestApp;
    let f: Fixture;
    let numberSeq = 0;
    const parties: RtpParty[] = [];

    const api = useConferenceStack({ trunk: 'conf', mediaServer: backend, truncate: true, parties }, (s) => ({ p, t, f } = s));

    /** A virtual number whose flow joins the conference (then hangs up when the call leaves it). */
    async function numberInto(conferenceId: string): Promise<string> {
      const db = await testDb();
      const flow = await flowsRepo(db).create({
        customer_id: f.customer.id,
        // after leaving, the call stays up a while (out of the mix) before the flow hangs up
        actions: parseActions([{ type: 'answer' }, { type: 'conference_join', option: { conference_id: conferenceId } }, { type: 'sleep', option: { duration: 3000 } }, { type: 'hangup' }]),
      } as never);
      const number = `${prefix}${String(++numberSeq).padStart(5, '0')}`;
      await numbersRepo(db).create({ customer_id: f.customer.id, number, type: 'virtual', call_flow_id: flow.id });
      return number;
    }

    async function party(freq: number): Promise<RtpParty> {
      const x = await RtpParty.open(freq);
      parties.push(x);
      return x;
    }

    function dial(number: string, who: RtpParty, scenario?: string) {
      const s = scenario ?? uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, `+1555000${who.freq}`, who.port);
      return sipp(s, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '60s'], { killAfterMs: 70_000 }).done;
    }

    async function progressing(type: 'conference' | 'connect', extra: object = {}) {
      const res = await api().post('/conferences', { type, name: `${type} room`, ...extra });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ type, status: 'starting', name: `${type} room` });
      return until(
        async () => {
          const g = await api().get(`/conferences/${res.body.id}`);
          return g.body.status === 'progressing' ? g.body : null;
        },
        10_000,
        'conference progressing',
      );
    }

    async function participants(conferenceId: string, n: number, status: ConferencecallStatus = 'joined') {
      return until(
        async () => {
          const rows = await (await testDb())('conferencecalls').where({ conference_id: conferenceId, status });
          return rows.length === n ? rows : null;
        },
        20_000,
        `${n} participants ${status}`,
      );
    }

    it('three parties hear each other; one is kicked; a muted one goes quiet; the recording holds all three', async () => {
      const conf = await progressing('conference');
      const number = await numberInto(conf.id);
      const [a, b, c] = [await party(A), await party(B), await party(C)];
      const calls = [dial(number, a), dial(number, b), dial(number, c)];
      const joined = await participants(conf.id, 3);
      const byCall = new Map<string, string>();
      for (const row of joined) byCall.set(row.reference_id, row.id);
      const callOf = async (x: RtpParty) =>
        (await (
          await testDb()
        )('calls')
          .where({ customer_id: f.customer.id })
          .whereRaw(`source->>'target' = ?`, [`+1555000${x.freq}`])
          .orderBy('tm_create', 'desc')
          .first())!.id as string;
      const ccOf = async (x: RtpParty) => byCall.get(await callOf(x))!;

      // the conference lists its participants
      const listed = await api().get(`/conferences/${conf.id}`);
      expect(listed.body.conferencecall_ids).to.have.members(joined.map((r) => r.id));
      const ccList = await api().get('/conferencecalls');
      expect(ccList.status).to.equal(200);
      expect(ccList.body.result.map((r: { id: string }) => r.id)).to.include.members(joined.map((r) => r.id));

      const rec = await api().post(`/conferences/${conf.id}/recording_start`, { format: 'wav', duration: 0 });
      expect(rec.status, JSON.stringify(rec.body)).to.equal(200);
      const twice = await api().post(`/conferences/${conf.id}/recording_start`, {});
      expect(twice.status).to.equal(409);
      expect(twice.body.error.reason).to.equal('RECORDING_ALREADY_ACTIVE');

      // once every party hears both others (the mix is up), a window of 100 frames each party hears is measured
      await Promise.all([a, b, c].flatMap((me) => [a, b, c].filter((o) => o !== me).map((o) => me.toneTurns(o.freq, true, 10_000))));
      const t0 = Date.now();
      await Promise.all([a, b, c].map((x) => x.framesHeard(t0, 100)));
      const t1 = Date.now();
      for (const [me, others] of [
        [a, [b, c]],
        [b, [a, c]],
        [c, [a, b]],
      ] as [RtpParty, RtpParty[]][]) {
        expect(me.framesBetween(t0, t1), `${me.freq} frames`).to.be.greaterThan(50);
        for (const o of others) expect(me.presence(o.freq, t0, t1), `${me.freq} hears ${o.freq}`).to.be.greaterThan(HEARS);
        expect(me.presence(me.freq, t0, t1), `${me.freq} hears itself`).to.be.lessThan(0.1);
      }

      // the whole mix as another subsystem (the media_stream WebSocket) takes it on the host node: only
      // the engine's mixer gives its raw frames; on fsmrf refused by name
      if (backend === 'fsmrf') expect(() => p.app.factory.services.conferences!.mixOf(conf.id)).to.throw(MediaBackendUnsupported, /fsmrf/);
      else {
        const mix = p.app.factory.services.conferences!.mixOf(conf.id)!;
        expect(mix).to.not.equal(undefined);
        const frames: Int16Array[] = [];
        let enough!: () => void;
        const thirty = new Promise<void>((resolve) => (enough = resolve));
        const fork = await mix.forkAudioStart({
          onFrame: (fr) => {
            if (frames.push(fr.slice()) === 30) enough();
          },
        });
        await bounded(thirty, 5000, '30 frames of the mix').finally(() => fork.stop());
        expect(frames.length).to.be.greaterThan(10);
        expect(frames.filter((fr) => [A, B, C].every((hz) => toneIn(fr, 0, 160, hz))).length / frames.length, 'mix frames with all three').to.be.greaterThan(HEARS);
        expect(p.app.factory.services.conferences!.mixOf('5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a')).to.equal(undefined);
      }

      // kick C: it leaves, its flow goes on (hangup), sipp gets the BYE
      const ccC = await ccOf(c);
      const kick = await api().del(`/conferencecalls/${ccC}`);
      expect(kick.status, JSON.stringify(kick.body)).to.equal(200);
      expect(kick.body).to.include({ id: ccC, status: 'leaving', conference_id: conf.id, reference_type: 'call' });
      await until(async () => (await api().get(`/conferencecalls/${ccC}`)).body.status === 'leaved', 10_000, 'C leaved');
      // C's call is still up (its flow sleeps), but out of the mix: once A no longer hears C nor C A, a
      // window of 60 frames each hears
      await Promise.all([a.toneTurns(C, false), c.toneTurns(A, false)]);
      const k0 = Date.now();
      await Promise.all([a.framesHeard(k0, 60), c.framesHeard(k0, 60)]);
      expect(a.presence(C, k0), 'A does not hear kicked C').to.be.lessThan(0.1);
      expect(c.presence(A, k0), 'kicked C does not hear A').to.be.lessThan(0.1);
      expect(c.framesBetween(k0), 'C still gets RTP').to.be.greaterThan(20);
      const rc = await calls[2]!;
      expect(rc.code, rc.errors + rc.messages).to.equal(0);
      const again = await api().del(`/conferencecalls/${ccC}`);
      expect(again.status).to.equal(409);
      expect(again.body.error.reason).to.equal('STATE_INVALID');
      expect((await api().get(`/conferences/${conf.id}`)).body.conferencecall_ids).to.not.include(ccC);

      const t2 = Date.now();
      await a.framesHeard(t2, 75);
      const t3 = Date.now();
      expect(a.presence(B, t2, t3), 'A still hears B').to.be.greaterThan(HEARS);
      expect(a.presence(C, t2, t3), 'A no longer hears C').to.be.lessThan(0.1);

      // mute B (the others stop hearing it), then unmute
      const ccB = await ccOf(b);
      const mute = await api().post(`/conferencecalls/${ccB}/mute`, { direction: 'in' });
      expect(mute.status, JSON.stringify(mute.body)).to.equal(200);
      await a.toneTurns(B, false);
      const t4 = Date.now();
      await a.framesHeard(t4, 50);
      expect(a.presence(B, t4, Date.now()), 'A does not hear muted B').to.be.lessThan(0.1);
      expect((await request(t.app).delete(`/v1.0/conferencecalls/${ccB}/mute`).query({ accesskey: f.accesskey }).send({ direction: 'in' })).status).to.equal(200);
      await a.toneTurns(B, true);
      const t5 = Date.now();
      await a.framesHeard(t5, 50);
      expect(a.presence(B, t5, Date.now()), 'A hears B again').to.be.greaterThan(HEARS);

      const stop = await api().post(`/conferences/${conf.id}/recording_stop`);
      expect(stop.status).to.equal(200);
      const recording = await until(
        async () => {
          const r = await (await testDb())('recordings').where({ reference_type: 'conference', reference_id: conf.id }).first();
          return r?.status === 'ended' ? r : null;
        },
        10_000,
        'recording ended',
      );
      const stop2 = await api().post(`/conferences/${conf.id}/recording_stop`);
      expect(stop2.status).to.equal(409);
      expect(stop2.body.error.reason).to.equal('RECORDING_NOT_ACTIVE');
      const after = (await api().get(`/conferences/${conf.id}`)).body;
      expect(after.recording_id).to.equal('00000000-0000-0000-0000-000000000000');
      expect(after.recording_ids).to.deep.equal([recording.id]);

      const wav = readWav(path.join(p.config.dataDir, 'recordings', recording.filenames[0]));
      expect(wav.info.format).to.include({ encoding: 'pcm', sampleRate: 8000, channels: 1, bitsPerSample: 16 });
      const seconds = wav.samples.length / 8000;
      expect(seconds).to.be.within(5, 30);
      // while all three were in, every 20 ms of the mix carries all three tones
      const windows = Math.floor(wav.samples.length / 160);
      let allThree = 0;
      for (let w = 0; w < windows; w++) if ([A, B, C].every((hz) => toneIn(wav.samples, w * 160, 160, hz))) allThree++;
      expect(allThree * 0.02, 'seconds of the mix with all three parties').to.be.greaterThan(1.5);
      const viaApi = await api().get(`/recordings/${recording.id}`);
      expect(viaApi.status).to.equal(200);
      expect(viaApi.body).to.include({ reference_type: 'conference', reference_id: conf.id, status: 'ended', format: 'wav' });
      const evs = (await eventsFor(p.redis, recording.id)).map((e) => e.event_type);
      expect(evs).to.deep.equal(['recording_started', 'recording_finished']);

      // DELETE: the conference terminates, A and B are taken out and their flows hang up
      const del = await api().del(`/conferences/${conf.id}`);
      expect(del.status).to.equal(200);
      for (const r of [await calls[0]!, await calls[1]!]) expect(r.code, r.errors + r.messages).to.equal(0);
      expect((await api().get(`/conferences/${conf.id}`)).status).to.equal(404);
      const row = await terminatedRoom(conf.id, 'terminated');
      expect(row.tm_end).to.be.instanceOf(Date);
      expect(row.conferencecall_ids).to.deep.equal([]);
      const types = (await eventsFor(p.redis, conf.id)).map((e) => e.event_type);
      expect(types[0]).to.equal('conference_created');
      expect(types).to.include('conference_deleted');
      const statuses = (await eventsFor(p.redis, conf.id)).map((e) => e.data.status);
      expect(statuses.filter((s, i) => s !== statuses[i - 1])).to.deep.equal(['starting', 'progressing', 'terminating', 'terminated']);
      const ccEvents = (await eventsFor(p.redis, ccC)).map((e) => e.event_type);
      expect(ccEvents).to.deep.equal(['conferencecall_joining', 'conferencecall_joined', 'conferencecall_leaving', 'conferencecall_leaved']);
      expect(fs.existsSync(path.join(p.config.dataDir, 'recordings', `${recording.id}.wav`))).to.equal(true);
    });

    it('a connect conference ejects the other side when one hangs up, then terminates; pre and post flows run', async () => {
      const db = await testDb();
      const pre = await flowsRepo(db).create({ customer_id: f.customer.id, actions: parseActions([{ type: 'variable_set', option: { key: 'pre', value: 'ran' } }]) } as never);
      const post = await flowsRepo(db).create({ customer_id: f.customer.id, actions: parseActions([{ type: 'variable_set', option: { key: 'post', value: 'ran' } }]) } as never);
      const conf = await progressing('connect', { pre_flow_id: pre.id, post_flow_id: post.id });
      expect(conf).to.include({ pre_flow_id: pre.id, post_flow_id: post.id });
      const number = await numberInto(conf.id);
      const [a, b] = [await party(A), await party(B)];
      const stays = dial(number, a);
      await participants(conf.id, 1);
      const leaves = dial(number, b, uacHangsUpAfter(`${number}@127.0.0.1:${p.sipPort}`, `+1555000${B}`, b.port, 2500));
      await participants(conf.id, 2);
      await a.toneTurns(B, true);
      const h0 = Date.now();
      await a.framesHeard(h0, 40);
      expect(a.presence(B, h0), 'A hears B').to.be.greaterThan(HEARS);
      const rb = await leaves;
      expect(rb.code, rb.errors + rb.messages).to.equal(0);
      const ra = await stays; // A is ejected, its flow hangs up
      expect(ra.code, ra.errors + ra.messages).to.equal(0);
      const row = await terminatedRoom(conf.id, 'connect terminated');
      expect(row.conferencecall_ids).to.deep.equal([]);
      const ccs = await db('conferencecalls').where({ conference_id: conf.id });
      expect(ccs.map((r) => r.status)).to.deep.equal(['leaved', 'leaved']);
      const flowA = await until(
        async () => {
          const af = await db('activeflows')
            .where({ id: ccs.find((r) => r.tm_create.getTime() === Math.min(...ccs.map((x) => x.tm_create.getTime())))!.activeflow_id })
            .first();
          return af?.status === 'ended' ? af : null;
        },
        10_000,
        'activeflow of A ended',
      );
      expect(flowA.variables).to.include({ pre: 'ran', post: 'ran' });
      const types = flowA.executed_actions.map((x: { type: string }) => x.type);
      expect(types).to.deep.equal(['answer', 'conference_join', 'variable_set', 'confbridge_join', 'variable_set', 'sleep', 'hangup']);
    });

    it('a conference whose host node died is adopted by the node of the next call that joins', async () => {
      const db = await testDb();
      const orphan = await conferencesRepo(db).create({ customer_id: f.customer.id, type: 'conference', status: 'progressing' });
      const key = `${p.config.redisKeyPrefix}conference-node:${orphan.id}`;
      await p.redis.set(key, 'dead-node'); // no node-alive:dead-node heartbeat
      const number = await numberInto(orphan.id);
      const x = await party(A);
      const call = dial(number, x);
      await participants(orphan.id, 1);
      expect(await p.redis.get(key)).to.equal(p.app.nodeId);
      expect((await api().del(`/conferences/${orphan.id}`)).status).to.equal(200);
      const r = await call;
      expect(r.code, r.errors + r.messages).to.equal(0);
      await until(async () => ((await db('conferences').where({ id: orphan.id }).first())!.status === 'terminated' ? true : null), 10_000, 'terminated');
    });

    it('conference_join to a conference that does not exist (or is over) ends the flow with a clear error', async () => {
      const db = await testDb();
      const ended = await conferencesRepo(db).create({ customer_id: f.customer.id, type: 'conference', status: 'terminated' });
      // hosted by another live node that takes no bridge legs (it advertises no SIP address)
      const elsewhere = await conferencesRepo(db).create({ customer_id: f.customer.id, type: 'conference', status: 'progressing' });
      await p.redis.set(`${p.config.redisKeyPrefix}node-alive:other-node`, '1', 'PX', 60_000);
      await p.redis.set(`${p.config.redisKeyPrefix}conference-node:${elsewhere.id}`, 'other-node');
      const why: Record<string, RegExp> = { [ended.id]: /is terminated/, [elsewhere.id]: /hosted on node other-node/ };
      for (const target of ['5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a', ended.id, elsewhere.id]) {
        const number = await numberInto(target);
        const x = await party(A);
        const r = await dial(number, x);
        expect(r.code, r.errors + r.messages).to.equal(0); // the platform hangs up
        const call = await until(async () => (await db('calls').where({ customer_id: f.customer.id, status: 'hangup' }).whereRaw(`destination->>'target' = ?`, [number]))[0], 10_000, 'hangup');
        const af = await endedActiveflow(call.activeflow_id);
        expect(af.end_reason).to.equal('error');
        expect(af.error).to.match(why[target] ?? /not found/);
      }
    });

    it('a conference times out: terminating, then terminated', async () => {
      const db = await testDb();
      // created 59.5 s ago with a 60 s timeout: the host's timer fires about 0.5 s after it hosts it
      const created = await conferencesRepo(db).create({ customer_id: f.customer.id, type: 'conference', timeout: 60, tm_create: new Date(Date.now() - 59_500) });
      await new ConferenceCommands(commandBus(t.ctx), t.ctx.redis, p.config.redisKeyPrefix).start(created.id);
      const res = { body: { id: created.id } };
      const row = await terminatedRoom(res.body.id, 'timed out');
      expect(row.tm_end).to.be.instanceOf(Date);
      const statuses = (await eventsFor(p.redis, res.body.id)).map((e) => e.data.status);
      expect(statuses).to.include.members(['terminating', 'terminated']);
    });
  });
