// The close cascade of a call (media-app/call/session.ts) under faults, on real loopback SIP and RTP:
// a media worker dying under 20 live sipp calls ends every one of them (BYE to sipp, hangup row,
// ports back), and a real database failure while dialling ends the call instead of leaving it dialing.
import { sipProvider } from '../../testkit/providers';
import { hungUpCall } from '../../testkit/call-ends';
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeG711 } from '../../core/audio/g711';
import { writeRtpPcap } from '../../testkit/ai/audio';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { callsRepo } from '../../core/repos/calls';
import { routesRepo } from '../../core/repos/routes';
import { repos } from '../../core/repos';
import { testDb, truncateAll } from '../../testkit/db';
import { freePort, sippMediaPort, udpBound } from '../../testkit/ports';
import { answeringUas, eventsFor, killAllSipp, RtpSink, sipp, startPlatform, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';
import { dialingCall } from '../../testkit/media-app/originate';
import { embeddedEndpoint } from '../../media-app/media-server/endpoint';

describe('call close cascade under faults', function () {
  this.timeout(120_000);
  let p: Platform;

  before(async () => {
    await truncateAll();
    const db = await testDb();
    // a real database refusal: updates of the listed calls fail in Postgres itself
    await db.raw(`create table if not exists test_refused_call_updates (id text not null, status text not null)`);
    await db.raw(`create or replace function test_refuse_call_update() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from test_refused_call_updates r where r.id = new.id::text
                   and ((r.status = '*' and new.status::text <> 'hangup') or r.status = new.status::text)) then
          raise exception 'injected failure: update of call % refused', new.id;
        end if;
        return new;
      end $$`);
    await db.raw(`drop trigger if exists test_refuse_call_update on calls`);
    await db.raw(`create trigger test_refuse_call_update before update on calls for each row execute function test_refuse_call_update()`);
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }); // the callee (sipp) listens on loopback: opted in
  });
  after(async () => {
    killAllSipp();
    await p?.close();
    const db = await testDb();
    await db.raw(`drop trigger if exists test_refuse_call_update on calls`);
    await db.raw(`drop table if exists test_refused_call_updates`);
  });

  async function customer(): Promise<string> {
    return (await repos(await testDb()).customers.create({ email: `cf${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'cf' })).id;
  }

  it('a database failure while dialling (admission write refused) ends the call: failed, never left dialing', async () => {
    const db = await testDb();
    const cid = await customer();
    const port = await freePort();
    const provider = await sipProvider(db, `127.0.0.1:${port}`, 'p');
    await routesRepo(db).create({ customer_id: cid, name: 'r', detail: '', provider_id: provider.id, priority: 1, target: 'all' });
    await repos(db).outboundConfigs.create({ customer_id: cid, destination_whitelist: ['us'] });
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'hangup' }]) } as never);
    const row = await callsRepo(db).create({
      customer_id: cid,
      flow_id: flow.id,
      source: { type: 'tel', target: '+15550001111' },
      destination: { type: 'tel', target: '+15557650001' },
      direction: 'outgoing',
      status: 'dialing',
    });
    await db('test_refused_call_updates').insert({ id: row.id, status: '*' });
    await p.app.factory.originate([row.id]);
    const done = await hungUpCall(row.id, 5000, 'the call ends');
    expect(done.hangup_reason).to.equal('failed');
    expect((await eventsFor(p.redis, row.id)).map((e) => e.event_type)).to.deep.equal(['call_hangup']);
    await until(() => p.app.calls.get(row.id) === undefined, 2000, 'live map cleaned');
    expect(await db('calls').where({ customer_id: cid, status: 'dialing' })).to.have.length(0);
  });

  it('a database failure on the answer (progressing refused) ends the call: BYE to the callee, hangup row', async () => {
    const db = await testDb();
    const cid = await customer();
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'talk', option: { text: 'never heard', language: 'en-US' } }]) } as never);
    const port = await freePort();
    const row = await dialingCall(db, cid, flow.id, `callee@127.0.0.1:${port}`);
    await db('test_refused_call_updates').insert({ id: row.id, status: 'progressing' });
    const callee = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 30_000 });
    await udpBound(port); // the callee has bound its port: the INVITE waits in its socket
    await p.app.factory.originate([row.id]);
    const r = await callee.done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    const done = await hungUpCall(row.id, 5000, 'the call ends');
    expect(done.hangup_reason).to.not.equal('');
    expect(done.tm_progressing).to.equal(null);
    const types = (await eventsFor(p.redis, row.id)).map((e) => e.event_type);
    expect(types.filter((t) => t === 'call_hangup')).to.have.length(1);
    expect(types).to.not.include('call_progressing');
    await until(() => p.app.calls.get(row.id) === undefined, 2000, 'live map cleaned');
  });
  // last: the platform's only media worker is gone afterwards
  it('a media worker dying under 20 live calls ends each within 2 s: BYE to sipp, hangup row with a reason, recording finished, ports back to zero', async () => {
    const db = await testDb();
    const cid = await customer();
    await trunksRepo(db).create(cid, `tr${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'answer' }, { type: 'echo', option: { duration: 60_000 } }]) } as never);
    await numbersRepo(db).create({ customer_id: cid, number: '+899100000201', type: 'virtual', call_flow_id: flow.id });
    // one sink for all N calls: every call's echo counts
    const sink = await RtpSink.open({ many: true });
    const N = 20;
    try {
      // sipp plays a tone at the platform (20 s of RTP); the flow's echo sends it back to the sink in the SDP
      const pcm = Int16Array.from({ length: 8000 * 20 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)));
      const pcap = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cf-')), 'tone.pcap');
      writeRtpPcap(pcap, Buffer.from(encodeG711('PCMU', pcm)));
      const steps = `<nop><action><exec play_pcap_audio="${pcap}"/></action></nop>`;
      const run = sipp(
        uacWaitsForBye(`+899100000201@127.0.0.1:${p.sipPort}`, '+15551230201', sink.port, { steps, byeTimeoutMs: 60_000 }),
        [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', String(N), '-l', String(N), '-r', '10', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
        { killAfterMs: 90_000 },
      );
      await until(
        async () => {
          const n = await db('calls').where({ customer_id: cid, status: 'progressing' }).count<{ n: string }[]>('id as n');
          return Number(n[0]!.n) === N;
        },
        30_000,
        `${N} calls up`,
      );
      await until(() => sink.packets > 0, 10_000, 'RTP from the platform');
      expect(p.engine().ports.allocated).to.equal(N);
      const live = p.app.calls.all().map((c) => p.app.factory.get(c.id)!);
      expect(live).to.have.length(N);
      // one of them is recording: the recording is finished (row ended) when its call goes
      const { recording_id } = await live[0]!.recordings.start({ format: 'wav', end_of_silence: 0, end_of_key: '', duration: 0, beep_start: false });
      await until(async () => (await db('recordings').where({ id: recording_id }).first())?.status === 'recording', 5000, 'recording');
      const worker = embeddedEndpoint(live[0]!.endpoint!, 'the worker of a leg').host;
      const killedAt = Date.now();
      await worker.kill();
      const rows = await until(
        async () => {
          const r = await db('calls').where({ customer_id: cid });
          return r.every((c) => c.status === 'hangup') ? r : null;
        },
        5000,
        'every call in hangup',
      );
      expect(rows).to.have.length(N);
      for (const r of rows) {
        expect(r.tm_hangup!.getTime() - killedAt, `call ${r.id} ended within 2 s`).to.be.at.most(2000);
        expect(r.hangup_reason, `call ${r.id} reason`).to.not.equal('');
        expect(r.hangup_by).to.equal('local');
        const types = (await eventsFor(p.redis, r.id)).map((e) => e.event_type);
        expect(
          types.filter((t) => t === 'call_hangup'),
          `one call_hangup for ${r.id}`,
        ).to.have.length(1);
      }
      const result = await run.done;
      expect(result.code, result.errors + result.messages).to.equal(0);
      expect((result.messages.match(/^BYE sip:/gm) ?? []).length, 'a BYE per call').to.equal(N);
      expect(p.engine().ports.allocated).to.equal(0);
      await until(() => p.app.calls.size === 0, 2000, 'live map empty');
      await until(async () => (await db('recordings').where({ id: recording_id }).first())?.status === 'ended', 3000, 'recording ended');
      expect((await eventsFor(p.redis, recording_id)).map((e) => e.event_type)).to.deep.equal(['recording_started', 'recording_finished']);
    } finally {
      sink.close();
    }
  });
});
