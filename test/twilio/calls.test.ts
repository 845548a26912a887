// Issue 36 part A: the Twilio-compatible Calls resource driven by the official `twilio` client against
// the platform (control-api app on loopback, sip-server and a media-app node in process, real Postgres
// and Redis); the calls it creates really INVITE a sipp UAS, and ending them sends CANCEL / BYE.
import { expect } from 'chai';
import request from 'supertest';
import twilio from 'twilio';
import { createAgent, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { Permission } from '../../core/permissions';
import { twilioClient, type ServedApp, type TwilioClient, restRefusal } from '../../testkit/twilio';
import { answeringUas, createExtension, registerOnly, sipp, until, type Platform } from '../../testkit/media-app/harness';
import { calleePhone } from '../../testkit/media-app/phones';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { accountSid } from '../../core/twilio/sids';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import { useTwilioCallbackStack } from '../../testkit/twilio-callbacks';
import { bufferBody } from '../../testkit/buffer-body';
import { type CallbackService } from '../../control-api/twilio/callbacks';

/** A GET whose body is kept as one Buffer, whatever its content type. */
const getBinary = (app: TestApp['app'], path: string, user?: string, pass?: string) => {
  const r = request(app).get(path);
  return (user ? r.auth(user, pass ?? '') : r).buffer(true).parse(bufferBody);
};

describe('twilio: Calls', function () {
  this.timeout(90_000);
  let p: Platform;
  let t: TestApp;
  let api: ServedApp;
  let f: Fixture;
  let sid: string;
  let token: string;
  let client: TwilioClient;
  let receiverUrl: string;
  let callbacks: CallbackService;
  let recordedCall = '';
  const received = useTwilioCallbackStack('twilio-cb-test', (s) => ({ p, t, api, f, sid, token, client, receiverUrl, callbacks } = s));

  const callCount = async () => (await t.ctx.db('calls').where({ customer_id: f.customer.id })).length;

  describe('auth and errors', () => {
    it('a wrong AuthToken is 401 code 20003; no Authorization is 401 with a Basic challenge', async () => {
      const bad = twilioClient(api.baseUrl, sid, '0'.repeat(32));
      const e = await restRefusal(bad.calls.list());
      expect(e.status).to.equal(401);
      expect(e.code).to.equal(20003);
      expect(e.moreInfo).to.match(/20003/);
      const res = await request(t.app).get(`/2010-04-01/Accounts/${sid}/Calls.json`);
      expect(res.status).to.equal(401);
      expect(res.headers['www-authenticate']).to.match(/^Basic /);
      expect(res.body).to.deep.equal({ code: 20003, message: 'Authenticate', more_info: 'https://www.twilio.com/docs/errors/20003', status: 401 });
    });

    it("another customer's AccountSid: as the user 20003, in the path 20404", async () => {
      const other = await createFixture(t.ctx);
      const otherSid = accountSid(other.customer.id);
      // my token does not open the other account
      const e1 = await restRefusal(twilioClient(api.baseUrl, otherSid, token).calls.list());
      expect([e1.status, e1.code]).to.deep.equal([401, 20003]);
      // my credentials, their path
      const e2 = await restRefusal(client.api.v2010.accounts(otherSid).calls.list());
      expect([e2.status, e2.code]).to.deep.equal([404, 20404]);
    });

    it('an API key SID (SK…) with its access key secret works; a deleted key is refused', async () => {
      const { row, token: secret } = await t.ctx.repos.accesskeys.create({ customer_id: f.customer.id, name: 'twilio' });
      const sk = `SK${row.id.replace(/-/g, '')}`;
      const viaKey = twilioClient(api.baseUrl, sk, secret, sid);
      expect(await viaKey.calls.list()).to.be.an('array');
      // the key's secret under another key's SID is no credential
      const e0 = await restRefusal(twilioClient(api.baseUrl, `SK${f.accesskeyRow.id.replace(/-/g, '')}`, secret, sid).calls.list());
      expect(e0.code).to.equal(20003);
      await t.ctx.db('accesskeys').where({ id: row.id }).update({ tm_delete: new Date() });
      const e = await restRefusal(viaKey.calls.list());
      expect([e.status, e.code]).to.deep.equal([401, 20003]);
    });

    it('a frozen account is refused with 403 code 20005', async () => {
      const frozen = await createFixture(t.ctx, { status: 'frozen' });
      const c = twilioClient(api.baseUrl, accountSid(frozen.customer.id), twilioAuthToken(t.ctx.config.jwtSecret, frozen.customer.id, 0));
      const e = await restRefusal(c.calls.list());
      expect([e.status, e.code]).to.deep.equal([403, 20005]);
    });

    it('bad create parameters get Twilio codes and write nothing', async () => {
      const before = await callCount();
      const cases: [Record<string, string>, number][] = [
        [{ To: '12345', From: '+15550100000', Twiml: '<Response/>' }, 21211],
        [{ From: '+15550100000', Twiml: '<Response/>' }, 21201],
        [{ To: '+15550100001', Twiml: '<Response/>' }, 21603],
        [{ To: '+15550100001', From: 'nobody', Twiml: '<Response/>' }, 21212],
        [{ To: 'sip:x@127.0.0.1:5999', From: '+15550100000' }, 21205],
        [{ To: 'sip:x@127.0.0.1:5999', From: '+15550100000', Url: 'ftp://example.com/a.xml' }, 21205],
        [{ To: 'sip:x@127.0.0.1:5999', From: '+15550100000', Url: 'http://[::1]/a.xml' }, 21205],
        [{ To: 'sip:x@127.0.0.1:5999', From: '+15550100000', Twiml: '<Response/>', StatusCallbackEvent: 'exploded' }, 20001],
        [{ To: 'sip:x@127.0.0.1:5999', From: '+15550100000', Twiml: '<Response/>', Timeout: '0' }, 20001],
        [{ To: 'sip:x@127.0.0.1:5999', From: '+15550100000', Twiml: '<Response/>', SendDigits: '12x' }, 21206],
        [{ To: 'client:nosuch', From: '+15550100000', Twiml: '<Response/>' }, 21211],
      ];
      for (const [form, code] of cases) {
        const res = await request(t.app).post(`/2010-04-01/Accounts/${sid}/Calls.json`).auth(sid, token).type('form').send(form);
        expect(res.status, JSON.stringify(form)).to.equal(400);
        expect(res.body.code, `${JSON.stringify(form)} → ${JSON.stringify(res.body)}`).to.equal(code);
        expect(res.body.more_info).to.equal(`https://www.twilio.com/docs/errors/${code}`);
        expect(res.body.status).to.equal(400);
      }
      expect(await callCount()).to.equal(before);
    });

    it('an unknown CallSid is 20404; a bad PageSize is 20001', async () => {
      const e = await restRefusal(client.calls('CA' + '0'.repeat(32)).fetch());
      expect([e.status, e.code]).to.deep.equal([404, 20404]);
      const e2 = await restRefusal(client.calls('not-a-sid').update({ status: 'completed' }));
      expect([e2.status, e2.code]).to.deep.equal([404, 20404]);
      const res = await request(t.app).get(`/2010-04-01/Accounts/${sid}/Calls.json`).query({ PageSize: '0' }).auth(sid, token);
      expect([res.status, res.body.code]).to.deep.equal([400, 20001]);
      const res2 = await request(t.app).get(`/2010-04-01/Accounts/${sid}/Calls.json`).query({ PageSize: 'many' }).auth(sid, token);
      expect([res2.status, res2.body.code]).to.deep.equal([400, 20001]);
    });
  });

  describe('real calls', () => {
    it('create → INVITE; ringing; Status=canceled → CANCEL; the call reads canceled', async () => {
      const uasPort = await freePort();
      const uas = sipp(answeringUas({ cancel: true, inviteTimeoutMs: 20_000 }), ['-i', '127.0.0.1', '-p', String(uasPort), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], {
        killAfterMs: 40_000,
      });
      await uas.port;
      const call = await client.calls.create({
        to: `sip:uas@127.0.0.1:${uasPort}`,
        from: '+15550100000',
        twiml: '<Response><Pause length="30"/></Response>',
        statusCallback: `${receiverUrl}/cancel?x=1`,
        statusCallbackMethod: 'GET',
      });
      expect(call.sid).to.match(/^CA[0-9a-f]{32}$/);
      expect(call.accountSid).to.equal(sid);
      expect(call.status).to.equal('queued');
      expect(call.direction).to.equal('outbound-api');
      expect(call.to).to.equal(`sip:uas@127.0.0.1:${uasPort}`);
      expect(call.from).to.equal('+15550100000');
      expect(call.dateCreated).to.be.instanceOf(Date);
      await until(async () => (await client.calls(call.sid).fetch()).status === 'ringing', 15_000, 'ringing');
      const ringing = await client.calls.list({ status: 'ringing' });
      expect(ringing.map((c) => c.sid)).to.include(call.sid);
      // a live call's record cannot be deleted: 20009, as Twilio
      const live = await restRefusal(client.calls(call.sid).remove());
      expect([live.status, live.code]).to.deep.equal([409, 20009]);
      const updated = await client.calls(call.sid).update({ status: 'canceled' });
      expect(updated.sid).to.equal(call.sid);
      const r = await uas.done;
      expect(r.code, r.errors).to.equal(0);
      expect(r.messages).to.match(/^CANCEL sip:/m);
      const ended = await until(
        async () => {
          const c = await client.calls(call.sid).fetch();
          return c.status === 'canceled' ? c : null;
        },
        10_000,
        'canceled',
      );
      expect(ended.endTime).to.be.instanceOf(Date);
      // no StatusCallbackEvent: only completed, here by GET, its parameters in the signed URL
      const got = await until(() => received.filter((r) => r.url.includes('/cancel?')).length > 0 && received.filter((r) => r.url.includes('/cancel?')), 10_000, 'callback');
      await callbacks.idle();
      const mine = received.filter((r) => r.url.includes('/cancel?'));
      expect(mine).to.have.length(1);
      expect(got[0]!.method).to.equal('GET');
      const q = Object.fromEntries(new URL(mine[0]!.url).searchParams);
      expect(q).to.include({ x: '1', CallSid: call.sid, AccountSid: sid, CallStatus: 'canceled', CallbackSource: 'call-progress-events', ApiVersion: '2010-04-01', SequenceNumber: '0' });
      expect(twilio.validateRequest(token, mine[0]!.signature, mine[0]!.url, {})).to.equal(true);
    });

    it('answered (SendDigits waits keep it up) → in-progress; Status=completed → BYE; completed with a duration', async () => {
      const uasPort = await freePort();
      const uas = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(uasPort), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 });
      await uas.port;
      // 40 × w = 20 s of waiting before the TwiML: the call stays answered whatever the TwiML does
      const call = await client.calls.create({
        to: `sip:uas@127.0.0.1:${uasPort}`,
        from: '+15550100000',
        url: 'http://127.0.0.1:9/twiml.xml',
        method: 'GET',
        sendDigits: 'w'.repeat(40),
        record: true,
        statusCallback: `${receiverUrl}/progress`,
        statusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
      });
      await until(async () => (await client.calls(call.sid).fetch()).status === 'in-progress', 15_000, 'in-progress');
      const listed = await client.calls.list({ to: `sip:uas@127.0.0.1:${uasPort}`, status: 'in-progress' });
      expect(listed.map((c) => c.sid)).to.deep.equal([call.sid]);
      // a redirect is handed to the node running the call (activeflow.redirect; media-app's twiml part runs it)
      const redirected = await client.calls(call.sid).update({ twiml: '<Response><Pause length="20"/></Response>' });
      expect(redirected.status).to.equal('in-progress');
      const both = await request(t.app).post(`/2010-04-01/Accounts/${sid}/Calls/${call.sid}.json`).auth(sid, token).type('form').send({ Url: 'http://127.0.0.1:9/a.xml', Twiml: '<Response/>' });
      expect([both.status, both.body.code]).to.deep.equal([400, 20001]);
      const asked = Date.now();
      await client.calls(call.sid).update({ status: 'completed' });
      const r = await uas.done;
      expect(r.code, r.errors).to.equal(0);
      expect(r.messages).to.match(/^BYE sip:/m);
      expect(Date.now() - asked).to.be.below(5000);
      const ended = await until(
        async () => {
          const c = await client.calls(call.sid).fetch();
          return c.status === 'completed' ? c : null;
        },
        10_000,
        'completed',
      );
      expect(Number(ended.duration)).to.be.at.least(0);
      expect(ended.startTime).to.be.instanceOf(Date);
      // every progress event, POSTed in order, signed as twilio.validateRequest checks
      await until(() => received.filter((r) => r.url.endsWith('/progress')).length >= 4, 10_000, 'four callbacks');
      const progress = received.filter((r) => r.url.endsWith('/progress'));
      expect(progress.map((r) => r.params.CallStatus)).to.deep.equal(['initiated', 'ringing', 'in-progress', 'completed']);
      expect(progress.map((r) => r.params.SequenceNumber)).to.deep.equal(['0', '1', '2', '3']);
      for (const r of progress) {
        expect(r.method).to.equal('POST');
        expect(r.params).to.include({ CallSid: call.sid, AccountSid: sid, Direction: 'outbound-api', From: '+15550100000', To: `sip:uas@127.0.0.1:${uasPort}` });
        expect(twilio.validateRequest(token, r.signature, r.url, r.params), JSON.stringify(r.params)).to.equal(true);
        expect(twilio.validateRequest('f'.repeat(32), r.signature, r.url, r.params)).to.equal(false);
      }
      expect(progress[3]!.params.CallDuration).to.match(/^\d+$/);
      // ended calls cannot be redirected or ended again
      const e = await restRefusal(client.calls(call.sid).update({ twiml: '<Response><Hangup/></Response>' }));
      expect([e.status, e.code]).to.deep.equal([400, 21220]);
      recordedCall = call.sid;
    });

    it('Record=true made a recording: list (all and the call’s), fetch, .wav and .mp3 media, delete', async () => {
      const recs = await until(
        async () => {
          const l = await client.recordings.list({ callSid: recordedCall });
          return l.length === 1 && l[0]!.status === 'completed' ? l : null;
        },
        15_000,
        'completed recording',
      );
      const rec = recs[0]!;
      expect(rec.sid).to.match(/^RE[0-9a-f]{32}$/);
      expect(rec.callSid).to.equal(recordedCall);
      expect(rec.accountSid).to.equal(sid);
      expect(rec.source, 'a Record=true recording, as Twilio names it').to.equal('OutboundAPI');
      expect((await client.calls(recordedCall).recordings.list()).map((r) => r.sid)).to.deep.equal([rec.sid]);
      // DateCreated filters by UTC day, as Twilio: > on or after it, < before it
      const today = new Date(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
      const tomorrow = new Date(today.getTime() + 86_400_000);
      expect((await client.recordings.list({ dateCreatedAfter: today })).map((r) => r.sid)).to.deep.equal([rec.sid]);
      expect(await client.recordings.list({ dateCreatedAfter: tomorrow })).to.have.length(0);
      expect(await client.recordings.list({ dateCreatedBefore: today })).to.have.length(0);
      expect((await client.recordings.list({ dateCreated: today })).map((r) => r.sid)).to.deep.equal([rec.sid]);
      expect((await client.recordings(rec.sid).fetch()).sid).to.equal(rec.sid);
      const wav = await getBinary(t.app, `/2010-04-01/Accounts/${sid}/Recordings/${rec.sid}.wav`, sid, token);
      expect(wav.status).to.equal(200);
      expect(wav.headers['content-type']).to.equal('audio/x-wav');
      expect((wav.body as Buffer).subarray(0, 4).toString()).to.equal('RIFF');
      const bare = await getBinary(t.app, `/2010-04-01/Accounts/${sid}/Recordings/${rec.sid}`, sid, token);
      expect((bare.body as Buffer).equals(wav.body as Buffer)).to.equal(true);
      const mp3 = await getBinary(t.app, `/2010-04-01/Accounts/${sid}/Recordings/${rec.sid}.mp3`, sid, token);
      expect(mp3.status).to.equal(200);
      expect(mp3.headers['content-type']).to.equal('audio/mpeg');
      const head = mp3.body as Buffer;
      expect(head.length).to.be.above(100);
      expect(head.subarray(0, 3).toString() === 'ID3' || (head[0] === 0xff && (head[1]! & 0xe0) === 0xe0)).to.equal(true);
      // media needs the account's credentials
      expect((await request(t.app).get(`/2010-04-01/Accounts/${sid}/Recordings/${rec.sid}.wav`)).status).to.equal(401);
      expect(await client.recordings(rec.sid).remove()).to.equal(true);
      const e = await restRefusal(client.recordings(rec.sid).fetch());
      expect([e.status, e.code]).to.deep.equal([404, 20404]);
      expect(await client.recordings.list()).to.have.length(0);
    });

    it("pages as Twilio's: page_size, next_page_uri, previous_page_uri, the calls key", async () => {
      const first = await request(t.app).get(`/2010-04-01/Accounts/${sid}/Calls.json`).query({ PageSize: '1' }).auth(sid, token);
      expect(first.status).to.equal(200);
      expect(first.body).to.include({ page: 0, page_size: 1, start: 0, end: 0, previous_page_uri: null });
      expect(first.body.calls).to.have.length(1);
      expect(first.body.next_page_uri).to.match(/Page=1/);
      expect(first.body.first_page_uri).to.match(/Page=0/);
      const second = await request(t.app).get(first.body.next_page_uri).auth(sid, token);
      expect(second.body.calls).to.have.length(1);
      expect(second.body.calls[0].sid).to.not.equal(first.body.calls[0].sid);
      expect(second.body.previous_page_uri).to.match(/Page=0/);
      // the client's own paging walks every page
      const all = await client.calls.list({ pageSize: 1 });
      expect(all.map((c) => c.sid)).to.have.length(2);
      // StartTime filters by UTC day, as Twilio: = that day, < before it, > on or after it
      const today = new Date(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
      const tomorrow = new Date(today.getTime() + 86_400_000);
      expect(await client.calls.list({ startTime: today })).to.have.length(2);
      expect(await client.calls.list({ startTimeAfter: today })).to.have.length(2);
      expect(await client.calls.list({ startTimeAfter: tomorrow })).to.have.length(0);
      expect(await client.calls.list({ startTimeBefore: today })).to.have.length(0);
      expect(await client.calls.list({ startTimeBefore: tomorrow })).to.have.length(2);
      const badDay = await request(t.app).get(`/2010-04-01/Accounts/${sid}/Calls.json`).query({ 'StartTime>': 'yesterday' }).auth(sid, token);
      expect([badDay.status, badDay.body.code]).to.deep.equal([400, 20001]);
      const date = first.body.calls[0].date_created as string;
      expect(date).to.match(/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} \+0000$/);
    });

    it("DELETE Calls/{sid}: an ended call's record is gone (204); it is no longer fetched or listed", async () => {
      const before = (await client.calls.list()).map((c) => c.sid);
      expect(before).to.include(recordedCall);
      expect(await client.calls(recordedCall).remove()).to.equal(true);
      const e = await restRefusal(client.calls(recordedCall).fetch());
      expect([e.status, e.code]).to.deep.equal([404, 20404]);
      expect((await client.calls.list()).map((c) => c.sid)).to.deep.equal(before.filter((s) => s !== recordedCall));
      const again = await restRefusal(client.calls(recordedCall).remove());
      expect([again.status, again.code]).to.deep.equal([404, 20404]);
    });

    it('To=client:NAME rings the registered extension of that name; the call reads to client:NAME', async () => {
      const { ext, domain, password } = await createExtension(f.customer.id);
      const phonePort = await freePort();
      const reg = await sipp(registerOnly(ext.username, domain), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', ext.username, '-ap', password]).done;
      expect(reg.code, reg.errors).to.equal(0);
      const phone = sipp(calleePhone(ext.username), ['-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 });
      await phone.port;
      // SendDigits waits (20 s) keep the answered call up whatever the TwiML does, as in the test above
      const call = await client.calls.create({ to: `client:${ext.extension}`, from: '+15550100000', twiml: '<Response><Pause length="30"/></Response>', sendDigits: 'w'.repeat(40) });
      expect(call.to).to.equal(`client:${ext.extension}`);
      await until(async () => (await client.calls(call.sid).fetch()).status === 'in-progress', 15_000, 'in-progress');
      await client.calls(call.sid).update({ status: 'completed' });
      const r = await phone.done;
      expect(r.code, r.errors).to.equal(0);
      expect(r.messages).to.match(new RegExp(`^INVITE sip:${ext.username}@127\\.0\\.0\\.1:${phonePort}`, 'm'));
      expect(r.messages).to.match(/^BYE sip:/m);
    });
  });

  describe('credentials (extension)', () => {
    it('GET /v1.0/twilio/credentials masks the token; POST /v1.0/twilio/auth_token rotates it', async () => {
      const got = await request(t.app).get('/v1.0/twilio/credentials').query({ accesskey: f.accesskey });
      expect(got.status).to.equal(200);
      expect(got.body.account_sid).to.equal(sid);
      expect(got.body.auth_token).to.equal(`${'*'.repeat(28)}${token.slice(-4)}`);
      const rot = await request(t.app).post('/v1.0/twilio/auth_token').query({ accesskey: f.accesskey });
      expect(rot.status).to.equal(200);
      expect(rot.body.generation).to.equal(1);
      expect(rot.body.auth_token)
        .to.match(/^[0-9a-f]{32}$/)
        .and.not.equal(token);
      const e = await restRefusal(client.calls.list());
      expect(e.code).to.equal(20003);
      expect(await twilioClient(api.baseUrl, sid, rot.body.auth_token).calls.list()).to.be.an('array');
      token = rot.body.auth_token;
      client = twilioClient(api.baseUrl, sid, token);
    });

    it('a manager reads but cannot rotate; an agent does neither; the generation is unchanged', async () => {
      const manager = await createAgent(t.ctx, f.customer.id, Permission.CustomerManager);
      const agent = await createAgent(t.ctx, f.customer.id, Permission.CustomerAgent);
      const got = await request(t.app).get('/v1.0/twilio/credentials').query({ token: manager.token });
      expect(got.status).to.equal(200);
      expect(got.body.auth_token).to.equal(`${'*'.repeat(28)}${token.slice(-4)}`);
      const generation = got.body.generation as number;
      const rot = await request(t.app).post('/v1.0/twilio/auth_token').query({ token: manager.token });
      expect(rot.status).to.equal(403);
      expect(JSON.stringify(rot.body)).to.not.include(token);
      expect((await request(t.app).get('/v1.0/twilio/credentials').query({ token: agent.token })).status).to.equal(403);
      expect((await request(t.app).post('/v1.0/twilio/auth_token').query({ token: agent.token })).status).to.equal(403);
      const row = await t.ctx.db('customers').where({ id: f.customer.id }).first('twilio_token_generation');
      expect(row?.twilio_token_generation).to.equal(generation);
      expect(await client.calls.list()).to.be.an('array');
    });
  });
});
