// Issue 36 part A: IncomingPhoneNumbers through the official `twilio` client. VoiceUrl makes the
// number's call flow a managed flow of one `twiml` action, so a real inbound call (sipp through a
// trunk) runs it; the number's StatusCallback gets the signed `completed` callback.
import { expect } from 'chai';
import request from 'supertest';
import twilio from 'twilio';
import { type Fixture, type TestApp } from '../../testkit/api';
import { type TwilioClient, restRefusal } from '../../testkit/twilio';
import { sipp, uacWaitsForBye, until, RtpSink, type Platform } from '../../testkit/media-app/harness';
import { sippMediaPort } from '../../testkit/ports';
import { numbersRepo } from '../../core/repos/numbers';
import { flowsRepo } from '../../core/repos/flows';
import { trunksRepo } from '../../core/repos/trunks';
import { EMPTY_UUID } from '../../core/ids';
import { useTwilioCallbackStack } from '../../testkit/twilio-callbacks';
import { type CallbackService } from '../../control-api/twilio/callbacks';

describe('twilio: IncomingPhoneNumbers', function () {
  this.timeout(90_000);
  let p: Platform;
  let t: TestApp;
  let f: Fixture;
  let sid: string;
  let token: string;
  let client: TwilioClient;
  let receiverUrl: string;
  let callbacks: CallbackService;
  const received = useTwilioCallbackStack('twilio-num-test', (s) => ({ p, t, f, sid, token, client, receiverUrl, callbacks } = s));

  it('lists and fetches our numbers; VoiceUrl makes a managed twiml flow; bad updates change nothing', async () => {
    const number = `+8991000009${String(Date.now()).slice(-2)}`;
    const row = await numbersRepo(t.ctx.db).create({ customer_id: f.customer.id, number, type: 'virtual' });
    const listed = await client.incomingPhoneNumbers.list();
    expect(listed.map((n) => n.phoneNumber)).to.deep.equal([number]);
    const pn = listed[0]!.sid;
    expect(pn).to.equal(`PN${row.id.replace(/-/g, '')}`);
    expect((await client.incomingPhoneNumbers.list({ phoneNumber: number.slice(-6) })).length).to.equal(1);
    expect((await client.incomingPhoneNumbers.list({ phoneNumber: '+1999' })).length).to.equal(0);

    const voiceUrl = `${receiverUrl}/voice?n=1`;
    const u = await client.incomingPhoneNumbers(pn).update({ voiceUrl, voiceMethod: 'GET', statusCallback: `${receiverUrl}/status`, friendlyName: 'Front desk' });
    expect(u).to.include({ voiceUrl, voiceMethod: 'GET', statusCallback: `${receiverUrl}/status`, friendlyName: 'Front desk', phoneNumber: number });
    const n1 = (await numbersRepo(t.ctx.db).getOwned(f.customer.id, row.id))!;
    const flow = (await flowsRepo(t.ctx.db).getOwned(f.customer.id, n1.call_flow_id))!;
    expect(flow.actions.map((a) => [a.type, a.option])).to.deep.equal([['twiml', { url: voiceUrl, method: 'GET' }]]);

    // bad values: Twilio's codes, the number as it was
    for (const [form, code] of [
      [{ VoiceUrl: 'ftp://example.com/x' }, 21502],
      [{ VoiceUrl: 'http://[::1]/x' }, 21502],
      [{ StatusCallback: 'not a url' }, 21609],
      [{ VoiceMethod: 'PUT' }, 20001],
    ] as const) {
      const res = await request(t.app).post(`/2010-04-01/Accounts/${sid}/IncomingPhoneNumbers/${pn}.json`).auth(sid, token).type('form').send(form);
      expect([res.status, res.body.code], JSON.stringify(form)).to.deep.equal([400, code]);
    }
    expect(await client.incomingPhoneNumbers(pn).fetch()).to.include({ voiceUrl, voiceMethod: 'GET' });
    const e = await restRefusal(client.incomingPhoneNumbers(`PN${'0'.repeat(32)}`).fetch());
    expect([e.status, e.code]).to.deep.equal([404, 20404]);
    const made = await request(t.app).post(`/2010-04-01/Accounts/${sid}/IncomingPhoneNumbers.json`).auth(sid, token).type('form').send({ PhoneNumber: '+15550100000' });
    expect([made.status, made.body.code]).to.deep.equal([405, 20004]);

    // a real inbound call runs the managed flow, and the number's StatusCallback hears it end
    await trunksRepo(t.ctx.db).create(f.customer.id, `tw${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const sink = await RtpSink.open();
    try {
      await sipp(
        uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, 'pbx', sink.port, { byeTimeoutMs: 15_000 }),
        [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mp', String(await sippMediaPort())],
        {
          killAfterMs: 30_000,
        },
      ).done;
    } finally {
      sink.close();
    }
    const call = await until(
      async () => (await t.ctx.db('calls').where({ customer_id: f.customer.id, direction: 'incoming' }).first()) as { id: string; flow_id: string } | undefined,
      10_000,
      'inbound call',
    );
    expect(call.flow_id).to.equal(flow.id);
    await until(() => received.some((r) => r.url.endsWith('/status')), 15_000, 'number status callback');
    await callbacks.idle();
    const cb = received.filter((r) => r.url.endsWith('/status'));
    expect(cb).to.have.length(1);
    expect(cb[0]!.params).to.include({ CallSid: `CA${call.id.replace(/-/g, '')}`, AccountSid: sid, Direction: 'inbound', To: number, CallbackSource: 'call-progress-events' });
    expect(twilio.validateRequest(token, cb[0]!.signature, cb[0]!.url, cb[0]!.params)).to.equal(true);

    // clearing VoiceUrl unlinks the number and removes the managed flow
    const cleared = await client.incomingPhoneNumbers(pn).update({ voiceUrl: '' });
    expect(cleared.voiceUrl).to.equal(null);
    expect((await numbersRepo(t.ctx.db).getOwned(f.customer.id, row.id))!.call_flow_id).to.equal(EMPTY_UUID);
    expect(await flowsRepo(t.ctx.db).getOwned(f.customer.id, flow.id)).to.equal(null);
  });
});
