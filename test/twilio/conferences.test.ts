// Issue 36: Conferences and Participants driven by the official `twilio` client against the platform
// (control-api on loopback, sip-server and a media-app node in process, real Postgres and Redis). The
// participants are sipp callers whose flow joins one of our conferences; their RTP peers talk a tone
// and measure what they hear, so a mute is checked in the audio, a kick by the BYE sipp gets.
import { useTwilioRestStack, type TwilioRestStack } from '../../testkit/twiml/stack';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { createFixture } from '../../testkit/api';
import { until } from '../../testkit/media-app/harness';
import { answerReinvite } from '../../testkit/media-app/sipp-steps';
import { placeCall, type PlacedCall } from '../../testkit/streams/support';
import { twilioClient, restRefusal } from '../../testkit/twilio';
import { conferencesRepo } from '../../core/repos/conferences';
import { callSid, toSid } from '../../core/twilio/sids';

/** Voiced packets in a 2 s window that mean "hears": well below the 100 sent, for a loaded machine. */
const HEARS = 15;

const today = () => new Date(new Date().toISOString().slice(0, 10) + 'T00:00:00Z');

describe('twilio: Conferences and Participants', function () {
  this.timeout(120_000);
  let s: TwilioRestStack;

  useTwilioRestStack((x) => (s = x));

  const v1 = () => ({
    post: (url: string, body?: object) => request(s.stack.api.app).post(`/v1.0${url}`).query({ accesskey: s.f.accesskey }).send(body),
    get: (url: string) => request(s.stack.api.app).get(`/v1.0${url}`).query({ accesskey: s.f.accesskey }),
  });

  async function room(name: string): Promise<string> {
    const res = await v1().post('/conferences', { type: 'conference', name });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    await until(async () => (await v1().get(`/conferences/${res.body.id}`)).body.status === 'progressing', 10_000, 'progressing');
    return res.body.id as string;
  }

  async function join(conferenceId: string): Promise<PlacedCall> {
    const c = await placeCall(s.stack, s.f.customer.id, [{ type: 'answer' }, { type: 'conference_join', option: { conference_id: conferenceId } }, { type: 'hangup' }]);
    s.placed.push(c);
    return c;
  }

  it('a room with two sipp callers: listed, filtered, muted (heard no more), kicked (BYE), ended', async () => {
    const confId = await room('twilio room');
    const cf = toSid('CF', confId);
    const fresh = await s.client.conferences(cf).fetch();
    expect(fresh).to.include({ sid: cf, accountSid: s.sid, friendlyName: 'twilio room', status: 'init' });
    expect(fresh.uri).to.equal(`/2010-04-01/Accounts/${s.sid}/Conferences/${cf}.json`);
    expect(fresh.subresourceUris.participants).to.equal(`/2010-04-01/Accounts/${s.sid}/Conferences/${cf}/Participants.json`);
    expect(fresh.dateCreated).to.be.instanceOf(Date);
    expect((await s.client.conferences.list({ status: 'init' })).map((c) => c.sid)).to.include(cf);

    const a = await join(confId);
    const b = await join(confId);
    await until(async () => (await s.client.conferences(cf).participants.list()).filter((p) => p.status === 'connected').length === 2 || null, 20_000, 'two connected');
    expect((await s.client.conferences(cf).fetch()).status).to.equal('in-progress');
    expect((await s.client.conferences.list({ status: 'in-progress' })).map((c) => c.sid)).to.include(cf);
    expect((await s.client.conferences.list({ status: 'init' })).map((c) => c.sid)).to.not.include(cf);
    expect((await s.client.conferences.list({ friendlyName: 'twilio room' })).map((c) => c.sid)).to.deep.equal([cf]);
    expect((await s.client.conferences.list({ friendlyName: 'no such room' })).length).to.equal(0);
    expect((await s.client.conferences.list({ dateCreated: today() })).map((c) => c.sid)).to.include(cf);
    expect((await s.client.conferences.list({ dateCreatedBefore: today() })).map((c) => c.sid)).to.not.include(cf);
    // paging: one per page, the SDK follows next_page_uri
    const page = await s.client.conferences.page({ pageSize: 1 });
    expect(page.instances.length).to.equal(1);

    const listed = await s.client.conferences(cf).participants.list();
    expect(listed.map((p) => p.callSid)).to.have.members([callSid(a.callId), callSid(b.callId)]);
    for (const p of listed) expect(p).to.include({ conferenceSid: cf, accountSid: s.sid, muted: false, hold: false, coaching: false, status: 'connected' });
    const one = await s.client.conferences(cf).participants(callSid(b.callId)).fetch();
    expect(one.uri).to.equal(`/2010-04-01/Accounts/${s.sid}/Conferences/${cf}/Participants/${callSid(b.callId)}.json`);

    // A hears B's tone; muted B is heard no more; unmuted again
    // each window starts once the change reached A and lasts 100 packets A hears (the measured media)
    expect(a.peer.voiced(await a.peer.windowAfter(true)), 'A hears B').to.be.greaterThan(HEARS);
    const muted = await s.client.conferences(cf).participants(callSid(b.callId)).update({ muted: true });
    expect(muted.muted).to.equal(true);
    expect((await s.client.conferences(cf).participants(callSid(b.callId)).fetch()).muted).to.equal(true);
    expect((await s.client.conferences(cf).participants.list({ muted: true })).map((p) => p.callSid)).to.deep.equal([callSid(b.callId)]);
    expect(a.peer.voiced(await a.peer.windowAfter(false)), 'A does not hear muted B (A still gets RTP: the window is 100 packets)').to.be.lessThan(5);
    expect((await s.client.conferences(cf).participants(callSid(b.callId)).update({ muted: false })).muted).to.equal(false);
    expect(a.peer.voiced(await a.peer.windowAfter(true)), 'A hears B again').to.be.greaterThan(HEARS);

    // kick A: out of the room, its flow goes on (hangup), sipp gets the BYE
    expect(await s.client.conferences(cf).participants(callSid(a.callId)).remove()).to.equal(true);
    const ra = await a.sipp;
    expect(ra.code, ra.errors + ra.messages).to.equal(0);
    await until(async () => (await s.client.conferences(cf).participants(callSid(a.callId)).fetch()).status === 'complete' || null, 10_000, 'A complete');
    expect((await s.client.conferences(cf).participants.list()).map((p) => p.callSid)).to.deep.equal([callSid(b.callId)]);
    const again = await restRefusal(s.client.conferences(cf).participants(callSid(a.callId)).remove());
    expect([again.status, again.code]).to.deep.equal([404, 20404]);

    // end the room: B is taken out (BYE), the record stays, completed
    const ended = await s.client.conferences(cf).update({ status: 'completed' });
    expect(ended.status).to.equal('completed');
    const rb = await b.sipp;
    expect(rb.code, rb.errors + rb.messages).to.equal(0);
    await until(async () => (await v1().get(`/conferences/${confId}`)).body.status === 'terminated' || null, 10_000, 'terminated');
    expect((await s.client.conferences(cf).fetch()).status).to.equal('completed');
    expect((await s.client.conferences.list({ status: 'completed' })).map((c) => c.sid)).to.include(cf);
    expect(await s.client.conferences(cf).participants.list()).to.deep.equal([]);
    // ending it twice answers it as it is
    expect((await s.client.conferences(cf).update({ status: 'completed' })).status).to.equal('completed');
  });

  it('Hold=true with HoldUrl re-INVITEs the participant sendonly and it hears that music (fetched with GET); Hold=false sendrecv; hold reads back', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'holdurl-'));
    const wav = path.join(dir, 'hold.wav');
    execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', wav, 'synth', '2', 'sine', '600', 'vol', '0.3']);
    const fetched: string[] = [];
    const music = http.createServer((req, res) => {
      fetched.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'Content-Type': 'audio/wav' }).end(fs.readFileSync(wav));
    });
    await new Promise<void>((r) => music.listen(0, '127.0.0.1', r));
    try {
      const confId = await room('hold room');
      const cf = toSid('CF', confId);
      const c = await placeCall(s.stack, s.f.customer.id, [{ type: 'answer' }, { type: 'conference_join', option: { conference_id: confId } }, { type: 'hangup' }], {
        steps: (port) => `${answerReinvite(port, 'recvonly', 2)}\n${answerReinvite(port, 'sendrecv', 3)}`,
      });
      s.placed.push(c);
      await until(async () => (await s.client.conferences(cf).participants.list()).filter((p) => p.status === 'connected').length === 1 || null, 20_000, 'connected');
      const from = c.peer.levels.length;
      const holdUrl = `http://127.0.0.1:${(music.address() as { port: number }).port}/hold.wav`;
      const held = await s.client.conferences(cf).participants(callSid(c.callId)).update({ hold: true, holdUrl });
      expect(held.hold).to.equal(true);
      expect((await s.client.conferences(cf).participants.list({ hold: true })).map((p) => p.callSid)).to.deep.equal([callSid(c.callId)]);
      await until(() => c.peer.voiced(from) > HEARS || null, 10_000, 'the held participant hears the hold music');
      expect(fetched[0]).to.equal('GET /hold.wav');
      const back = await s.client.conferences(cf).participants(callSid(c.callId)).update({ hold: false });
      expect(back.hold).to.equal(false);
      expect(await s.client.conferences(cf).participants.list({ hold: true })).to.deep.equal([]);
      await s.client.conferences(cf).update({ status: 'completed' });
      // sipp got both re-INVITEs (its scenario waits for each), then the BYE
      const r = await c.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      expect(r.messages.match(/a=sendonly/g)?.length ?? 0, 'the hold offer').to.be.greaterThan(0);
    } finally {
      music.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('bad input: unknown or foreign sids 20404, bad parameters 20001, POST Participants to a refused number 21215, wrong token 20003', async () => {
    const other = await createFixture(s.stack.api.ctx);
    const foreign = await conferencesRepo(s.stack.api.ctx.db).create({ customer_id: other.customer.id, type: 'conference', name: 'theirs' });
    const theirs = toSid('CF', foreign.id);
    for (const bad of [theirs, 'CF' + '0'.repeat(32), 'CFnot-a-sid', toSid('CA', foreign.id)]) {
      const e = await restRefusal(s.client.conferences(bad).fetch());
      expect([e.status, e.code], bad).to.deep.equal([404, 20404]);
    }
    expect((await s.client.conferences.list()).map((c) => c.sid)).to.not.include(theirs);
    const e1 = await restRefusal(s.client.conferences(theirs).update({ status: 'completed' }));
    expect([e1.status, e1.code]).to.deep.equal([404, 20404]);
    expect((await conferencesRepo(s.stack.api.ctx.db).get(foreign.id))!.status).to.equal('starting');
    const e2 = await restRefusal(s.client.conferences(theirs).participants.list());
    expect(e2.code).to.equal(20404);

    const mineId = await room('bad inputs');
    const mine = toSid('CF', mineId);
    const base = `/2010-04-01/Accounts/${s.sid}/Conferences`;
    const auth = (r: request.Test) => r.auth(s.sid, s.token);
    for (const [path, body, code] of [
      [`${base}/${mine}.json`, { Status: 'in-progress' }, 20001],
      [`${base}/${mine}.json`, {}, 20001],
      [`${base}/${mine}.json`, { AnnounceUrl: 'ftp://127.0.0.1:9/a' }, 20001],
      [`${base}/${mine}.json`, { AnnounceMethod: 'GET' }, 20001],
      [`${base}/${mine}.json`, { AnnounceUrl: 'http://127.0.0.1:9/a', AnnounceMethod: 'PUT' }, 20001],
    ] as const) {
      const res = await auth(request(s.stack.api.app).post(path).type('form').send(body));
      expect([res.status, res.body.code], JSON.stringify(body)).to.deep.equal([400, code]);
    }
    expect((await s.client.conferences(mine).fetch()).status).to.equal('init');
    const badStatus = await auth(request(s.stack.api.app).get(`${base}.json`).query({ Status: 'exploded' }));
    expect([badStatus.status, badStatus.body.code]).to.deep.equal([400, 20001]);
    const badDate = await auth(request(s.stack.api.app).get(`${base}.json`).query({ DateCreated: 'yesterday' }));
    expect([badDate.status, badDate.body.code]).to.deep.equal([400, 20001]);
    const badPage = await auth(request(s.stack.api.app).get(`${base}.json`).query({ PageSize: '0' }));
    expect([badPage.status, badPage.body.code]).to.deep.equal([400, 20001]);

    const add = await auth(request(s.stack.api.app).post(`${base}/${mine}/Participants.json`).type('form').send({ From: '+15550100000', To: '+15550100001' }));
    // POST Participants dials through the egress rules as POST Calls does: this number is not allowed
    expect([add.status, add.body.code]).to.deep.equal([400, 21215]);
    const nobody = await restRefusal(s.client.conferences(mine).participants(callSid(foreign.id)).fetch());
    expect([nobody.status, nobody.code]).to.deep.equal([404, 20404]);
    const muteNobody = await auth(
      request(s.stack.api.app)
        .post(`${base}/${mine}/Participants/${callSid(foreign.id)}.json`)
        .type('form')
        .send({ Muted: 'true' }),
    );
    expect([muteNobody.status, muteNobody.body.code]).to.deep.equal([404, 20404]);

    // a participant's bad update parameters (checked before anything is sent)
    const c = await join(mineId);
    await until(async () => (await s.client.conferences(mine).participants.list()).length === 1 || null, 20_000, 'joined');
    await until(async () => (await s.client.conferences(mine).participants(callSid(c.callId)).fetch()).status === 'connected' || null, 20_000, 'connected');
    const pPath = `${base}/${mine}/Participants/${callSid(c.callId)}.json`;
    for (const body of [
      { Muted: 'maybe' },
      { Coaching: 'true', CallSidToCoach: callSid(c.callId) },
      { Coaching: 'true' },
      {},
      { HoldUrl: 'http://127.0.0.1:9/h.wav' },
      { Hold: 'true', HoldUrl: 'http://127.0.0.1:9/twiml' },
      { Hold: 'true', HoldUrl: 'http://127.0.0.1:9/h.wav', HoldMethod: 'POST' },
    ]) {
      const res = await auth(request(s.stack.api.app).post(pPath).type('form').send(body));
      expect([res.status, res.body.code], JSON.stringify(body)).to.deep.equal([400, 20001]);
    }
    expect((await s.client.conferences(mine).participants(callSid(c.callId)).fetch()).muted).to.equal(false);

    const wrong = twilioClient(s.api.baseUrl, s.sid, '0'.repeat(32));
    const e3 = await restRefusal(wrong.conferences.list());
    expect([e3.status, e3.code]).to.deep.equal([401, 20003]);
    await s.client.conferences(mine).update({ status: 'completed' });
    const r = await c.sipp;
    expect(r.code, r.errors + r.messages).to.equal(0);
  });
});
