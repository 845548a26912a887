// Issue 54, item 4: <Dial timeout> was not kept when a destination never answered at all (a device
// gone without unregistering: no 100, no 180), because the dial waited for every leg's INVITE
// transaction to time out (32 s). Now the dial ends at its timeout; a busy destination beside one
// that never rang reports busy. UDP sockets on loopback stand in for the gone device and the busy one.
import { expect } from 'chai';
import twilio from 'twilio';
import { placeCall, type PlacedCall, type Stack } from '../../testkit/streams/support';
import type { TwimlServer } from '../../testkit/twiml/server';
import { useTwimlStack } from '../../testkit/twiml/stack';
import { InviteCounter } from '../../testkit/queue/sip-parties';
import type { Fixture } from '../../testkit/api';

const { VoiceResponse } = twilio.twiml;

// On both media backends: the embedded engine and fsmrf (drachtio-fsmrf against our switch, esl/).
for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML <Dial timeout> with a destination that never answers (sipp caller, UDP devices, ${backend} media backend)`, function () {
    this.timeout(90_000);
    let stack: Stack;
    let app: TwimlServer;
    let f: Fixture;
    const devices: InviteCounter[] = [];

    useTwimlStack((s) => ({ stack, app, f } = s), undefined, { mediaServer: backend });
    after(() => devices.forEach((d) => d.close()));

    async function device(busy: boolean): Promise<InviteCounter> {
      const d = await InviteCounter.open({ busy });
      devices.push(d);
      return d;
    }

    /** The caller got the platform's BYE after the action's Hangup. */
    async function hungUp(call: PlacedCall): Promise<void> {
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      call.peer.close();
    }

    /** Dials the devices with timeout 5 and returns the action's request and the seconds from the first INVITE to it. */
    async function dial(path: string, targets: InviteCounter[]) {
      const doc = new VoiceResponse();
      const d = doc.dial({ action: `${path}-done`, timeout: 5 });
      targets.forEach((t, i) => d.sip(`sip:device${i}@127.0.0.1:${t.port}`));
      app.on(path, doc.toString());
      const done = new VoiceResponse();
      done.hangup();
      app.on(`${path}-done`, done.toString());
      let firstInvite = 0;
      for (const t of targets) t.onInvite = (at) => (firstInvite ||= at);
      const call = await placeCall(stack, f.customer.id, [{ type: 'answer' }, { type: 'twiml', option: { url: app.url(path) } }]);
      const cb = await app.next(`${path}-done`, 45_000);
      const seconds = (performance.timeOrigin + cb.at - firstInvite) / 1000;
      return { cb, seconds, call };
    }

    it('a gone device only: the action comes at the timeout with DialCallStatus=no-answer', async () => {
      const gone = await device(false);
      const { cb, seconds, call } = await dial('/gone', [gone]);
      expect(cb.params.DialCallStatus).to.equal('no-answer');
      expect(seconds, 'seconds from the INVITE to the action').to.be.within(4, 9);
      await hungUp(call);
    });

    it('a busy device beside a gone one: the action comes at the timeout with DialCallStatus=busy', async () => {
      const busy = await device(true);
      const gone = await device(false);
      const { cb, seconds, call } = await dial('/busy-gone', [busy, gone]);
      expect(busy.count, 'the busy device was dialled').to.equal(1);
      expect(cb.params.DialCallStatus).to.equal('busy');
      expect(seconds, 'seconds from the INVITE to the action').to.be.within(4, 9);
      await hungUp(call);
    });
  });
