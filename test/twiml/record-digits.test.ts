// Issue 54, item 7: Record's action had no Digits. Twilio sends the key that ended the recording
// (or `hangup`); a recording ended by its maxLength sends none. A sipp caller on a media-app node
// presses # (RFC 4733) while recorded.
import { expect } from 'chai';
import twilio from 'twilio';
import { testDb } from '../../testkit/db';
import { until } from '../../testkit/media-app/harness';
import { placeCall, type Stack } from '../../testkit/streams/support';
import type { TwimlServer } from '../../testkit/twiml/server';
import { useTwimlStack } from '../../testkit/twiml/stack';
import type { Fixture } from '../../testkit/api';

const { VoiceResponse } = twilio.twiml;

// On both media backends: the embedded engine and fsmrf (drachtio-fsmrf against our switch, esl/).
for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML <Record> action: Digits (sipp caller, TwiML app on loopback; ${backend} media backend)`, function () {
    this.timeout(90_000);
    let stack: Stack;
    let app: TwimlServer;
    let f: Fixture;

    useTwimlStack((s) => ({ stack, app, f } = s), undefined, { mediaServer: backend });

    function recordDoc(path: string, attrs: { finishOnKey: string; maxLength: number }): void {
      const doc = new VoiceResponse();
      doc.record({ action: `${path}-done`, playBeep: false, timeout: 0, ...attrs });
      app.on(path, doc.toString());
      const done = new VoiceResponse();
      done.hangup();
      app.on(`${path}-done`, done.toString());
    }

    it('a recording ended by the caller pressing # sends Digits=#', async () => {
      recordDoc('/rec-key', { finishOnKey: '#', maxLength: 30 });
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/rec-key') } }]);
      await app.next('/rec-key');
      const db = await testDb();
      await until(async () => (await db('recordings').where({ reference_id: call.callId }).first()) ?? null, 10_000, 'the recording started');
      await call.peer.digit('#', call.live.endpoint!.local.port);
      const cb = await app.next('/rec-key-done', 20_000);
      expect(cb.params.Digits).to.equal('#');
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      call.peer.close();
    });

    it('a recording ended by its maxLength sends no Digits', async () => {
      recordDoc('/rec-max', { finishOnKey: '#', maxLength: 1 });
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/rec-max') } }]);
      const cb = await app.next('/rec-max-done', 20_000);
      expect(cb.params).to.not.have.property('Digits');
      expect(cb.params.RecordingSid).to.match(/^RE[0-9a-f]{32}$/);
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      call.peer.close();
    });
  });
