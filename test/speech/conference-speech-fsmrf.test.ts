// Speech into a conference and its mix's transcription need the embedded engine's mixer: on the fsmrf
// backend both end at once, saying so in the node's log, instead of a speaking left `initiating` with
// its session held by the node and its command retried (the conference's mix lookup threw out of
// startSpeaking after the session was registered). sipp joins a real conference on our switch.
import { expect } from 'chai';
import { until } from '../../testkit/media-app/harness';
import { api, conferenceWithCaller, closeStack, inboundSetup, startStack, type Stack } from '../../testkit/speech/support';
import { truncateAll } from '../../testkit/db';

describe('speakings and transcribes of a conference on the fsmrf backend', function () {
  this.timeout(90_000);
  let s: Stack;

  before(async () => {
    await truncateAll();
    s = await startStack({}, { mediaServer: 'fsmrf' });
  });
  after(() => closeStack(s));

  it('a speaking into it stops at once and a transcribe of it is done, each logged by the backend’s name', async () => {
    const { f } = await inboundSetup(s, [{ type: 'answer' }, { type: 'hangup' }]);
    const a = api(s.t, f);
    const { confId, sink, caller } = await conferenceWithCaller(s, f, 'speech-fsmrf', '+15551230003', 30_000);
    try {
      const r = await a.post('/speakings', { reference_type: 'confbridge', reference_id: confId });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      await until(async () => (await a.get(`/speakings/${r.body.id}`)).body.status === 'stopped', 10_000, 'the speaking stopped');
      const tr = await a.post('/transcribes', { reference_type: 'confbridge', reference_id: confId, language: 'en-US' });
      expect(tr.status, JSON.stringify(tr.body)).to.equal(200);
      await until(async () => (await a.get(`/transcribes/${tr.body.id}`)).body.status === 'done', 10_000, 'the transcribe done');
      const speech = s.p.app.factory.services.speech!;
      expect(speech.held(), 'no session held by the node').to.deep.equal({ speakings: 0, transcriptions: 0 });
      expect((await s.t.ctx.db('conferencecalls').where({ conference_id: confId, status: 'joined' })).length, 'the participant is still in').to.equal(1);
      await a.del(`/conferences/${confId}`);
    } finally {
      await caller.done;
      sink.close();
    }
  });
});
