import { expect } from 'chai';
import request from 'supertest';
import { commandBus } from '../../control-api/calls/bus';
import twilio from 'twilio';
import { testDb } from '../../testkit/db';
import { answeringUas, sipp, sleep, uacWaitsForBye, until } from '../../testkit/media-app/harness';
import { sipPortPair, udpBound } from '../../testkit/ports';
import { placeCall, type Stack } from '../../testkit/streams/support';
import type { TwimlServer } from '../../testkit/twiml/server';
import { endedFlowOfCall } from '../../testkit/call-ends';
import { useTwimlStack } from '../../testkit/twiml/stack';
import type { Fixture } from '../../testkit/api';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { parseActions } from '../../core/flow';
import { accountSid, callSid, fromSid } from '../../core/twilio/sids';

const fromCallSid = (sid: string): string => fromSid('CA', sid)!;

const { VoiceResponse } = twilio.twiml;

async function hungUp(callId: string) {
  const db = await testDb();
  return until(async () => (await db('calls').where({ id: callId, status: 'hangup' }).first()) ?? null, 20_000, 'call hung up');
}

// The tests of media run on both media backends: 'embedded' (media-engine in media-app) and 'fsmrf'
// (media-app's calls on drachtio-fsmrf against our switch, esl/, over its event socket): Say, Gather's
// digits, Record with its beep, Dial's bridge, a live redirect that cuts a Pause short, an outbound call.
// The rest (Reject's SIP refusals, the document's errors, the egress refusal, the REST API's refusals) run
// the same code on both and run on the embedded engine only (`control`), keeping the suite's time.
for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML on real calls (sipp caller, TwiML app on loopback, signed requests; ${backend} media backend)`, function () {
    this.timeout(90_000);
    let stack: Stack;
    let app: TwimlServer;
    let f: Fixture;

    useTwimlStack((s) => ({ stack, app, f } = s), undefined, { mediaServer: backend });
    /** a test of the call's control path, not of its media: on the embedded backend only */
    const control = (title: string, fn: Mocha.AsyncFunc): void => {
      if (backend === 'embedded') it(title, fn);
    };

    it('Say is heard; Gather with DTMF posts Digits to its action, whose TwiML runs; every request signed', async () => {
      const first = new VoiceResponse();
      first.gather({ action: '/gathered', numDigits: 1, timeout: 15 }).say('Press a key now please');
      first.say('We did not get your key');
      app.on('/gather', first.toString());
      const after = new VoiceResponse();
      after.say('You pressed a key, goodbye');
      after.hangup();
      app.on('/gathered', after.toString());

      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/gather') } }], { talk: false });
      const req = await app.next('/gather');
      expect(req.signed, 'signature').to.equal(true);
      expect(req.method).to.equal('POST');
      expect(req.params).to.include({ CallSid: callSid(call.callId), AccountSid: accountSid(f.customer.id), Direction: 'inbound', ApiVersion: '2010-04-01', From: '+15551230000' });
      expect(req.params.To).to.match(/^\+8997/);
      // the prompt is heard, then a key cuts it short
      await until(() => call.peer.voiced() > 10, 15_000, 'the Say heard');
      await call.peer.digit('7', call.live.endpoint!.local.port);
      const cb = await app.next('/gathered');
      expect(cb.signed).to.equal(true);
      expect(cb.params).to.include({ Digits: '7', CallSid: callSid(call.callId) });
      const heardBefore = call.peer.voiced();
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      expect(call.peer.voiced(), 'the action TwiML spoke').to.be.greaterThan(heardBefore + 10);
      const af = await endedFlowOfCall(call.callId);
      expect(af.end_reason).to.be.oneOf(['call_hangup', 'finished']);
      expect(af.error).to.equal('');
      call.peer.close();
    });

    it('Gather with no key goes on with the next verb and never calls the action (GET document)', async () => {
      const doc = new VoiceResponse();
      doc.gather({ action: '/never', numDigits: 1, timeout: 1 });
      doc.say('No key. Goodbye');
      app.on('/nokey', doc.toString());
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/nokey?x=1'), method: 'GET' } }]);
      const req = await app.next('/nokey');
      expect(req.method).to.equal('GET');
      expect(req.signed).to.equal(true);
      expect(req.params.x).to.equal('1');
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      expect(call.peer.voiced()).to.be.greaterThan(10);
      expect(app.requests.some((x) => x.path === '/never')).to.equal(false);
      call.peer.close();
    });

    it('Redirect fetches the next document with its method; Hangup ends the call', async () => {
      const one = new VoiceResponse();
      one.redirect({ method: 'GET' }, '/two');
      one.say('never spoken');
      app.on('/one', one.toString());
      const two = new VoiceResponse();
      two.say('Second document ${svc.call.id}');
      two.hangup();
      two.say('never spoken either');
      app.on('/two', two.toString());
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/one') } }]);
      await app.next('/one');
      const r2 = await app.next('/two');
      expect(r2.method).to.equal('GET');
      expect(r2.signed).to.equal(true);
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      const af = await endedFlowOfCall(call.callId);
      const types = (af.executed_actions as { type: string; option: Record<string, unknown> }[]).map((a) => a.type);
      expect(types).to.deep.equal(['twiml', 'twiml', 'talk', 'hangup']);
      // the document's text is literal: no flow variable is substituted into it
      expect((af.executed_actions as { option: Record<string, unknown> }[])[2]!.option.text).to.equal('Second document ${svc.call.id}');
      call.peer.close();
    });

    for (const [reason, status] of [
      ['busy', 486],
      ['rejected', 603],
    ] as const) {
      control(`Reject reason=${reason} refuses the INVITE with ${status}`, async () => {
        const doc = new VoiceResponse();
        doc.reject({ reason });
        app.on(`/reject-${reason}`, doc.toString());
        const db = await testDb();
        const flow = await flowsRepo(db).create({ customer_id: f.customer.id, actions: parseActions([{ type: 'twiml', option: { url: app.url(`/reject-${reason}`) } }]) } as never);
        const number = `+8996${String(process.pid % 1000).padStart(3, '0')}0000${status}`;
        await numbersRepo(db).create({ customer_id: f.customer.id, number, type: 'virtual', call_flow_id: flow.id });
        const sipPort = stack.platform.sipPort;
        const scenario = uacWaitsForBye(`${number}@127.0.0.1:${sipPort}`, '+15551230000', 9, { expectStatus: status }).replace(
          '<recv response="100" optional="true"/>',
          '<recv response="100" optional="true"/>\n<recv response="180" optional="true"/>',
        );
        const r = await sipp(scenario, [`127.0.0.1:${sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 30_000 }).done;
        expect(r.code, r.errors + r.messages).to.equal(0);
        await app.next(`/reject-${reason}`);
      });
    }

    it('Dial to a second sipp bridges; its action gets DialCallStatus=completed', async () => {
      const calleePort = await sipPortPair();
      const callee = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(calleePort), '-m', '1'], { killAfterMs: 40_000 });
      await udpBound(calleePort); // the callee has bound its port: the INVITE waits in its socket
      const doc = new VoiceResponse();
      doc.dial({ action: '/dialed', timeout: 20 }).sip(`sip:callee@127.0.0.1:${calleePort}`);
      app.on('/dial', doc.toString());
      const done = new VoiceResponse();
      done.hangup();
      app.on('/dialed', done.toString());
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/dial') } }]);
      await app.next('/dial');
      // the bridge holds until the callee's side ends: the platform's BYE to the callee comes when the caller's call ends
      const db = await testDb();
      await until(async () => (await db('calls').where({ customer_id: f.customer.id, direction: 'outgoing', status: 'progressing' }).first()) ?? null, 20_000, 'callee answered');
      await sleep(1000);
      const leg = await db('calls').where({ customer_id: f.customer.id, direction: 'outgoing', status: 'progressing' }).first();
      await stack.platform.app.calls.get(leg!.id)!.hangup('normal');
      const cb = await app.next('/dialed');
      expect(cb.signed).to.equal(true);
      expect(cb.params.DialCallStatus).to.equal('completed');
      expect(Number(cb.params.DialCallDuration)).to.be.at.least(1);
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      const rc = await callee.done;
      expect(rc.code, rc.errors + rc.messages).to.equal(0);
      call.peer.close();
    });

    it('Record with a beep posts RecordingSid, RecordingUrl and RecordingDuration to its action once it ends', async () => {
      const doc = new VoiceResponse();
      doc.record({ action: '/recorded', maxLength: 2, playBeep: true, finishOnKey: '' });
      app.on('/record', doc.toString());
      const done = new VoiceResponse();
      done.hangup();
      app.on('/recorded', done.toString());
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/record') } }]);
      await app.next('/record');
      const cb = await app.next('/recorded');
      expect(cb.signed).to.equal(true);
      expect(cb.params.RecordingSid).to.match(/^RE[0-9a-f]{32}$/);
      expect(cb.params.RecordingUrl).to.match(/\/2010-04-01\/Accounts\/AC[0-9a-f]{32}\/Recordings\/RE[0-9a-f]{32}$/);
      expect(Number(cb.params.RecordingDuration)).to.be.within(1, 3);
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      // the beep (250 ms of 1 kHz: 12 packets) was played to the caller: nothing else is heard on this call
      expect(call.peer.voiced(), 'the beep heard').to.be.within(8, 20);
      const rec = await (await testDb())('recordings').where({ reference_id: call.callId }).first();
      expect(cb.params.RecordingSid).to.equal('RE' + String(rec!.id).replace(/-/g, ''));
      call.peer.close();
    });

    for (const [name, answer, code] of [
      ['XML that does not parse', '<Response><Say>unclosed</Response>', 12100],
      ['an unknown verb', '<Response><Dance/></Response>', 12200],
      ['an HTTP 500', { status: 500, body: 'boom' }, 11200],
    ] as const) {
      control(`${name}: the caller hears the application error, the call hangs up, the activeflow carries ${code}`, async () => {
        const path = `/bad-${code}`;
        app.on(path, answer);
        const call = await placeCall(stack, f.customer.id, [
          { type: 'twiml', option: { url: app.url(path) } },
          { type: 'talk', option: { text: 'must not run' } },
        ]);
        const r = await call.sipp;
        expect(r.code, r.errors + r.messages).to.equal(0);
        expect(call.peer.voiced(), 'the error is spoken').to.be.greaterThan(10);
        const af = await endedFlowOfCall(call.callId);
        expect(af.end_reason).to.equal('error');
        expect(af.error).to.match(new RegExp(`^twiml error ${code}: `));
        expect(af.error).to.not.include('boom');
        expect((af.executed_actions as { type: string }[]).map((a) => a.type)).to.deep.equal(['twiml']);
        await hungUp(call.callId);
        call.peer.close();
      });
    }

    control('a document URL the egress policy refuses is never fetched: 11200, the error spoken, the call hung up', async () => {
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: 'http://169.254.169.254/latest/meta-data/' } }]);
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      expect(call.peer.voiced(), 'the error is spoken').to.be.greaterThan(10);
      const af = await endedFlowOfCall(call.callId);
      expect(af.end_reason).to.equal('error');
      expect(af.error).to.match(/^twiml error 11200: the document could not be fetched: refused/);
      call.peer.close();
    });

    it('activeflow.redirect (a live call update) interrupts the running verb and runs the new TwiML instead', async () => {
      const doc = new VoiceResponse();
      doc.say('Please hold');
      doc.pause({ length: 30 });
      doc.say('never spoken');
      app.on('/hold', doc.toString());
      const next = new VoiceResponse();
      next.say('Redirected');
      next.hangup();
      app.on('/redirected', next.toString());
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/hold') } }]);
      await app.next('/hold');
      const db = await testDb();
      const row = await db('calls').where({ id: call.callId }).first();
      await until(async () => ((await db('activeflows').where({ id: row!.activeflow_id }).first())?.current_action?.type === 'sleep' ? true : null), 15_000, 'the Pause running');
      const bus = commandBus(stack.api.ctx);
      const node = await bus.callOwner(call.callId);
      const t0 = Date.now();
      await bus.toNode(node!, { type: 'activeflow.redirect', activeflowId: row!.activeflow_id, actions: [{ type: 'twiml', option: { url: app.url('/redirected') } }] });
      const r2 = await app.next('/redirected');
      expect(r2.signed).to.equal(true);
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      expect(Date.now() - t0, 'well before the 30 s pause ends').to.be.lessThan(15_000);
      const af = await endedFlowOfCall(call.callId);
      expect((af.executed_actions as { type: string }[]).map((a) => a.type)).to.deep.equal(['twiml', 'talk', 'sleep', 'twiml', 'talk', 'hangup']);
      expect(af.error).to.equal('');
      call.peer.close();
    });

    it('POST /v1.0/calls with a twiml action (inline TwiML) runs it on the answered outbound call', async () => {
      const calleePort = await sipPortPair();
      const callee = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(calleePort), '-m', '1'], { killAfterMs: 40_000 });
      await udpBound(calleePort); // the callee has bound its port: the INVITE waits in its socket
      const doc = new VoiceResponse();
      doc.say('Hello from an outbound call');
      doc.redirect('/outbound-next');
      app.on('/outbound-next', '<Response><Hangup/></Response>');
      const res = await request(stack.api.app)
        .post('/v1.0/calls')
        .query({ accesskey: f.accesskey })
        .send({
          source: { type: 'tel', target: '+15550009999' },
          destinations: [{ type: 'sip', target: `sip:callee@127.0.0.1:${calleePort}` }],
          actions: [{ type: 'twiml', option: { twiml: doc.toString().replace('/outbound-next', app.url('/outbound-next')) } }],
        });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const req = await app.next('/outbound-next');
      expect(req.signed).to.equal(true);
      expect(req.params).to.include({ Direction: 'outbound-api', To: `sip:callee@127.0.0.1:${calleePort}`, AccountSid: accountSid(f.customer.id) });
      const rc = await callee.done;
      expect(rc.code, rc.errors + rc.messages).to.equal(0);
      const af = await endedFlowOfCall(fromCallSid(req.params.CallSid!));
      expect((af.executed_actions as { type: string }[]).map((a) => a.type)).to.deep.equal(['twiml', 'talk', 'twiml', 'hangup']);
    });

    control('a twiml action with bad options is refused with INVALID_ARGUMENT and nothing is dialled', async () => {
      const db = await testDb();
      const before = (await db('calls').where({ customer_id: f.customer.id })).length;
      for (const [option, words] of [
        [{ url: app.url('/x'), twiml: '<Response/>' }, /exactly one of url and twiml/],
        [{}, /exactly one of url and twiml/],
        [{ url: 'ftp://example.com/x' }, /http or https/],
        [{ url: app.url('/x'), method: 'PUT' }, /./],
      ] as const) {
        const res = await request(stack.api.app)
          .post('/v1.0/calls')
          .query({ accesskey: f.accesskey })
          .send({ source: { type: 'tel', target: '+15550009999' }, destinations: [{ type: 'sip', target: 'sip:nobody@127.0.0.1:9' }], actions: [{ type: 'twiml', option }] });
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(res.body.error.status).to.equal('INVALID_ARGUMENT');
        expect(JSON.stringify(res.body.error)).to.match(words);
      }
      expect((await db('calls').where({ customer_id: f.customer.id })).length).to.equal(before);
    });
  });
