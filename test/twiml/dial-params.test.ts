// Issue 54, item 7: the Dial action lacked DialCallSid, and with <Sip> DialSipCallId and
// DialSipResponseCode. A sipp caller on a media-app node dials a loopback SIP device that answers
// 486 (a UDP socket) or 200 (sipp); the action carries the leg's CallSid and its INVITE's facts.
import { expect } from 'chai';
import twilio from 'twilio';
import { callSid } from '../../core/twilio/sids';
import { testDb } from '../../testkit/db';
import { answeringUas, sipp } from '../../testkit/media-app/harness';
import { sipPortPair } from '../../testkit/ports';
import { InviteCounter } from '../../testkit/queue/sip-parties';
import { placeCall, type Stack } from '../../testkit/streams/support';
import type { TwimlServer } from '../../testkit/twiml/server';
import { useTwimlStack } from '../../testkit/twiml/stack';
import type { Fixture } from '../../testkit/api';

const { VoiceResponse } = twilio.twiml;

// On both media backends: the embedded engine and fsmrf (drachtio-fsmrf against our switch, esl/).
for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML <Dial action>: DialCallSid, DialSipCallId, DialSipResponseCode (sipp caller, SIP devices, ${backend} media backend)`, function () {
    this.timeout(90_000);
    let stack: Stack;
    let app: TwimlServer;
    let f: Fixture;

    useTwimlStack((s) => ({ stack, app, f } = s), undefined, { mediaServer: backend });

    /** Dials `uri` with an action and returns the action's parameters and the caller's call id. */
    async function dialSip(path: string, uri: string, attrs: { timeLimit?: number } = {}) {
      const doc = new VoiceResponse();
      doc.dial({ action: `${path}-done`, ...attrs }).sip(uri);
      app.on(path, doc.toString());
      const done = new VoiceResponse();
      done.hangup();
      app.on(`${path}-done`, done.toString());
      const call = await placeCall(stack, f.customer.id, [{ type: 'answer' }, { type: 'twiml', option: { url: app.url(path) } }]);
      const cb = await app.next(`${path}-done`, 30_000);
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      call.peer.close();
      const leg = await (await testDb())('calls').where({ master_call_id: call.callId }).first();
      return { params: cb.params, leg: leg as { id: string } };
    }

    it('a busy device: DialCallStatus busy, the leg as DialCallSid, its INVITE Call-ID and 486', async () => {
      const busy = await InviteCounter.open({ busy: true });
      try {
        const { params, leg } = await dialSip('/busy', `sip:busy@127.0.0.1:${busy.port}`);
        expect(params).to.include({ DialCallStatus: 'busy', DialCallSid: callSid(leg.id), DialSipResponseCode: '486' });
        expect([...busy.invites.keys()]).to.deep.equal([params.DialSipCallId]);
      } finally {
        busy.close();
      }
    });

    it('an answering device: DialCallStatus completed, DialCallSid, DialSipResponseCode 200', async () => {
      const port = await sipPortPair();
      const callee = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(port), '-m', '1'], { killAfterMs: 40_000 });
      await callee.port;
      const { params, leg } = await dialSip('/answer', `sip:talker@127.0.0.1:${port}`, { timeLimit: 1 });
      expect(params).to.include({ DialCallStatus: 'completed', DialCallSid: callSid(leg.id), DialSipResponseCode: '200' });
      expect(params.DialSipCallId, 'the Call-ID of the INVITE').to.match(/\S+/);
      const rc = await callee.done;
      expect(rc.code, rc.errors + rc.messages).to.equal(0);
    });
  });
