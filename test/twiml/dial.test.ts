import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import twilio from 'twilio';
import { testDb } from '../../testkit/db';
import { recordedSeconds } from '../../testkit/recordings';
import { answeringUas, sipp, sleep, until } from '../../testkit/media-app/harness';
import { sipPortPair, udpBound } from '../../testkit/ports';
import { placeCall, RtpPeer, type Stack } from '../../testkit/streams/support';
import { callerUas } from '../../testkit/queue/sip-parties';
import { hearsOnly } from '../../testkit/twiml/hears';
import type { TwimlServer } from '../../testkit/twiml/server';
import { useTwimlStack } from '../../testkit/twiml/stack';
import type { Fixture } from '../../testkit/api';
import type { CallSession } from '../../media-app/call/session';
import { readWav, rms } from '../../testkit/media-engine/support';

const { VoiceResponse } = twilio.twiml;

// On both media backends: the embedded engine and fsmrf (drachtio-fsmrf against our switch, esl/).
for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML <Dial> timeout, timeLimit, answerOnBridge, record, hangupOnStar (sipp caller and callees, ${backend} media backend)`, function () {
    this.timeout(90_000);
    let stack: Stack;
    let app: TwimlServer;
    let f: Fixture;

    useTwimlStack((s) => ({ stack, app, f } = s), undefined, { mediaServer: backend });

    async function legOf(masterId: string, status?: string) {
      const db = await testDb();
      const q = () => (status ? db('calls').where('master_call_id', masterId).andWhere('status', status) : db('calls').where('master_call_id', masterId));
      return until(async () => (await q().first()) ?? null, 20_000, `leg ${status ?? 'created'}`);
    }

    /** The platform's RTP port of the live leg `id` (the engine's or the switch's, by backend): where its callee sends. */
    async function legRtpPort(id: string): Promise<number> {
      const ep = await until(() => (stack.platform.app.calls.get(id) as CallSession | undefined)?.endpoint ?? null, 10_000, "the leg's endpoint");
      return ep.local.port;
    }

    it('a <Dial><Sip> bridge: the caller and the callee each hear the other alone', async () => {
      const callee = await RtpPeer.open();
      const calleePort = await sipPortPair();
      const uas = sipp(callerUas(callee.port), ['-i', '127.0.0.1', '-p', String(calleePort), '-m', '1'], { killAfterMs: 60_000 });
      await udpBound(calleePort); // the callee has bound its port: the INVITE waits in its socket
      const doc = new VoiceResponse();
      doc.dial().sip(`sip:both@127.0.0.1:${calleePort}`);
      app.on('/both', doc.toString());
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/both') } }]);
      try {
        const leg = await legOf(call.callId, 'progressing');
        callee.talk(await legRtpPort(leg.id));
        await until(() => (call.peer.voiced() > 15 && callee.voiced() > 15) || null, 10_000, 'the caller and the callee hear each other');
        await hearsOnly(callee, call.peer, 100);
        await hearsOnly(call.peer, callee, 100);
        await stack.platform.app.calls.get(leg.id)!.hangup('normal');
        const r = await call.sipp;
        expect(r.code, r.errors + r.messages).to.equal(0);
        const rc = await uas.done;
        expect(rc.code, rc.errors + rc.messages).to.equal(0);
      } finally {
        callee.close();
        call.peer.close();
      }
    });

    it('timeout="5": a callee that only rings is given up after ~5 s and the action gets DialCallStatus=no-answer', async () => {
      const calleePort = await sipPortPair();
      const callee = sipp(answeringUas({ cancel: true }), ['-i', '127.0.0.1', '-p', String(calleePort), '-m', '1'], { killAfterMs: 40_000 });
      await udpBound(calleePort); // the callee has bound its port: the INVITE waits in its socket
      const doc = new VoiceResponse();
      doc.dial({ action: '/timeout-done', timeout: 5 }).sip(`sip:ringer@127.0.0.1:${calleePort}`);
      app.on('/timeout', doc.toString());
      const done = new VoiceResponse();
      done.hangup();
      app.on('/timeout-done', done.toString());
      const call = await placeCall(stack, f.customer.id, [{ type: 'answer' }, { type: 'twiml', option: { url: app.url('/timeout') } }]);
      await app.next('/timeout');
      await legOf(call.callId, 'ringing');
      const t0 = Date.now();
      const cb = await app.next('/timeout-done');
      const waited = (Date.now() - t0) / 1000;
      expect(cb.params.DialCallStatus).to.equal('no-answer');
      expect(waited, 'seconds from ringing to the action').to.be.within(3, 8);
      const rc = await callee.done;
      expect(rc.code, rc.errors + rc.messages).to.equal(0);
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      call.peer.close();
    });

    it('timeLimit="3": the bridge is ended ~3 s after the answer; DialCallStatus=completed, DialCallDuration≈3, the caller stays', async () => {
      const calleePort = await sipPortPair();
      const callee = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(calleePort), '-m', '1'], { killAfterMs: 40_000 });
      await udpBound(calleePort); // the callee has bound its port: the INVITE waits in its socket
      const doc = new VoiceResponse();
      doc.dial({ action: '/limit-done', timeLimit: 3 }).sip(`sip:talker@127.0.0.1:${calleePort}`);
      app.on('/limit', doc.toString());
      const done = new VoiceResponse();
      done.say('Time is up');
      done.hangup();
      app.on('/limit-done', done.toString());
      const call = await placeCall(stack, f.customer.id, [{ type: 'answer' }, { type: 'twiml', option: { url: app.url('/limit') } }]);
      await app.next('/limit');
      const leg = await legOf(call.callId, 'progressing');
      const t0 = Date.now();
      const cb = await app.next('/limit-done');
      const waited = (Date.now() - t0) / 1000;
      expect(cb.params.DialCallStatus).to.equal('completed');
      expect(Number(cb.params.DialCallDuration)).to.be.within(3, 5);
      expect(waited, 'seconds from the answer to the action').to.be.within(2, 6);
      const db = await testDb();
      expect((await db('calls').where({ id: leg.id }).first())?.status).to.equal('hangup');
      // the caller was kept: the action's Say is heard after the bridge ended
      const heard = call.peer.voiced();
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      expect(call.peer.voiced()).to.be.greaterThan(heard);
      const rc = await callee.done;
      expect(rc.code, rc.errors + rc.messages).to.equal(0);
      call.peer.close();
    });

    for (const onBridge of [true, false]) {
      it(`answerOnBridge="${onBridge}": the caller gets its 200 OK ${onBridge ? 'only after the callee answers (180 passed on)' : 'before the callee answers'}`, async () => {
        const calleePort = await sipPortPair();
        const callee = sipp(answeringUas({ pauseMs: 3000 }), ['-i', '127.0.0.1', '-p', String(calleePort), '-m', '1'], { killAfterMs: 40_000 });
        await udpBound(calleePort); // the callee has bound its port: the INVITE waits in its socket
        const doc = new VoiceResponse();
        doc.dial({ answerOnBridge: onBridge }).sip(`sip:late@127.0.0.1:${calleePort}`);
        app.on(`/aob-${onBridge}`, doc.toString());
        const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url(`/aob-${onBridge}`) } }]);
        const leg = await legOf(call.callId, 'progressing');
        const db = await testDb();
        const master = await db('calls').where({ id: call.callId }).first();
        const callerAnswered = new Date(master!.tm_progressing!).getTime();
        const calleeAnswered = new Date(leg.tm_progressing!).getTime();
        if (onBridge) expect(callerAnswered, 'caller answered after the callee').to.be.at.least(calleeAnswered);
        else expect(calleeAnswered - callerAnswered, 'caller answered well before the callee').to.be.at.least(2000);
        await sleep(500);
        await stack.platform.app.calls.get(leg.id)!.hangup('normal');
        const r = await call.sipp;
        expect(r.code, r.errors + r.messages).to.equal(0);
        if (onBridge) expect(r.messages).to.match(/SIP\/2\.0 180[\s\S]*SIP\/2\.0 200/);
        const rc = await callee.done;
        expect(rc.code, rc.errors + rc.messages).to.equal(0);
        call.peer.close();
      });
    }

    it('record="record-from-answer": both sides of the bridge are recorded from the answer; the action gets RecordingSid/RecordingUrl', async () => {
      const far = await RtpPeer.open();
      far.amplitude = 0;
      const calleePort = await sipPortPair();
      const callee = sipp(callerUas(far.port), ['-i', '127.0.0.1', '-p', String(calleePort), '-m', '1'], { killAfterMs: 60_000 });
      await udpBound(calleePort); // the callee has bound its port: the INVITE waits in its socket
      const doc = new VoiceResponse();
      doc.dial({ action: '/rec-done', record: 'record-from-answer' }).sip(`sip:recorded@127.0.0.1:${calleePort}`);
      app.on('/rec', doc.toString());
      const done = new VoiceResponse();
      done.hangup();
      app.on('/rec-done', done.toString());
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/rec') } }]);
      try {
        const leg = await legOf(call.callId, 'progressing');
        far.talk(await legRtpPort(leg.id));
        // the caller's tone crosses the bridge (the file holds 2 s of it), then the callee's alone (2 s more)
        const db = await testDb();
        const file = await recordedSeconds(db, stack.platform.config.dataDir, call.callId, 2);
        call.peer.amplitude = 0;
        far.amplitude = 8000;
        const turnedAt = (fs.statSync(file).size - 44) / 16_000;
        await recordedSeconds(db, stack.platform.config.dataDir, call.callId, Math.ceil(turnedAt) + 2);
        await stack.platform.app.calls.get(leg.id)!.hangup('normal');
        const cb = await app.next('/rec-done');
        expect(cb.params.DialCallStatus).to.equal('completed');
        expect(cb.params.RecordingSid).to.match(/^RE[0-9a-f]{32}$/);
        expect(cb.params.RecordingUrl).to.match(/\/2010-04-01\/Accounts\/AC[0-9a-f]{32}\/Recordings\/RE[0-9a-f]{32}$/);
        expect(Number(cb.params.RecordingDuration)).to.be.within(3, 8);
        const rec = await db('recordings').where({ reference_id: call.callId }).first();
        expect(rec, 'a recording of the caller').to.not.equal(undefined);
        expect(cb.params.RecordingSid).to.equal('RE' + String(rec!.id).replace(/-/g, ''));
        expect(rec!.status).to.equal('ended');
        // started at the answer, not before the dial
        expect(new Date(rec!.tm_start!).getTime()).to.be.at.least(new Date(leg.tm_progressing!).getTime() - 200);
        const wav = readWav(path.join(stack.platform.config.dataDir, 'recordings', rec!.filenames[0]!));
        const seconds = wav.samples.length / wav.rate;
        expect(seconds, 'seconds recorded').to.be.within(3.5, 8);
        const at = (s: number) => Math.round(s * wav.rate);
        expect(rms(wav.samples, at(0.5), at(turnedAt - 0.2)), 'the caller is heard in it').to.be.greaterThan(200);
        expect(rms(wav.samples, at(turnedAt + 1), at(seconds - 0.2)), 'the callee is heard in it').to.be.greaterThan(200);
        const r = await call.sipp;
        expect(r.code, r.errors + r.messages).to.equal(0);
        const rc = await callee.done;
        expect(rc.code, rc.errors + rc.messages).to.equal(0);
      } finally {
        far.close();
        call.peer.close();
      }
    });

    it('hangupOnStar="true": the caller pressing * ends the bridge and the document goes on after the Dial', async () => {
      const far = await RtpPeer.open();
      const calleePort = await sipPortPair();
      const callee = sipp(callerUas(far.port), ['-i', '127.0.0.1', '-p', String(calleePort), '-m', '1'], { killAfterMs: 40_000 });
      await udpBound(calleePort); // the callee has bound its port: the INVITE waits in its socket
      const doc = new VoiceResponse();
      doc.dial({ hangupOnStar: true }).sip(`sip:starred@127.0.0.1:${calleePort}`);
      doc.redirect('/star-after');
      app.on('/star', doc.toString());
      const after = new VoiceResponse();
      after.say('Back after the star');
      after.hangup();
      app.on('/star-after', after.toString());
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/star') } }]);
      try {
        const leg = await legOf(call.callId, 'progressing');
        far.talk(await legRtpPort(leg.id));
        // the bridge is up once the caller hears the callee through it
        await until(() => call.peer.voiced() > 15 || null, 10_000, 'the caller hears the callee');
        const db = await testDb();
        const t0 = Date.now();
        await call.peer.digit('*', call.live.endpoint!.local.port);
        await app.next('/star-after');
        expect((Date.now() - t0) / 1000, 'seconds from * to the next verb').to.be.below(4);
        expect((await db('calls').where({ id: leg.id }).first())?.status).to.equal('hangup');
        const heard = call.peer.voiced();
        const r = await call.sipp;
        expect(r.code, r.errors + r.messages).to.equal(0);
        expect(call.peer.voiced(), 'the document went on: its Say heard').to.be.greaterThan(heard);
        const rc = await callee.done;
        expect(rc.code, rc.errors + rc.messages).to.equal(0);
      } finally {
        far.close();
        call.peer.close();
      }
    });
  });
