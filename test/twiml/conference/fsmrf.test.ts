// Issue 55: a TwiML <Conference> whose node runs its calls on the fsmrf backend (our switch, esl/, through
// drachtio-fsmrf; the room is the switch's conference). What the switch does reaches the room's
// statusCallback as on the embedded engine (participant-mute / -unmute through the Participants update);
// music on hold of a member (POST /v1.0/calls/{id}/moh) is the room's and sends no callback
// (test/media-app/fsmrf-hold-member-moh.test.ts hears it). A member's hold and Coaching work on both backends
// (test/twiml/conference/coach.test.ts); an AnnounceUrl's <Say> and <Play> too
// (test/twiml/conference/announce.test.ts). Sipp callers, real SIP on loopback, a
// media-app node, our switch, real Postgres and Redis; the callbacks checked signed (twilio.validateRequest).
import { expect } from 'chai';
import request from 'supertest';
import twilio from 'twilio';
import { callSid, toSid } from '../../../core/twilio/sids';
import { testDb } from '../../../testkit/db';
import { sleep, until } from '../../../testkit/media-app/harness';
import type { PlacedCall } from '../../../testkit/streams/support';
import { useTwilioRestStack, type TwilioRestStack } from '../../../testkit/twiml/stack';

const { VoiceResponse } = twilio.twiml;

describe('TwiML <Conference> on the fsmrf media backend: callbacks', function () {
  this.timeout(180_000);
  let s: TwilioRestStack;

  useTwilioRestStack((x) => (s = x), undefined, { mediaServer: 'fsmrf' });

  async function room(name: string, path: string, n: number): Promise<{ id: string; cf: string; calls: PlacedCall[] }> {
    const calls: PlacedCall[] = [];
    for (let i = 0; i < n; i++) calls.push(await s.caller(path, { talk: false }));
    const db = await testDb();
    const row = await until(async () => ((await db('conferences').where({ customer_id: s.f.customer.id, name }).first()) as { id: string } | undefined) ?? null, 20_000, 'room');
    await until(async () => ((await db('conferencecalls').where({ conference_id: row.id, status: 'joined' })).length === n ? true : null), 20_000, `${n} joined`);
    expect(s.stack.platform.switch!.sw.esl.api.conferences?.get(row.id), "the switch's room").to.not.equal(undefined);
    return { id: row.id, cf: toSid('CF', row.id), calls };
  }

  it('mute and unmute reach the statusCallback; music on hold of a member is taken, with no callback', async () => {
    const doc = new VoiceResponse();
    doc.dial().conference({ statusCallback: '/fe', statusCallbackEvent: ['join', 'leave', 'mute', 'hold', 'modify'] }, 'fsmrf room');
    s.app.on('/f', doc.toString());
    s.app.on('/fe', '<Response/>');
    const { cf, calls } = await room('fsmrf room', '/f', 2);
    const [a, b] = calls as [PlacedCall, PlacedCall];
    const p = (c: PlacedCall) => s.client.conferences(cf).participants(callSid(c.callId));
    const events = () => s.app.requests.filter((x) => x.path === '/fe');
    await until(() => (events().length >= 2 ? true : null), 20_000, 'two joins');

    expect((await p(a).update({ muted: true })).muted).to.equal(true);
    expect((await p(a).update({ muted: false })).muted).to.equal(false);

    // music on hold of a member is the room's (media-server/fsmrf/member-hold.ts): taken, on and off
    const moh = await request(s.stack.api.app).post(`/v1.0/calls/${a.callId}/moh`).query({ accesskey: s.f.accesskey });
    expect(moh.status, JSON.stringify(moh.body)).to.equal(200);
    const db = await testDb();
    const mohOf = async () => ((await db('calls').where({ id: a.callId }).first()) as { metadata: { moh?: boolean } }).metadata.moh;
    await until(async () => ((await mohOf()) === true ? true : null), 10_000, 'music on hold on');
    const mohOff = await request(s.stack.api.app).delete(`/v1.0/calls/${a.callId}/moh`).query({ accesskey: s.f.accesskey });
    expect(mohOff.status, JSON.stringify(mohOff.body)).to.equal(200);
    await until(async () => ((await mohOf()) === false ? true : null), 10_000, 'music on hold off');
    const unhold = await request(s.stack.api.app).delete(`/v1.0/calls/${a.callId}/hold`).query({ accesskey: s.f.accesskey });
    expect(unhold.status, JSON.stringify(unhold.body)).to.equal(200);
    const unheldTw = await p(a).update({ hold: false });
    expect(unheldTw.hold).to.equal(false);
    // nothing changed: the participant as it stood, its row not coaching
    expect(await p(a).fetch()).to.include({ hold: false, coaching: false, muted: false });

    await s.stack.platform.app.calls.get(a.callId)?.hangup('normal');
    const got = await until(() => (events().length >= 5 ? events() : null), 20_000, 'five callbacks');
    await sleep(700);
    const seen = events().map((r) => [r.params.StatusCallbackEvent, r.params.CallSid, r.params.Muted, r.params.Hold]);
    // the two callers join at once: their joins come in either order (sorted by call), the rest in order
    const joins = seen.slice(0, 2).sort((x, y) => Number(x[1] !== callSid(a.callId)) - Number(y[1] !== callSid(a.callId)));
    expect([...joins, ...seen.slice(2)], 'join, join, mute, unmute, leave: nothing for music on hold').to.deep.equal([
      ['participant-join', callSid(a.callId), 'false', 'false'],
      ['participant-join', callSid(b.callId), 'false', 'false'],
      ['participant-mute', callSid(a.callId), 'true', 'false'],
      ['participant-unmute', callSid(a.callId), 'false', 'false'],
      ['participant-leave', callSid(a.callId), 'false', 'false'],
    ]);
    for (const r of got) expect(r.signed, `${r.params.StatusCallbackEvent} signed`).to.equal(true);
    await s.stack.platform.app.calls.get(b.callId)?.hangup('normal');
    for (const c of [a, b]) expect((await c.sipp).code).to.equal(0);
  });
});
