// Issue 36: <Dial><Conference>name</Conference></Dial> and <Enqueue>name</Enqueue> by friendly name.
// The compiler's mapping and its refusals; the database guard that makes two racing joiners land in
// one room; and sipp callers (real SIP on loopback, a media-app node, real Postgres and Redis) whose
// TwiML joins a room by name, checked in the audio they hear (RTP tone peers).
import { expect } from 'chai';
import twilio from 'twilio';
import { compileTwiml } from '../../../core/twiml/compile';
import { conferencesRepo } from '../../../core/repos/conferences';
import { queuesRepo } from '../../../core/repos/queues';
import { toSid } from '../../../core/twilio/sids';
import { testDb } from '../../../testkit/db';
import { sleep, until } from '../../../testkit/media-app/harness';
import { newestRoom, participantsIn } from '../../../testkit/conference/rooms';
import { useTwimlCallers, type TwimlCallers } from '../../../testkit/twiml/stack';
import { shape, refused } from '../../../testkit/twiml/compile-checks';

const { VoiceResponse } = twilio.twiml;

/** Voiced packets in a 2 s window that mean "hears": well below the 100 sent, for a loaded machine. */
const HEARS = 15;

describe('TwiML conferences and queues by name: compiler', () => {
  it('names become conference_join / queue_dequeue / queue_join by name; attributes map to the participant', () => {
    const r = new VoiceResponse();
    r.dial().conference({ muted: true, endConferenceOnExit: true, maxParticipants: 3, participantLabel: 'coach', beep: 'false', startConferenceOnEnter: true }, 'Room 1234');
    r.dial().queue('support');
    r.enqueue('support');
    expect(shape(compileTwiml(r.toString()))).to.deep.equal([
      { type: 'conference_join', option: { name: 'Room 1234', max_participants: 3, muted: true, end_on_exit: true, label: 'coach' } },
      { type: 'queue_dequeue', option: { name: 'support', timeout: 30_000 } },
      { type: 'queue_join', option: { name: 'support' } },
    ]);
  });

  it('<Enqueue action>: after the queue, the action gets QueueResult, QueueSid and QueueTime', () => {
    const r = new VoiceResponse();
    r.enqueue({ action: '/left', method: 'GET' }, 'support');
    expect(shape(compileTwiml(r.toString(), { documentUrl: 'https://app.example.com/voice' }))).to.deep.equal([
      { type: 'queue_join', option: { name: 'support' } },
      { type: 'variable_set', option: { key: 'twiml.param.QueueResult', value: '${svc.queuecall.result}' } },
      { type: 'variable_set', option: { key: 'twiml.param.QueueSid', value: '${svc.queuecall.queue_sid}' } },
      { type: 'variable_set', option: { key: 'twiml.param.QueueTime', value: '${svc.queuecall.wait_seconds}' } },
      { type: 'twiml', option: { url: 'https://app.example.com/left', method: 'GET' } },
    ]);
    refused('<Response><Enqueue method="PUT" action="/x">q</Enqueue></Response>', /method/);
    refused('<Response><Enqueue action="ftp://x">q</Enqueue></Response>', /action/);
    refused('<Response><Enqueue workflowSid="WW1">q</Enqueue></Response>', /workflowSid/);
  });

  it('bad input: 12200 for a name over the limit, out-of-range or unknown attribute values, an empty noun', () => {
    refused(`<Response><Dial><Conference>${'x'.repeat(129)}</Conference></Dial></Response>`, /at most 128/);
    refused(`<Response><Enqueue>${'q'.repeat(65)}</Enqueue></Response>`, /at most 64/);
    refused('<Response><Dial><Conference maxParticipants="1">r</Conference></Dial></Response>', /maxParticipants/);
    refused('<Response><Dial><Conference maxParticipants="251">r</Conference></Dial></Response>', /maxParticipants/);
    refused('<Response><Dial><Conference maxParticipants="ten">r</Conference></Dial></Response>', /maxParticipants/);
    refused('<Response><Dial><Conference muted="yes">r</Conference></Dial></Response>', /muted/);
    refused('<Response><Dial><Conference beep="loud">r</Conference></Dial></Response>', /beep/);
    refused('<Response><Dial><Conference region="ie1">r</Conference></Dial></Response>', /region/);
    refused('<Response><Dial><Conference participantLabel="">r</Conference></Dial></Response>', /participantLabel/);
    refused('<Response><Dial><Conference> </Conference></Dial></Response>', /needs a name/);
    refused('<Response><Enqueue></Enqueue></Response>', /needs a name/);
    refused('<Response><Dial><Conference maxParticipants="5">8c6a1f40-1111-4a2b-9c3d-0123456789ab</Conference></Dial></Response>', /made by a name/);
  });
});

for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML <Dial><Conference> by name with sipp callers (${backend} media backend)`, function () {
    this.timeout(120_000);
    let s: TwimlCallers;

    useTwimlCallers((x) => (s = x), undefined, { mediaServer: backend });

    /** `live: false` for a call that may end at once (resolves when its row exists). */
    const caller = (path: string, live = true) => s.caller(path, live ? {} : { live: false });
    const roomNamed = (name: string) => newestRoom(s.f.customer.id, name);
    const joined = (conferenceId: string, n: number) => participantsIn(conferenceId, n);

    async function status(conferenceId: string): Promise<string> {
      const db = await testDb();
      return String((await db('conferences').where({ id: conferenceId }).first())?.status);
    }

    it('the database guard: ten racing joiners of one name get one room; a room made by a name is not reused once it ended', async () => {
      const db = await testDb();
      const customer = s.f.customer;
      const repo = conferencesRepo(db);
      const name = `race ${Date.now()}`;
      const got = await Promise.all(Array.from({ length: 10 }, () => repo.namedOrCreate(customer.id, name)));
      expect(new Set(got.map((g) => g.conference.id)).size).to.equal(1);
      expect(got.filter((g) => g.created).length).to.equal(1);
      expect(got[0]!.conference.ends_when_empty).to.equal(true);
      await repo.transition(got[0]!.conference.id, 'terminated');
      const next = await repo.namedOrCreate(customer.id, name);
      expect(next.created).to.equal(true);
      expect(next.conference.id).to.not.equal(got[0]!.conference.id);

      const queues = queuesRepo(db);
      const qname = `q${Date.now()}`;
      const qs = await Promise.all(Array.from({ length: 10 }, () => queues.namedOrCreate(customer.id, qname)));
      expect(new Set(qs.map((q) => q.queue.id)).size).to.equal(1);
      expect(qs.filter((q) => q.created).length).to.equal(1);
      expect(qs[0]!.queue).to.include({ name: qname, made_by_name: true, routing_method: 'random' });
    });

    it('two callers of "Room 1234" land in one room made on the first join, hear each other; it ends when the last leaves', async () => {
      const doc = new VoiceResponse();
      doc.dial().conference('Room 1234');
      s.app.on('/room', doc.toString());
      const a = await caller('/room');
      const b = await caller('/room');
      const room = await roomNamed('Room 1234');
      expect(room.ends_when_empty).to.equal(true);
      await joined(room.id, 2);
      const db = await testDb();
      expect((await db('conferences').where({ customer_id: s.f.customer.id, name: 'Room 1234' })).length, 'one room').to.equal(1);
      // once each hears the other, a window of 100 packets each hears (the measured media)
      await Promise.all([a.peer.turned(true), b.peer.turned(true)]);
      const fromA = a.peer.levels.length;
      const fromB = b.peer.levels.length;
      await Promise.all([a.peer.packetsFrom(fromA), b.peer.packetsFrom(fromB)]);
      expect(a.peer.voiced(fromA), 'A hears B').to.be.greaterThan(HEARS);
      expect(b.peer.voiced(fromB), 'B hears A').to.be.greaterThan(HEARS);
      await s.hangup(a);
      await sleep(1000); // an absence: the room does not end while B is in it
      expect(await status(room.id), 'still up with B in it').to.equal('progressing');
      await s.hangup(b);
      await until(async () => ((await status(room.id)) === 'terminated' ? true : null), 10_000, 'terminated when the last left');
      // the name is free again: the next caller makes a new room
      const c = await caller('/room');
      await until(async () => ((await db('conferences').where({ customer_id: s.f.customer.id, name: 'Room 1234' })).length === 2 ? true : null), 20_000, 'a second room');
      const second = await roomNamed('Room 1234');
      expect(second.id).to.not.equal(room.id);
      await s.hangup(c);
      for (const x of [a, b, c]) expect((await x.sipp).code).to.equal(0);
    });

    it('muted: the room does not hear the muted caller, who hears the room; endConferenceOnExit ends the room and the others go on', async () => {
      const moderator = new VoiceResponse();
      moderator.dial().conference({ endConferenceOnExit: true }, 'moderated');
      s.app.on('/moderator', moderator.toString());
      const listener = new VoiceResponse();
      listener.dial().conference({ muted: true }, 'moderated');
      listener.redirect('/after');
      s.app.on('/listener', listener.toString());
      const after = new VoiceResponse();
      after.hangup();
      s.app.on('/after', after.toString());
      const m = await caller('/moderator');
      const l = await caller('/listener');
      const room = await roomNamed('moderated');
      await joined(room.id, 2);
      // once the listener hears the moderator (the mix is up), a window of 100 packets each hears (the
      // moderator's 100: it gets RTP)
      await l.peer.turned(true);
      const fromM = m.peer.levels.length;
      const fromL = l.peer.levels.length;
      await Promise.all([m.peer.packetsFrom(fromM), l.peer.packetsFrom(fromL)]);
      expect(m.peer.voiced(fromM), 'the moderator does not hear the muted listener').to.be.lessThan(5);
      expect(l.peer.voiced(fromL), 'the listener hears the moderator').to.be.greaterThan(HEARS);
      await s.hangup(m);
      await until(async () => ((await status(room.id)) === 'terminated' ? true : null), 10_000, 'ended with the moderator');
      // the listener's document went on after the Dial: the redirect was fetched and hung up
      await s.app.next('/after');
      expect((await l.sipp).code).to.equal(0);
    });

    it('maxParticipants="2": a third caller is not let in and its document goes on after the Dial', async () => {
      const doc = new VoiceResponse();
      doc.dial().conference({ maxParticipants: 2 }, 'pair');
      doc.redirect('/full');
      s.app.on('/pair', doc.toString());
      const full = new VoiceResponse();
      full.hangup();
      s.app.on('/full', full.toString());
      const a = await caller('/pair');
      const room = await roomNamed('pair');
      const b = await caller('/pair');
      await joined(room.id, 2);
      // refused at once: its call may be over before it is ever seen progressing
      const c = await caller('/pair', false);
      await s.app.next('/full');
      expect((await c.sipp).code).to.equal(0);
      const db = await testDb();
      expect((await db('conferencecalls').where({ conference_id: room.id, reference_id: c.callId })).length, 'never a participant').to.equal(0);
      await s.hangup(a);
      await s.hangup(b);
      await until(async () => ((await status(room.id)) === 'terminated' ? true : null), 10_000, 'terminated');
    });

    it('<Enqueue action>: a caller leaving the queue (its wait_timeout) gets the action with QueueResult=leave, QueueSid, QueueTime', async () => {
      const db = await testDb();
      const queue = await queuesRepo(db).create(s.f.customer.id, { name: 'short wait', wait_timeout: 2000 });
      const doc = new VoiceResponse();
      doc.enqueue({ action: '/left' }, 'short wait');
      s.app.on('/short', doc.toString());
      const left = new VoiceResponse();
      left.say('Nobody is free');
      left.hangup();
      s.app.on('/left', left.toString());
      const a = await caller('/short');
      const cb = await s.app.next('/left');
      expect(cb.signed, 'signed').to.equal(true);
      expect(cb.params).to.include({ QueueResult: 'leave', QueueSid: toSid('QU', queue.id) });
      expect(Number(cb.params.QueueTime)).to.be.within(1, 5);
      const heard = a.peer.voiced();
      expect((await a.sipp).code).to.equal(0);
      expect(a.peer.voiced(), 'the action document was run: its Say heard').to.be.greaterThan(heard);
    });

    it('<Enqueue>support</Enqueue>: the queue is made on first use and reused by name', async () => {
      const doc = new VoiceResponse();
      doc.enqueue('support line');
      s.app.on('/enqueue', doc.toString());
      const a = await caller('/enqueue');
      const b = await caller('/enqueue');
      const db = await testDb();
      const queues = await until(
        async () => {
          const rows = (await db('queues').where({ customer_id: s.f.customer.id, name: 'support line' })) as { id: string; made_by_name: boolean }[];
          return rows.length ? rows : null;
        },
        20_000,
        'queue made',
      );
      expect(queues.length, 'one queue').to.equal(1);
      expect(queues[0]!.made_by_name).to.equal(true);
      await until(async () => ((await db('queuecalls').where({ queue_id: queues[0]!.id, status: 'waiting' })).length === 2 ? true : null), 20_000, 'both waiting in it');
      await s.hangup(a);
      await s.hangup(b);
      for (const x of [a, b]) expect((await x.sipp).code).to.equal(0);
    });
  });
