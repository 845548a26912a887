// Issue 36: <Enqueue waitUrl waitUrlMethod> and <Leave>. The compiler's mapping and refusals; sipp
// callers (real SIP on loopback, a media-app node, real Postgres and Redis, RTP tone peers) waiting in
// a queue whose wait document is fetched signed with Twilio's queue parameters and played in a loop,
// and whose <Leave> takes the caller out of the queue to the Enqueue action with QueueResult=leave.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { wavFile } from '../../core/audio/wav';
import twilio from 'twilio';
import { compileTwiml } from '../../core/twiml/compile';
import { callSid, toSid } from '../../core/twilio/sids';
import { queuesRepo } from '../../core/repos/queues';
import { testDb } from '../../testkit/db';
import { until } from '../../testkit/media-app/harness';
import type { TwimlRequest } from '../../testkit/twiml/server';
import { hearsOnly } from '../../testkit/twiml/hears';
import { useTwimlCallers, type TwimlCallers } from '../../testkit/twiml/stack';
import { shape, refused } from '../../testkit/twiml/compile-checks';

const { VoiceResponse } = twilio.twiml;

describe('TwiML <Enqueue waitUrl>: compiler', () => {
  it('maps to queue_join wait_url (resolved) and wait_method (default POST); waitUrl="" keeps the queue\'s own audio', () => {
    const r = new VoiceResponse();
    r.enqueue({ waitUrl: '/hold' }, 'support');
    r.enqueue({ waitUrl: 'https://music.example.com/hold.xml', waitUrlMethod: 'GET' }, 'support');
    r.enqueue({ waitUrl: '' }, 'support');
    expect(shape(compileTwiml(r.toString(), { documentUrl: 'https://app.example.com/voice' }))).to.deep.equal([
      { type: 'queue_join', option: { name: 'support', wait_url: 'https://app.example.com/hold', wait_method: 'POST' } },
      { type: 'queue_join', option: { name: 'support', wait_url: 'https://music.example.com/hold.xml', wait_method: 'GET' } },
      { type: 'queue_join', option: { name: 'support' } },
    ]);
  });

  it('bad input: 12200 for a bad waitUrlMethod, a waitUrl that is not http(s), <Leave> outside a wait document', () => {
    refused('<Response><Enqueue waitUrl="/w" waitUrlMethod="PUT">q</Enqueue></Response>', /waitUrlMethod/);
    refused('<Response><Enqueue waitUrl="ftp://x/y">q</Enqueue></Response>', /waitUrl/);
    refused('<Response><Enqueue workflowSid="WW1">q</Enqueue></Response>', /workflowSid/);
    refused('<Response><Leave/></Response>', /Leave/);
  });
});

/** About 20 s of speech: the wait document is still speaking when the agent takes the caller. */
const LONG_SPEECH =
  'Thank you for calling. All of our agents are busy helping other customers right now. Please stay on the line and the next free agent will be with you shortly. Your call is important to us, and it will be answered in the order it was received. '.repeat(
    2,
  );

/** 10 s of 440 Hz at 8 kHz, loud: the wait document's music. */
const MUSIC = wavFile(
  Int16Array.from({ length: 80_000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000))),
  8000,
);

// On both media backends: the embedded engine and fsmrf (drachtio-fsmrf against our switch, esl/).
for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML <Enqueue waitUrl> with sipp callers (${backend} media backend)`, function () {
    this.timeout(180_000);
    let s: TwimlCallers;

    useTwimlCallers((x) => (s = x), undefined, { mediaServer: backend });

    const caller = (path: string) => s.caller(path);

    /** The first request for `path` that `pick` accepts. */
    async function requestOf(path: string, pick: (r: TwimlRequest) => boolean): Promise<TwimlRequest> {
      return until(async () => s.app.requests.find((r) => r.path === path && pick(r)) ?? null, 20_000, `a request on ${path}`);
    }

    it('the wait document is fetched signed with QueuePosition, QueueSid, QueueTime, AvgQueueTime, CurrentQueueSize, MaxQueueSize, and looped', async () => {
      const db = await testDb();
      const queue = await queuesRepo(db).create(s.f.customer.id, { name: 'hold line', wait_timeout: 0, max_size: 7 });
      const doc = new VoiceResponse();
      doc.enqueue({ waitUrl: '/hold' }, 'hold line');
      s.app.on('/enqueue-hold', doc.toString());
      const hold = new VoiceResponse();
      hold.say('You are in the queue.');
      hold.pause({ length: 1 });
      s.app.on('/hold', hold.toString());
      const a = await caller('/enqueue-hold');
      const first = await requestOf('/hold', (r) => r.params.CallSid === callSid(a.callId));
      expect(first.signed, 'signed').to.equal(true);
      expect(first.method).to.equal('POST');
      expect(first.params).to.include({ QueueSid: toSid('QU', queue.id), QueuePosition: '1', CurrentQueueSize: '1', MaxQueueSize: '7' });
      expect(Number(first.params.QueueTime)).to.be.within(0, 3);
      expect(first.params.AvgQueueTime).to.match(/^\d+$/);
      // MaxQueueSize is the queue's cap as it is at each fetch (Queues MaxSize changed meanwhile)
      await db('queues').where({ id: queue.id }).update({ max_size: 9 });
      const b = await caller('/enqueue-hold');
      const second = await requestOf('/hold', (r) => r.params.CallSid === callSid(b.callId));
      expect(second.params).to.include({ QueuePosition: '2', CurrentQueueSize: '2', MaxQueueSize: '9' });
      // looped: A's document is fetched again, its QueueTime grown
      const again = await requestOf('/hold', (r) => r.params.CallSid === callSid(a.callId) && r !== first && Number(r.params.QueueTime) >= 1);
      expect(again.params.QueuePosition).to.equal('1');
      const from = a.peer.levels.length;
      await until(() => a.peer.voiced(from) > 5, 10_000, 'A hears the wait document');
      for (const c of [a, b]) await s.hangup(c);
      for (const c of [a, b]) expect((await c.sipp).code).to.equal(0);
    });

    it('an agent takes the caller while the wait document speaks: the speech stops, the caller hears the agent alone', async () => {
      const db = await testDb();
      const queue = await queuesRepo(db).create(s.f.customer.id, { name: 'speaking line', wait_timeout: 0 });
      const doc = new VoiceResponse();
      doc.enqueue({ waitUrl: '/speaking-hold' }, 'speaking line');
      s.app.on('/enqueue-speaking', doc.toString());
      const hold = new VoiceResponse();
      hold.say(LONG_SPEECH);
      s.app.on('/speaking-hold', hold.toString());
      const dial = new VoiceResponse();
      dial.dial({ timeout: 5 }).queue('speaking line');
      s.app.on('/dequeue-speaking', dial.toString());
      const a = await caller('/enqueue-speaking');
      const from = a.peer.levels.length;
      await until(() => a.peer.voiced(from) > 10 || null, 15_000, 'A hears the wait document');
      const b = await caller('/dequeue-speaking');
      await until(async () => ((await db('queuecalls').where({ queue_id: queue.id, reference_id: a.callId }).first())?.status === 'service' ? true : null), 20_000, 'in service');
      // the agent silent: the caller hears nothing (a speech still playing would be heard), then the agent again
      await hearsOnly(b.peer, a.peer, 150);
      expect(s.app.requests.filter((r) => r.path === '/speaking-hold').length, 'the wait document was not fetched again').to.equal(1);
      for (const c of [a, b]) await s.hangup(c);
      for (const c of [a, b]) expect((await c.sipp).code).to.equal(0);
    });

    it("an agent takes the caller during the wait document's music: the music stops, the caller hears the agent alone, no copy left", async () => {
      const db = await testDb();
      const queue = await queuesRepo(db).create(s.f.customer.id, { name: 'music line', wait_timeout: 0 });
      const doc = new VoiceResponse();
      doc.enqueue({ waitUrl: '/music-hold' }, 'music line');
      s.app.on('/enqueue-music', doc.toString());
      s.app.on('/music.wav', { status: 200, body: MUSIC, contentType: 'audio/wav' });
      s.app.on('/music-hold', `<Response><Play>${s.app.url('/music.wav')}</Play></Response>`);
      const dial = new VoiceResponse();
      dial.dial({ timeout: 5 }).queue('music line');
      s.app.on('/dequeue-music', dial.toString());
      const prompts = path.join(s.stack.platform.config.dataDir, 'switch-prompts');
      const left = () => (fs.existsSync(prompts) ? fs.readdirSync(prompts) : []);
      const a = await caller('/enqueue-music');
      await a.peer.turned(true, 15_000);
      if (backend === 'fsmrf') expect(left().length, 'the music copied into the directory shared with the switch').to.be.greaterThan(0);
      const b = await caller('/dequeue-music');
      await until(async () => ((await db('queuecalls').where({ queue_id: queue.id, reference_id: a.callId }).first())?.status === 'service' ? true : null), 20_000, 'in service');
      // the agent silent: the caller hears nothing (the music's 10 s would still be playing), then the agent again
      await hearsOnly(b.peer, a.peer, 150);
      // fsmrf: the copy media-app made for the switch is removed once the play stopped
      expect(left(), 'no prompt file left in the directory shared with the switch').to.deep.equal([]);
      for (const c of [a, b]) await s.hangup(c);
      for (const c of [a, b]) expect((await c.sipp).code).to.equal(0);
    });

    it('<Leave> in the wait document: the caller leaves the queue and the Enqueue action gets QueueResult=leave', async () => {
      const db = await testDb();
      const queue = await queuesRepo(db).create(s.f.customer.id, { name: 'leave line', wait_timeout: 0 });
      const doc = new VoiceResponse();
      doc.enqueue({ waitUrl: '/leave-hold', action: '/after-queue' }, 'leave line');
      s.app.on('/enqueue-leave', doc.toString());
      const hold = new VoiceResponse();
      hold.say('Nobody can take your call.');
      hold.leave();
      s.app.on('/leave-hold', hold.toString());
      const after = new VoiceResponse();
      after.say('Please call again later.');
      after.hangup();
      s.app.on('/after-queue', after.toString());
      const a = await caller('/enqueue-leave');
      const cb = await s.app.next('/after-queue', 30_000);
      // a queue made through /v1.0 without a cap has no MaxQueueSize to send (Twilio's queues always have one)
      const held = s.app.requests.find((r) => r.path === '/leave-hold');
      expect(held?.params, 'the wait document request').to.include({ QueueSid: toSid('QU', queue.id), CurrentQueueSize: '1' });
      expect(held?.params).not.to.have.property('MaxQueueSize');
      expect(cb.signed, 'signed').to.equal(true);
      expect(cb.params).to.include({ QueueResult: 'leave', QueueSid: toSid('QU', queue.id), CallSid: callSid(a.callId) });
      expect((await a.sipp).code).to.equal(0);
      const qc = await db('queuecalls').where({ queue_id: queue.id, reference_id: a.callId }).first();
      expect(qc?.status, 'out of the queue').to.equal('abandoned');
      expect(s.app.requests.filter((r) => r.path === '/leave-hold').length, 'not fetched again after Leave').to.equal(1);
    });
  });
