// Issue 36: <Conference statusCallbackEvent="mute hold">. A participant muted or held through the
// REST Participants update (the official twilio client against control-api on loopback) sends
// participant-mute / participant-unmute / participant-hold / participant-unhold to the room's
// statusCallback, signed (twilio.validateRequest), in order with join and leave; a sipp caller (real
// SIP on loopback, a media-app node, real Postgres and Redis) answers the hold re-INVITEs. On the fsmrf
// media backend (issue 55) mute and unmute are the switch's member operations and send the same
// callbacks, and a member's hold is the switch's `conference <room> hold` (media-server/README.md):
// the same callbacks and re-INVITEs on both. A join says the member's mute and hold as it joined, even when
// its callback goes after a mute that came just after.
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import twilio from 'twilio';
import { compileTwiml } from '../../../core/twiml/compile';
import { callSid, toSid } from '../../../core/twilio/sids';
import { testDb } from '../../../testkit/db';
import { sleep, until } from '../../../testkit/media-app/harness';
import { answerReinvite } from '../../../testkit/media-app/sipp-steps';
import { useTwilioRestStack, type TwilioRestStack } from '../../../testkit/twiml/stack';
import { expectParticipantLifecycle } from '../../../testkit/twiml/participant-events';

const { VoiceResponse } = twilio.twiml;

describe('TwiML <Conference statusCallbackEvent="mute hold">: compiler', () => {
  it('mute and hold are events now', () => {
    const r = new VoiceResponse();
    r.dial().conference({ statusCallback: 'https://cb.example.com/e', statusCallbackEvent: ['mute', 'hold', 'join'] }, 'r');
    expect(compileTwiml(r.toString())[0]!.option).to.deep.include({ status_callback: { url: 'https://cb.example.com/e', method: 'POST', events: ['mute', 'hold', 'join'] } });
  });
});

for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML <Conference statusCallbackEvent="mute hold"> with sipp callers and REST updates (${backend} media backend)`, function () {
    this.timeout(180_000);
    let s: TwilioRestStack;

    useTwilioRestStack((x) => (s = x), undefined, { mediaServer: backend });

    /** The caller in 'mute hold room' (answering the two hold re-INVITEs where a hold is done), its participant once connected. */
    async function connected(steps?: (port: number) => string) {
      const doc = new VoiceResponse();
      doc.dial().conference({ statusCallback: '/pe', statusCallbackEvent: ['join', 'leave', 'mute', 'hold'] }, 'mute hold room');
      s.app.on('/m', doc.toString());
      s.app.on('/pe', '<Response/>');
      const c = await s.caller('/m', steps ? { steps } : {});
      const db = await testDb();
      const room = await until(async () => ((await db('conferences').where({ customer_id: s.f.customer.id, name: 'mute hold room' }).first()) as { id: string } | undefined) ?? null, 20_000, 'room');
      const cf = toSid('CF', room.id);
      const p = () => s.client.conferences(cf).participants(callSid(c.callId));
      // the room is made before its participant: a 20404 until then
      await until(
        async () =>
          (
            await p()
              .fetch()
              .catch(() => null)
          )?.status === 'connected'
            ? true
            : null,
        20_000,
        'connected',
      );
      return { c, cf, p };
    }

    /** The callbacks once `n` have come and a moment more brought no other. */
    async function callbacks(n: number) {
      const got = await until(
        async () => {
          const r = s.app.requests.filter((x) => x.path === '/pe');
          return r.length >= n ? r : null;
        },
        20_000,
        `${n} callbacks`,
      );
      await sleep(1000);
      expect(s.app.requests.filter((x) => x.path === '/pe').length, `no more than ${n}`).to.equal(n);
      return got;
    }

    it('participant-mute, -unmute, -hold, -unhold between join and leave, signed, Muted/Hold as they then stood', async () => {
      const { c, cf, p } = await connected((port) => `${answerReinvite(port, 'inactive', 2)}\n${answerReinvite(port, 'sendrecv', 3)}`);
      expect((await p().update({ muted: true })).muted).to.equal(true);
      expect((await p().update({ muted: false })).muted).to.equal(false);
      expect((await p().update({ hold: true })).hold).to.equal(true);
      expect((await p().update({ hold: false })).hold).to.equal(false);
      // the same state again changes nothing: no callback
      expect((await p().update({ muted: false })).muted).to.equal(false);
      await sleep(500);
      await s.stack.platform.app.calls.get(c.callId)?.hangup('normal');
      expectParticipantLifecycle(await callbacks(6), { ConferenceSid: cf, CallSid: callSid(c.callId), FriendlyName: 'mute hold room' });
      const res = await c.sipp;
      expect(res.code, res.errors + res.messages).to.equal(0);
    });

    it('a mute just after a join: the join says the member unmuted, as it joined, though its callback goes after the mute', async () => {
      // the room's callbacks go one at a time: a receiver that holds the first one's answer holds the
      // second member's join callback back until that member has been muted
      const got: Record<string, string>[] = [];
      let release = () => {};
      const held = new Promise<void>((r) => (release = r));
      const hold = http.createServer((req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          got.push(Object.fromEntries(new URLSearchParams(body)));
          if (got.length === 1) void held.then(() => res.end('<Response/>'));
          else res.end('<Response/>');
        });
      });
      hold.on('error', () => undefined);
      await new Promise<void>((r) => hold.listen(0, '127.0.0.1', r));
      try {
        const doc = new VoiceResponse();
        doc.dial().conference({ statusCallback: `http://127.0.0.1:${(hold.address() as AddressInfo).port}/j`, statusCallbackEvent: ['join', 'mute'] }, 'join then mute');
        s.app.on('/jm', doc.toString());
        const a = await s.caller('/jm');
        await until(async () => (got.length >= 1 ? true : null), 20_000, "the first member's join callback");
        const b = await s.caller('/jm');
        const db = await testDb();
        const room = (await db('conferences').where({ customer_id: s.f.customer.id, name: 'join then mute' }).first()) as { id: string };
        const p = s.client.conferences(toSid('CF', room.id)).participants(callSid(b.callId));
        await until(async () => ((await p.fetch().catch(() => null))?.status === 'connected' ? true : null), 20_000, 'b connected');
        expect((await p.update({ muted: true })).muted).to.equal(true);
        release();
        await until(async () => (got.length >= 3 ? true : null), 20_000, 'three callbacks');
        expect(got.map((g) => [g.StatusCallbackEvent, g.CallSid, g.Muted])).to.deep.equal([
          ['participant-join', callSid(a.callId), 'false'],
          ['participant-join', callSid(b.callId), 'false'],
          ['participant-mute', callSid(b.callId), 'true'],
        ]);
        for (const c of [a, b]) await s.stack.platform.app.calls.get(c.callId)?.hangup('normal');
      } finally {
        release();
        hold.close();
      }
    });
  });
