// Issue 54 item 2: <Dial><Queue>name</Queue></Dial> dequeues. The compiler's mapping and refusals; sipp
// callers (real SIP on loopback, a media-app node, real Postgres and Redis, RTP tone peers): a caller
// <Enqueue>s, an agent's <Dial><Queue url> takes it (the whisper document fetched signed with the queue
// parameters, played to the caller), the two hear each other, and when one hangs up the other's
// action runs (Enqueue: QueueResult=bridged; Dial: DialCallStatus=completed); an empty queue gives the
// Dial action no-answer after its timeout. The dequeue's wait timer (<Dial timeout>, 5 s here) bounds
// the wait for a caller only: the bridged pair is held past 3× it, both still up.
import { expect } from 'chai';
import twilio from 'twilio';
import { compileTwiml } from '../../core/twiml/compile';
import { callSid, toSid } from '../../core/twilio/sids';
import { queuesRepo } from '../../core/repos/queues';
import { testDb } from '../../testkit/db';
import { until } from '../../testkit/media-app/harness';
import { holdFor } from '../../testkit/long-calls/hold';
import { holdPast } from '../../testkit/long-calls/timers';
import type { PlacedCall } from '../../testkit/streams/support';
import type { TwimlServer } from '../../testkit/twiml/server';
import { hearsOnly } from '../../testkit/twiml/hears';
import { useTwimlCallers, type TwimlCallers } from '../../testkit/twiml/stack';
import type { Fixture } from '../../testkit/api';
import { shape, refused } from '../../testkit/twiml/compile-checks';

const { VoiceResponse } = twilio.twiml;

/** Voiced packets that mean "hears" (a tone peer sends 50 a second). */
const HEARS = 15;
/** Packets in 4.5 s: a window that holds at least 0.5 s of the ringback's 2 s on, 4 s off. */
const RINGBACK_CYCLE_PACKETS = 225;

/** The agent's <Dial timeout>, its least (5 s): how long its dequeue waits for a caller (queue_dequeue's `timeout`). */
const DEQUEUE_TIMEOUT_SEC = 5;

describe('TwiML <Dial><Queue>: compiler', () => {
  it('maps to queue_dequeue (timeout from <Dial timeout>, url resolved, method default POST) and the action with DialCallStatus, QueueSid, QueueTime', () => {
    const r = new VoiceResponse();
    r.dial({ timeout: 5, action: '/after-dial' }).queue({ url: '/whisper' }, 'support');
    r.dial().queue({ url: 'https://x.example.com/w', method: 'GET' }, 'support');
    expect(shape(compileTwiml(r.toString(), { documentUrl: 'https://app.example.com/voice' }))).to.deep.equal([
      { type: 'queue_dequeue', option: { name: 'support', url: 'https://app.example.com/whisper', method: 'POST', timeout: 5000 } },
      { type: 'variable_set', option: { key: 'twiml.param.DialCallStatus', value: '${svc.dequeue.status}' } },
      { type: 'variable_set', option: { key: 'twiml.param.QueueSid', value: '${svc.dequeue.queue_sid}' } },
      { type: 'variable_set', option: { key: 'twiml.param.QueueTime', value: '${svc.dequeue.queue_time}' } },
      { type: 'twiml', option: { url: 'https://app.example.com/after-dial', method: 'POST' } },
      { type: 'queue_dequeue', option: { name: 'support', url: 'https://x.example.com/w', method: 'GET', timeout: 30_000 } },
    ]);
  });

  it('bad input: 12200 for a bad method, a url that is not http(s), an unknown noun attribute', () => {
    refused('<Response><Dial><Queue url="https://x.example.com/w" method="PUT">q</Queue></Dial></Response>', /method/);
    refused('<Response><Dial><Queue url="ftp://x/y">q</Queue></Dial></Response>', /url/);
    refused('<Response><Dial><Queue reservationSid="WR1">q</Queue></Dial></Response>', /reservationSid/);
  });
});

// On both media backends: the embedded engine and fsmrf (drachtio-fsmrf against our switch, esl/).
for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML <Dial><Queue> with sipp callers (${backend} media backend)`, function () {
    this.timeout(180_000);
    let app: TwimlServer;
    let f: Fixture;
    let caller: TwimlCallers['caller'];
    let hangup: TwimlCallers['hangup'];

    // the caller's sipp waits 40 s for the platform's BYE: the bridge is held past the dequeue's timer
    useTwimlCallers(
      (s) => {
        ({ app, f, hangup } = s);
        caller = (path: string): Promise<PlacedCall> => s.caller(path, { killAfterMs: 40_000 });
      },
      undefined,
      { mediaServer: backend },
    );

    type Qc = { status: string; service_agent_id: string };
    async function queuecall(queueId: string, callId: string, status: string): Promise<Qc> {
      const db = await testDb();
      const row = async () => (await db('queuecalls').where({ queue_id: queueId, reference_id: callId }).first()) as Qc | undefined;
      return until(
        async () => {
          const r = await row();
          return r?.status === status ? r : null;
        },
        20_000,
        `queuecall ${status}`,
      );
    }

    /** A caller waiting in `name` (Enqueue with action /after-enqueue) and an agent dequeuing it with a whisper. */
    async function pair(name: string) {
      const db = await testDb();
      const queue = await queuesRepo(db).create(f.customer.id, { name, wait_timeout: 0 });
      const enq = new VoiceResponse();
      enq.enqueue({ action: `/after-enqueue-${queue.id}` }, name);
      app.on(`/enqueue-${queue.id}`, enq.toString());
      const dial = new VoiceResponse();
      dial.dial({ action: `/after-dial-${queue.id}`, timeout: DEQUEUE_TIMEOUT_SEC }).queue({ url: `/whisper-${queue.id}` }, name);
      app.on(`/dequeue-${queue.id}`, dial.toString());
      const whisper = new VoiceResponse();
      whisper.pause({ length: 1 });
      app.on(`/whisper-${queue.id}`, whisper.toString());
      for (const p of ['enqueue', 'dial']) app.on(`/after-${p}-${queue.id}`, new VoiceResponse().hangup().toString());
      const a = await caller(`/enqueue-${queue.id}`);
      await queuecall(queue.id, a.callId, 'waiting');
      const b = await caller(`/dequeue-${queue.id}`);
      return { queue, a, b };
    }

    it('the agent takes the waiting caller: whisper fetched signed with the queue parameters, both hear each other, the Enqueue action gets bridged', async () => {
      const { queue, a, b } = await pair('dequeue line');
      const w = await app.next(`/whisper-${queue.id}`, 20_000);
      expect(w.signed, 'signed').to.equal(true);
      expect(w.method).to.equal('POST');
      expect(w.params).to.include({ QueueSid: toSid('QU', queue.id), CallSid: callSid(a.callId), DequeingCallSid: callSid(b.callId) });
      expect(Number(w.params.QueueTime)).to.be.within(0, 10);
      const qc = await queuecall(queue.id, a.callId, 'service');
      expect(qc.service_agent_id, 'no agent of the queue was rung').to.match(/^0{8}-/);
      const fromA = a.peer.levels.length;
      const fromB = b.peer.levels.length;
      await until(() => (a.peer.voiced(fromA) > HEARS && b.peer.voiced(fromB) > HEARS) || null, 10_000, 'the caller and the agent hear each other');
      // each hears the other alone: the queue's ringback (2 s on, 4 s off) stopped on the caller, so with
      // the agent silent the caller hears nothing for 4.5 s (any such window holds 0.5 s of a ringback)
      await hearsOnly(b.peer, a.peer, RINGBACK_CYCLE_PACKETS);
      await hearsOnly(a.peer, b.peer, 100);
      // the dequeue's wait timer was the wait's: the bridge outlives it
      await holdFor(holdPast(DEQUEUE_TIMEOUT_SEC * 1000), {
        db: await testDb(),
        calls: [a.callId, b.callId],
        parties: [
          { name: 'the caller', done: a.sipp },
          { name: 'the agent', done: b.sipp },
        ],
      });
      expect((await queuecall(queue.id, a.callId, 'service')).status, 'still in service after the hold').to.equal('service');
      const heldA = a.peer.levels.length;
      await until(() => a.peer.voiced(heldA) > HEARS || null, 10_000, 'the caller hears the agent after the hold');
      await hangup(b);
      const cb = await app.next(`/after-enqueue-${queue.id}`, 20_000);
      expect(cb.signed).to.equal(true);
      expect(cb.params).to.include({ QueueResult: 'bridged', QueueSid: toSid('QU', queue.id), CallSid: callSid(a.callId) });
      for (const c of [a, b]) expect((await c.sipp).code).to.equal(0);
      expect(app.requests.filter((r) => r.path === `/whisper-${queue.id}`).length, 'the whisper played once').to.equal(1);
      const done = await queuecall(queue.id, a.callId, 'done');
      expect(done.status).to.equal('done');
    });

    it('the caller hangs up first: the Dial action gets DialCallStatus=completed with QueueSid and QueueTime', async () => {
      const { queue, a, b } = await pair('dequeue line 2');
      await queuecall(queue.id, a.callId, 'service');
      await hangup(a);
      const cb = await app.next(`/after-dial-${queue.id}`, 20_000);
      expect(cb.signed).to.equal(true);
      expect(cb.params).to.include({ DialCallStatus: 'completed', QueueSid: toSid('QU', queue.id), CallSid: callSid(b.callId) });
      expect(cb.params.QueueTime).to.match(/^\d+$/);
      for (const c of [a, b]) expect((await c.sipp).code).to.equal(0);
    });

    it('an empty queue: the Dial action gets no-answer after the timeout (5 s)', async () => {
      const db = await testDb();
      const queue = await queuesRepo(db).create(f.customer.id, { name: 'empty line', wait_timeout: 0 });
      const dial = new VoiceResponse();
      dial.dial({ action: '/after-empty', timeout: 5 }).queue('empty line');
      app.on('/dequeue-empty', dial.toString());
      app.on('/after-empty', new VoiceResponse().hangup().toString());
      const started = performance.now();
      const b = await caller('/dequeue-empty');
      const cb = await app.next('/after-empty', 20_000);
      const took = performance.now() - started;
      expect(cb.params).to.include({ DialCallStatus: 'no-answer', QueueSid: toSid('QU', queue.id) });
      expect(took, 'about the timeout').to.be.within(4500, 9000);
      expect((await b.sipp).code).to.equal(0);
    });
  });
