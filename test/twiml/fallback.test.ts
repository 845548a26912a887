// Issue 54 item 8: fallback URLs. When the primary document of a call cannot be fetched (HTTP error,
// unreachable) or run (does not parse, invalid TwiML), Twilio requests the fallback URL with the same
// parameters plus ErrorCode and ErrorUrl and runs its TwiML instead of the application-error message.
// The `twiml` action's fallback_url, a number's VoiceFallbackUrl (official `twilio` client, a real
// inbound sipp call) and Calls.json's FallbackUrl (a real outbound call to a sipp UAS); every request
// is checked with twilio.validateRequest.
import { expect } from 'chai';
import request from 'supertest';
import twilio from 'twilio';
import { testDb } from '../../testkit/db';
import { answeringUas, sipp, uacWaitsForBye, until } from '../../testkit/media-app/harness';
import { freePort, sipPortPair, udpBound } from '../../testkit/ports';
import { placeCall } from '../../testkit/streams/support';
import { useTwilioRestStack, type TwilioRestStack } from '../../testkit/twiml/stack';
import { numbersRepo } from '../../core/repos/numbers';
import { flowsRepo } from '../../core/repos/flows';
import { accountSid, callSid, fromSid } from '../../core/twilio/sids';
import { twilioAuthToken } from '../../core/twilio/auth-token';

const { VoiceResponse } = twilio.twiml;

async function endedActiveflow(callId: string) {
  const db = await testDb();
  return until(
    async () => {
      const c = await db('calls').where({ id: callId }).first();
      const a = c && (await db('activeflows').where({ id: c.activeflow_id }).first());
      return a?.status === 'ended' ? (a as { error: string; end_reason: string; executed_actions: { type: string; option: Record<string, unknown> }[] }) : null;
    },
    20_000,
    'activeflow ended',
  );
}

const types = (af: { executed_actions: { type: string }[] }) => af.executed_actions.map((a) => a.type);

function spoken(text: string): string {
  const r = new VoiceResponse();
  r.say(text);
  r.hangup();
  return r.toString();
}

describe('TwiML fallback URLs (sipp callers, TwiML app on loopback, signed requests)', function () {
  this.timeout(90_000);
  let s: TwilioRestStack;

  useTwilioRestStack((x) => (s = x));

  for (const [name, answer, code, fallbackMethod] of [
    ['an HTTP 500', { status: 500, body: 'boom' }, 11200, 'POST'],
    ['an unreachable URL', null, 11200, 'GET'],
    ['XML that does not parse', '<Response><Say>unclosed</Response>', 12100, 'POST'],
    ['an unknown verb', '<Response><Dance/></Response>', 12200, 'POST'],
  ] as const) {
    it(`${name}: the fallback (${fallbackMethod}) gets the call's parameters plus ErrorCode=${code} and ErrorUrl, and its TwiML runs`, async () => {
      const path = `/primary-${code}-${fallbackMethod}`;
      const primary = answer === null ? `http://127.0.0.1:${await freePort()}/gone` : s.app.url(path);
      if (answer !== null) s.app.on(path, answer);
      const fb = `/fallback-${code}-${fallbackMethod}`;
      s.app.on(fb, spoken('The fallback speaks'));
      const call = await placeCall(s.stack, s.f.customer.id, [
        { type: 'twiml', option: { url: primary, fallback_url: s.app.url(fb), fallback_method: fallbackMethod } },
        { type: 'talk', option: { text: 'must not run' } },
      ]);
      s.placed.push(call);
      const req = await s.app.next(fb);
      expect(req.method).to.equal(fallbackMethod);
      expect(req.signed, 'the fallback request is signed').to.equal(true);
      expect(req.params).to.include({ ErrorCode: String(code), ErrorUrl: primary, CallSid: callSid(call.callId), AccountSid: accountSid(s.f.customer.id), Direction: 'inbound' });
      expect(req.params.CallStatus).to.be.a('string');
      if (answer !== null) {
        const first = s.app.requests.find((r) => r.path === path)!;
        const { ErrorCode: _c, ErrorUrl: _u, ...rest } = req.params;
        expect(rest, 'the same parameters as the primary request').to.deep.equal(first.params);
      }
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      const af = await endedActiveflow(call.callId);
      expect(af.error, 'no application error').to.equal('');
      expect(types(af)).to.deep.equal(['twiml', 'talk', 'hangup']);
      expect(af.executed_actions[1]!.option.text).to.equal('The fallback speaks');
    });
  }

  it('a fallback that fails too: the application error with the fallback’s code, the call hung up', async () => {
    s.app.on('/p-fails', { status: 503, body: 'down' });
    s.app.on('/fb-fails', '<Response><Nope/></Response>');
    const call = await placeCall(s.stack, s.f.customer.id, [{ type: 'twiml', option: { url: s.app.url('/p-fails'), fallback_url: s.app.url('/fb-fails') } }]);
    s.placed.push(call);
    const req = await s.app.next('/fb-fails');
    expect(req.params).to.include({ ErrorCode: '11200', ErrorUrl: s.app.url('/p-fails') });
    const r = await call.sipp;
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(call.peer.voiced(), 'the error is spoken').to.be.greaterThan(10);
    const af = await endedActiveflow(call.callId);
    expect(af.end_reason).to.equal('error');
    expect(af.error).to.match(/^twiml error 12200: /);
    expect(types(af)).to.deep.equal(['twiml']);
  });

  it('a primary that works never calls the fallback; a Redirect (or action) document that fails does not use it', async () => {
    const doc = new VoiceResponse();
    doc.redirect('/r-broken');
    s.app.on('/r-first', doc.toString());
    s.app.on('/r-broken', { status: 500, body: 'x' });
    s.app.on('/r-fallback', spoken('never'));
    const call = await placeCall(s.stack, s.f.customer.id, [{ type: 'twiml', option: { url: s.app.url('/r-first'), fallback_url: s.app.url('/r-fallback') } }]);
    s.placed.push(call);
    await s.app.next('/r-broken');
    const r = await call.sipp;
    expect(r.code, r.errors + r.messages).to.equal(0);
    const af = await endedActiveflow(call.callId);
    expect(af.error).to.match(/^twiml error 11200: /);
    expect(s.app.requests.some((x) => x.path === '/r-fallback')).to.equal(false);
  });

  it('the twiml action refuses a fallback_url without url or that is not http(s)', async () => {
    for (const option of [
      { twiml: '<Response/>', fallback_url: s.app.url('/x') },
      { url: s.app.url('/x'), fallback_url: 'ftp://example.com/x' },
      { url: s.app.url('/x'), fallback_url: s.app.url('/y'), fallback_method: 'PUT' },
    ]) {
      const res = await request(s.stack.api.app)
        .post('/v1.0/calls')
        .query({ accesskey: s.f.accesskey })
        .send({ source: { type: 'tel', target: '+15550009999' }, destinations: [{ type: 'sip', target: 'sip:nobody@127.0.0.1:9' }], actions: [{ type: 'twiml', option }] });
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(JSON.stringify(res.body.error)).to.include('fallback_');
    }
  });

  it('IncomingPhoneNumbers VoiceFallbackUrl: stored, shown, in the managed flow, and used by a real inbound call', async () => {
    const db = await testDb();
    const number = `+8995${String(process.pid % 1000).padStart(3, '0')}000${String(Date.now()).slice(-3)}`;
    const row = await numbersRepo(db).create({ customer_id: s.f.customer.id, number, type: 'virtual' });
    const pn = `PN${row.id.replace(/-/g, '')}`;
    const sid = accountSid(s.f.customer.id);
    const token = twilioAuthToken(s.stack.api.ctx.config.jwtSecret, s.f.customer.id, 0);
    // without a VoiceUrl: Twilio's 21405
    const refused = await request(s.stack.api.app)
      .post(`/2010-04-01/Accounts/${sid}/IncomingPhoneNumbers/${pn}.json`)
      .auth(sid, token)
      .type('form')
      .send({ VoiceFallbackUrl: s.app.url('/n-fb') });
    expect([refused.status, refused.body.code]).to.deep.equal([400, 21405]);
    const u = await s.client.incomingPhoneNumbers(pn).update({ voiceUrl: s.app.url('/n-primary'), voiceFallbackUrl: s.app.url('/n-fb'), voiceFallbackMethod: 'GET' });
    expect(u).to.include({ voiceUrl: s.app.url('/n-primary'), voiceFallbackUrl: s.app.url('/n-fb'), voiceFallbackMethod: 'GET' });
    expect(await s.client.incomingPhoneNumbers(pn).fetch()).to.include({ voiceFallbackUrl: s.app.url('/n-fb'), voiceFallbackMethod: 'GET' });
    for (const [form, code] of [
      [{ VoiceFallbackUrl: 'ftp://example.com/x' }, 21502],
      [{ VoiceFallbackUrl: 'http://169.254.169.254/x' }, 21502],
      [{ VoiceFallbackMethod: 'PUT' }, 20001],
    ] as const) {
      const res = await request(s.stack.api.app).post(`/2010-04-01/Accounts/${sid}/IncomingPhoneNumbers/${pn}.json`).auth(sid, token).type('form').send(form);
      expect([res.status, res.body.code], JSON.stringify(form)).to.deep.equal([400, code]);
    }
    const n = (await numbersRepo(db).getOwned(s.f.customer.id, row.id))!;
    const flow = (await flowsRepo(db).getOwned(s.f.customer.id, n.call_flow_id))!;
    expect(flow.actions.map((a) => a.option)).to.deep.equal([{ url: s.app.url('/n-primary'), method: 'POST', fallback_url: s.app.url('/n-fb'), fallback_method: 'GET' }]);

    s.app.on('/n-primary', { status: 500, body: 'down' });
    s.app.on('/n-fb', spoken('Number fallback'));
    const sipPort = s.stack.platform.sipPort;
    const r = await sipp(uacWaitsForBye(`${number}@127.0.0.1:${sipPort}`, '+15551230000', 9), [`127.0.0.1:${sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 30_000 }).done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    const fb = await s.app.next('/n-fb');
    expect(fb.method).to.equal('GET');
    expect(fb.signed).to.equal(true);
    expect(fb.params).to.include({ ErrorCode: '11200', ErrorUrl: s.app.url('/n-primary'), To: number, Direction: 'inbound' });
    const af = await endedActiveflow(fromSid('CA', fb.params.CallSid!)!);
    expect(af.error).to.equal('');
    expect(types(af)).to.deep.equal(['twiml', 'talk', 'hangup']);

    // clearing the fallback takes it out of the flow
    const cleared = await s.client.incomingPhoneNumbers(pn).update({ voiceFallbackUrl: '' });
    expect(cleared.voiceFallbackUrl).to.equal(null);
    const flow2 = (await flowsRepo(db).getOwned(s.f.customer.id, n.call_flow_id))!;
    expect(flow2.actions.map((a) => a.option)).to.deep.equal([{ url: s.app.url('/n-primary'), method: 'POST' }]);
  });

  it('a Calls update (redirect) with Url and FallbackUrl runs the fallback when Url fails', async () => {
    const hold = new VoiceResponse();
    hold.pause({ length: 30 });
    s.app.on('/u-hold', hold.toString());
    s.app.on('/u-primary', { status: 404, body: 'nope' });
    s.app.on('/u-fb', spoken('Update fallback'));
    const call = await placeCall(s.stack, s.f.customer.id, [{ type: 'answer' }, { type: 'twiml', option: { url: s.app.url('/u-hold') } }]);
    s.placed.push(call);
    await s.app.next('/u-hold');
    await s.client.calls(callSid(call.callId)).update({ url: s.app.url('/u-primary'), fallbackUrl: s.app.url('/u-fb'), fallbackMethod: 'GET' });
    const fb = await s.app.next('/u-fb');
    expect(fb.method).to.equal('GET');
    expect(fb.signed).to.equal(true);
    expect(fb.params).to.include({ ErrorCode: '11200', ErrorUrl: s.app.url('/u-primary'), CallSid: callSid(call.callId) });
    const r = await call.sipp;
    expect(r.code, r.errors + r.messages).to.equal(0);
    const af = await endedActiveflow(call.callId);
    expect(af.error).to.equal('');
    expect(types(af).slice(-3)).to.deep.equal(['twiml', 'talk', 'hangup']);
  });

  it('Calls.json FallbackUrl: the answered outbound call runs the fallback when Url fails', async () => {
    const sid = accountSid(s.f.customer.id);
    const token = twilioAuthToken(s.stack.api.ctx.config.jwtSecret, s.f.customer.id, 0);
    const base = { To: 'sip:nobody@127.0.0.1:9', From: '+15550009999' };
    for (const form of [
      { ...base, Twiml: '<Response/>', FallbackUrl: s.app.url('/c-fb') },
      { ...base, Url: s.app.url('/c-primary'), FallbackUrl: 'not a url' },
      { ...base, Url: s.app.url('/c-primary'), FallbackUrl: 'http://169.254.169.254/x' },
    ]) {
      const res = await request(s.stack.api.app).post(`/2010-04-01/Accounts/${sid}/Calls.json`).auth(sid, token).type('form').send(form);
      expect([res.status, res.body.code], JSON.stringify(form)).to.deep.equal([400, 21205]);
    }
    const calleePort = await sipPortPair();
    const callee = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(calleePort), '-m', '1'], { killAfterMs: 40_000 });
    await udpBound(calleePort);
    s.app.on('/c-primary', '<Response><Say>unclosed</Response>');
    s.app.on('/c-fb', spoken('Outbound fallback'));
    const to = `sip:callee@127.0.0.1:${calleePort}`;
    const c = await s.client.calls.create({ to, from: '+15550009999', url: s.app.url('/c-primary'), fallbackUrl: s.app.url('/c-fb') });
    const fb = await s.app.next('/c-fb');
    expect(fb.method).to.equal('POST');
    expect(fb.signed).to.equal(true);
    expect(fb.params).to.include({ ErrorCode: '12100', ErrorUrl: s.app.url('/c-primary'), CallSid: c.sid, Direction: 'outbound-api', To: to });
    const rc = await callee.done;
    expect(rc.code, rc.errors + rc.messages).to.equal(0);
    const af = await endedActiveflow(fromSid('CA', c.sid)!);
    expect(af.error).to.equal('');
    expect(types(af)).to.deep.equal(['twiml', 'talk', 'hangup']);
  });
});
