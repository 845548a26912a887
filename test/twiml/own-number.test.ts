// Issue 54, items 5 and 7: a Twilio app on a number another call of the platform reaches (`<Dial><Number>`
// to the account's own number, a REST call to it). As on Twilio for a call to another Twilio number:
// the number's call rings while its TwiML has not answered (its first request says CallStatus=ringing),
// it is answered when its TwiML first needs the call up, and the caller's leg only then; `<Reject
// reason="busy"/>` is busy to the caller (DialCallStatus, status callbacks), `<Reject/>` (reason
// rejected) no-answer, as Twilio's <Reject> page says. And a SIP caller refused by `<Reject>` reads the
// same statuses. The numbers get their VoiceUrl through the official `twilio` client, every request
// is checked with twilio.validateRequest (testkit/twiml/server.ts).
import { expect } from 'chai';
import twilio from 'twilio';
import { startTwilioCallbacks, type CallbackService } from '../../control-api/twilio/callbacks';
import { numbersRepo } from '../../core/repos/numbers';
import type { CallRow } from '../../core/repos/calls';
import { callSid, fromSid } from '../../core/twilio/sids';
import { testDb } from '../../testkit/db';
import { sipp, uacWaitsForBye, until } from '../../testkit/media-app/harness';
import type { PlacedCall, Stack } from '../../testkit/streams/support';
import type { TwimlServer } from '../../testkit/twiml/server';
import { useTwilioRestStack } from '../../testkit/twiml/stack';
import type { TwilioClient } from '../../testkit/twilio';
import type { Fixture } from '../../testkit/api';
import { callParams } from '../../media-app/twiml/params';
import { EMPTY_UUID } from '../../core/ids';

const { VoiceResponse } = twilio.twiml;

let numberSeq = 0;

describe('TwiML on a number another call of the platform dials (Dial Number, REST), and Reject', function () {
  this.timeout(90_000);
  let stack: Stack;
  let app: TwimlServer;
  let f: Fixture;
  let client: TwilioClient;
  let caller: (path: string) => Promise<PlacedCall>;
  let callbacks: CallbackService;

  useTwilioRestStack((s) => ({ stack, app, f, client, caller } = s));
  before(async () => {
    callbacks = await startTwilioCallbacks(stack.api.ctx, { group: `twilio-own-number-${process.pid}`, baseDelayMs: 100 });
  });
  after(() => callbacks?.close());

  /** A number of the account whose VoiceUrl (set with the official client) answers `twiml`; `statusCallback`: the number's. */
  async function ownNumber(path: string, twiml: string, statusCallback?: string): Promise<string> {
    const number = `+8994${String(process.pid % 1000).padStart(3, '0')}${String(++numberSeq).padStart(5, '0')}`;
    const row = await numbersRepo(await testDb()).create({ customer_id: f.customer.id, number, type: 'virtual' });
    await client.incomingPhoneNumbers(`PN${row.id.replace(/-/g, '')}`).update({ voiceUrl: app.url(path), ...(statusCallback ? { statusCallback } : {}) });
    app.on(path, twiml);
    return number;
  }

  /** The number's leg (the incoming call to it), once it has hung up. */
  async function numberLeg(number: string): Promise<CallRow> {
    const db = await testDb();
    return until(
      async () =>
        ((await db('calls').where({ customer_id: f.customer.id, direction: 'incoming', status: 'hangup' }).whereRaw(`destination->>'target' = ?`, [number]).first()) as CallRow | undefined) ?? null,
      20_000,
      `the leg of ${number} hung up`,
    );
  }

  async function hungUp(callId: string): Promise<CallRow> {
    const db = await testDb();
    return until(async () => ((await db('calls').where({ id: callId, status: 'hangup' }).first()) as CallRow | undefined) ?? null, 20_000, 'hung up');
  }

  const ms = (a: Date | null, b: Date | null) => new Date(a!).getTime() - new Date(b!).getTime();

  /** A document that dials `number` with an action at `${path}-done`, which hangs up. */
  function dialDocument(path: string, number: string): void {
    const doc = new VoiceResponse();
    doc.dial({ action: `${path}-done`, timeout: 20 }).number(number);
    app.on(path, doc.toString());
    const done = new VoiceResponse();
    done.hangup();
    app.on(`${path}-done`, done.toString());
  }

  it('<Dial><Number> to an own number: it rings (CallStatus=ringing) until its TwiML answers, the caller’s leg too; then bridged', async () => {
    const answer = new VoiceResponse();
    answer.pause({ length: 2 });
    answer.say('Hello from the other number of this account');
    answer.hangup();
    const number = await ownNumber('/n1', answer.toString());
    dialDocument('/d1', number);
    const call = await caller('/d1');
    const first = await app.next('/n1');
    expect(first.signed, 'signature').to.equal(true);
    expect(first.params).to.include({ CallStatus: 'ringing', Direction: 'inbound', To: number });
    const heardBefore = call.peer.voiced();
    const done = await app.next('/d1-done', 30_000);
    expect(done.signed).to.equal(true);
    expect(done.params.DialCallStatus).to.equal('completed');
    expect(call.peer.voiced(), 'the caller heard the number’s Say through the bridge').to.be.greaterThan(heardBefore + 10);
    const callee = await numberLeg(number);
    const leg = await hungUp(fromSid('CA', done.params.DialCallSid!)!);
    expect(leg.master_call_id).to.equal(call.callId);
    // the Pause ran unanswered: both legs rang through it and were answered after it
    expect(ms(callee.tm_progressing, callee.tm_ringing), 'the number’s leg rang through the Pause').to.be.at.least(1500);
    expect(ms(leg.tm_progressing, callee.tm_ringing), 'the caller’s leg answered only with the number’s').to.be.at.least(1500);
    expect(ms(leg.tm_progressing, leg.tm_ringing)).to.be.at.least(1500);
    expect(await call.sipp).to.include({ code: 0 });
  });

  for (const [reason, status] of [
    ['busy', 'busy'],
    ['rejected', 'no-answer'],
  ] as const) {
    it(`<Dial><Number> to an own number whose TwiML is <Reject reason="${reason}"/>: DialCallStatus=${status}, both legs read ${status}`, async () => {
      const doc = new VoiceResponse();
      doc.reject({ reason });
      const number = await ownNumber(`/n-${reason}`, doc.toString());
      dialDocument(`/d-${reason}`, number);
      const call = await caller(`/d-${reason}`);
      expect((await app.next(`/n-${reason}`)).params.CallStatus).to.equal('ringing');
      const done = await app.next(`/d-${reason}-done`, 30_000);
      expect(done.signed).to.equal(true);
      expect(done.params.DialCallStatus).to.equal(status);
      const callee = await numberLeg(number);
      expect(callee.tm_progressing, 'never answered').to.equal(null);
      expect((await client.calls(callSid(callee.id)).fetch()).status).to.equal(status);
      expect((await client.calls(done.params.DialCallSid!).fetch()).status).to.equal(status);
      expect(await call.sipp).to.include({ code: 0 });
    });
  }

  it('a REST call to an own number: answered when the number’s TwiML answers, then its Url runs; status callbacks in order', async () => {
    const answer = new VoiceResponse();
    answer.pause({ length: 2 });
    answer.say('Hello');
    answer.hangup();
    const number = await ownNumber('/n-rest', answer.toString());
    const voice = new VoiceResponse();
    voice.pause({ length: 1 });
    voice.hangup();
    app.on('/rest-voice', voice.toString());
    app.on('/rest-status', '<Response/>');
    const created = await client.calls.create({
      to: number,
      from: '+15550100000',
      url: app.url('/rest-voice'),
      statusCallback: app.url('/rest-status'),
      statusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
    });
    const fetched = await app.next('/rest-voice', 30_000);
    expect(fetched.params).to.include({ CallSid: created.sid, CallStatus: 'in-progress', Direction: 'outbound-api' });
    const rest = await hungUp(fromSid('CA', created.sid)!);
    const callee = await numberLeg(number);
    expect(ms(callee.tm_progressing, callee.tm_ringing), 'the number’s leg rang through the Pause').to.be.at.least(1500);
    expect(ms(rest.tm_progressing, callee.tm_ringing), 'the REST call answered only with the number’s leg').to.be.at.least(1500);
    const statuses = await app.atLeast('/rest-status', 4);
    expect(statuses.every((r) => r.signed)).to.equal(true);
    expect(statuses.map((r) => r.params.CallStatus)).to.deep.equal(['initiated', 'ringing', 'in-progress', 'completed']);
  });

  it('a REST call to an own number whose TwiML is <Reject reason="busy"/>: completed callback CallStatus=busy, its Url never fetched', async () => {
    const doc = new VoiceResponse();
    doc.reject({ reason: 'busy' });
    const number = await ownNumber('/n-rest-busy', doc.toString());
    app.on('/rest-busy-status', '<Response/>');
    const created = await client.calls.create({ to: number, from: '+15550100000', url: app.url('/never'), statusCallback: app.url('/rest-busy-status') });
    const [completed] = await app.atLeast('/rest-busy-status', 1);
    expect(completed!.signed).to.equal(true);
    expect(completed!.params).to.include({ CallSid: created.sid, CallStatus: 'busy' });
    expect((await client.calls(created.sid).fetch()).status).to.equal('busy');
    expect(app.requests.some((r) => r.path === '/never')).to.equal(false);
  });

  for (const [reason, sipStatus, status] of [
    ['busy', 486, 'busy'],
    ['rejected', 603, 'no-answer'],
  ] as const) {
    it(`a SIP caller refused by <Reject reason="${reason}"/>: ${sipStatus}, the call and the number’s status callback read ${status}`, async () => {
      const doc = new VoiceResponse();
      doc.reject({ reason });
      app.on(`/sip-${reason}-status`, '<Response/>');
      const number = await ownNumber(`/sip-${reason}`, doc.toString(), app.url(`/sip-${reason}-status`));
      const sipPort = stack.platform.sipPort;
      // the platform rings (180) before the TwiML refuses
      const scenario = uacWaitsForBye(`${number}@127.0.0.1:${sipPort}`, '+15551230000', 9, { expectStatus: sipStatus }).replace(
        '<recv response="100" optional="true"/>',
        '<recv response="100" optional="true"/>\n<recv response="180" optional="true"/>',
      );
      const r = await sipp(scenario, [`127.0.0.1:${sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 30_000 }).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
      const first = await app.next(`/sip-${reason}`);
      expect(first.params.CallStatus).to.equal('ringing');
      const [completed] = await app.atLeast(`/sip-${reason}-status`, 1);
      expect(completed!.signed).to.equal(true);
      expect(completed!.params).to.include({ CallSid: first.params.CallSid, CallStatus: status });
      expect((await client.calls(first.params.CallSid!).fetch()).status).to.equal(status);
    });
  }
});

describe('TwiML request parameters: the CallStatus of a call not answered yet', () => {
  const info = { id: '0b6f2c1e-3d4a-4b5c-8d9e-0f1a2b3c4d5e', master_call_id: EMPTY_UUID, source: { type: 'tel', target: '+15551230000' }, destination: { type: 'tel', target: '+899100000001' } };

  it('an inbound call is `ringing` before its answer, even before the row says so (its 180 has gone); never `queued`', () => {
    expect(callParams(EMPTY_UUID, { ...info, direction: 'incoming', status: 'dialing' }).CallStatus).to.equal('ringing');
    expect(callParams(EMPTY_UUID, { ...info, direction: 'incoming', status: 'ringing' }).CallStatus).to.equal('ringing');
    expect(callParams(EMPTY_UUID, { ...info, direction: 'incoming', status: 'progressing' }).CallStatus).to.equal('in-progress');
    // an outgoing call not dialled yet is Twilio's queued
    expect(callParams(EMPTY_UUID, { ...info, direction: 'outgoing', status: 'dialing' }).CallStatus).to.equal('queued');
  });
});
