// Long calls of TwiML <Dial> (issue 52): a trunk caller's number runs a document whose <Dial> (timeout
// 5 s, the verb's own ring timer) reaches a <Sip> URI, a <Client> (a registered extension) or a
// <Number> (a US number, out through the customer's route to a carrier: a sipp party on loopback).
// With CALL_DIAL_TIMEOUT_MS at 1.5 s and the credit guard checking every 0.5 s (the PSTN leg's own
// timer), the answered call is held past three times the longest timer (rows progressing, RTP both
// ways, no BYE), then the callee hangs up and the records say so.
import { expect } from 'chai';
import twilio from 'twilio';
import type { Fixture } from '../../testkit/api';
import { RtpParty } from '../../testkit/conference/party';
import { createExtension, registerOnly, sipp, until, type SippResult } from '../../testkit/media-app/harness';
import { freePort, sipPortPair } from '../../testkit/ports';
import { placeCall, type Stack } from '../../testkit/streams/support';
import type { TwimlServer } from '../../testkit/twiml/server';
import { useTwimlStack } from '../../testkit/twiml/stack';
import { callUp, callWithStatus, hangupOf, legOf } from '../../testkit/long-calls/calls';
import { holdFor } from '../../testkit/long-calls/hold';
import { answerer } from '../../testkit/long-calls/parties';
import { DIAL_TIMEOUT_MS, holdPast, LONG_CALL_ENV } from '../../testkit/long-calls/timers';
import { carrierOnLoopback } from '../../testkit/long-calls/carrier';
import { testDb } from '../../testkit/db';

const { VoiceResponse } = twilio.twiml;
/** The verb's own ring timer: 5 s is the least <Dial timeout> takes (5 to 600, as Twilio). */
const DIAL_VERB_TIMEOUT_S = 5;
const HOLD_MS = holdPast(Math.max(DIAL_TIMEOUT_MS, DIAL_VERB_TIMEOUT_S * 1000));
const CHECKS_MS = 2500;
/** CREDIT_GUARD_INTERVAL_MS: the guard reads every answered PSTN call's cost against the balance this often. */
const CREDIT_GUARD_MS = 500;

describe('long calls: TwiML <Dial> to <Sip>, <Client> and <Number>', function () {
  this.timeout(80_000);
  let stack: Stack;
  let app: TwimlServer;
  let f: Fixture;
  const open: { close(): void }[] = [];

  useTwimlStack(
    (s) => ({ stack, app, f } = s),
    () => ({ ...LONG_CALL_ENV, CREDIT_GUARD_INTERVAL_MS: String(CREDIT_GUARD_MS) }),
  );
  after(() => open.forEach((o) => o.close()));

  const ok = (r: SippResult, who: string) => expect(r.code, `${who}: ${r.errors}${r.messages.slice(-2000)}`).to.equal(0);

  /** The caller's number runs a <Dial> of `noun`; the callee (answering `callee`, its audio `audio`) is held, then hangs up. */
  async function heldDial(path: string, noun: (d: ReturnType<InstanceType<typeof VoiceResponse>['dial']>) => void, audio: RtpParty, callee: { done: Promise<SippResult> }) {
    const doc = new VoiceResponse();
    noun(doc.dial({ timeout: DIAL_VERB_TIMEOUT_S }));
    app.on(path, doc.toString());
    const call = await placeCall(stack, f.customer.id, [{ type: 'answer' }, { type: 'twiml', option: { url: app.url(path) } }], { killAfterMs: 60_000 });
    open.push(call.peer);
    const db = await testDb();
    const leg = await legOf(db, call.callId, 'progressing', 'the callee answered');
    await callUp(db, call.callId, 'the caller up');
    await holdFor(HOLD_MS, {
      db,
      calls: [call.callId, leg.id],
      parties: [
        { name: 'the caller', done: call.sipp },
        { name: 'the callee', done: callee.done },
      ],
    });
    const voiced = call.peer.voiced();
    await until(() => call.peer.voiced() - voiced > 25, 10_000, 'the caller hears the callee after the hold');
    await until(() => audio.framesBetween(Date.now() - 600) > 10, 10_000, 'the callee gets RTP after the hold');
    ok(await callee.done, 'the callee');
    expect(hangupOf(await callWithStatus(db, leg.id, 'hangup', 'the callee’s leg ended'))).to.deep.equal({ hangup_by: 'remote', hangup_reason: 'normal' });
    return { call, db };
  }

  it('<Dial><Sip>: the callee rings past half the dial timeout, answers, is held past 3× the timers and hangs up', async () => {
    const audio = await RtpParty.open(1200);
    open.push(audio);
    const port = await sipPortPair();
    const callee = sipp(
      answerer({ rtpPort: audio.port, ringMs: Math.round(DIAL_TIMEOUT_MS * 0.7), hangupAfterMs: HOLD_MS + CHECKS_MS }),
      ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-timeout', '60s'],
      {
        killAfterMs: 60_000,
      },
    );
    await heldDial('/long-sip', (d) => d.sip(`sip:long@127.0.0.1:${port}`), audio, callee);
  });

  it('<Dial><Client>: a registered extension answers, is held past 3× the timers and hangs up', async () => {
    const audio = await RtpParty.open(1300);
    open.push(audio);
    const e = await createExtension(f.customer.id);
    const port = await freePort();
    const reg = await sipp(registerOnly(e.ext.username, e.domain), [`127.0.0.1:${stack.platform.sipPort}`, '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-au', e.ext.username, '-ap', e.password])
      .done;
    ok(reg, 'REGISTER');
    const callee = sipp(answerer({ rtpPort: audio.port, user: e.ext.username, hangupAfterMs: HOLD_MS + CHECKS_MS }), ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-timeout', '60s'], {
      killAfterMs: 60_000,
    });
    await heldDial('/long-client', (d) => d.client(e.ext.extension), audio, callee);
  });

  it('<Dial><Number>: the carrier rings past half the dial timeout, answers, is held past 3× the timers and hangs up', async () => {
    const audio = await RtpParty.open(1400);
    open.push(audio);
    const port = await sipPortPair();
    const { callerId } = await carrierOnLoopback(await testDb(), f.customer.id, port);
    const carrier = sipp(
      answerer({ rtpPort: audio.port, ringMs: Math.round(DIAL_TIMEOUT_MS * 0.7), hangupAfterMs: HOLD_MS + CHECKS_MS }),
      ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-timeout', '60s'],
      { killAfterMs: 60_000 },
    );
    const { call, db } = await heldDial('/long-number', (d) => d.number('+15557654321'), audio, carrier);
    // it went out as a PSTN call: to the number, from the owned caller id, through the carrier
    const r = await carrier.done;
    expect(r.messages).to.include(`INVITE sip:+15557654321@127.0.0.1:${port} SIP/2.0`);
    const leg = await legOf(db, call.callId, 'hangup', 'the carrier’s leg');
    expect(leg.destination).to.deep.include({ type: 'tel', target: '+15557654321' });
    expect(leg.source).to.deep.include({ type: 'tel', target: callerId });
    expect(leg.data, 'the credit guard did not end it').to.not.have.property('balance_exhausted');
  });
});
