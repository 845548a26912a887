// Speakings end to end: a trunk (sipp) calls a number whose flow answers and waits; REST creates a
// speaking on the live call and queues three sentences at once; the caller's RTP must carry three
// voiced segments in the order (and with the lengths) of the sentences. Then stop, hangup, bad input.
import { expect } from 'chai';
import { sleep, until } from '../../testkit/media-app/harness';
import { api, conferenceWithCaller, espeakLevels, inboundSetup, progressingCall, useStack, callNumber, voicedRuns, type Stack } from '../../testkit/speech/support';

const SENTENCES = ['Yes.', 'This is a much longer second sentence with quite a lot of words in it.', 'Okay then, goodbye.'];

describe('speakings (streaming TTS into a live call)', function () {
  this.timeout(90_000);
  let s: Stack;

  useStack((x) => (s = x));

  it('says three queued sentences in order on a live call, then stops; a hangup stops the others', async () => {
    const { f, number } = await inboundSetup(s, [{ type: 'answer' }, { type: 'sleep', option: { duration: 25_000 } }, { type: 'hangup' }]);
    const a = api(s.t, f);
    const { sink, caller } = await callNumber(s, number, '+15551230000', 60_000);
    try {
      const call = await progressingCall(s, f.customer.id);
      const created = await a.post('/speakings', { reference_type: 'call', reference_id: call.id });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect(created.body).to.include({ status: 'initiating', provider: 'provider_a', language: 'en-US', direction: 'both', reference_type: 'call', reference_id: call.id });
      const id = created.body.id as string;
      await until(async () => (await a.get(`/speakings/${id}`)).body.status === 'active', 10_000, 'speaking active');
      // a second session, left open: the hangup must stop it
      const other = (await a.post('/speakings', { reference_type: 'call', reference_id: call.id, direction: 'in', provider: 'provider_b' })).body.id as string;

      const before = sink.levels.length;
      // queued back to back, each as soon as the previous one is accepted (acceptance order is speaking order)
      for (const text of SENTENCES) {
        const r = await a.post(`/speakings/${id}/say`, { text });
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
      }
      const expected = SENTENCES.map((t) => voicedRuns(espeakLevels(t))[0]![1]);
      const total = expected.reduce((x, y) => x + y, 0);
      await until(
        () => {
          const runs = voicedRuns(sink.levels.slice(before));
          return runs.length >= 3 && sink.levels.length - before > runs[runs.length - 1]![0] + runs[runs.length - 1]![1] + 20;
        },
        20_000,
        'three sentences heard',
      );
      const runs = voicedRuns(sink.levels.slice(before));
      const desc = `runs ${JSON.stringify(runs)} expected lengths ${JSON.stringify(expected)}`;
      expect(runs.length, desc).to.equal(3);
      // same order and lengths as the sentences (±25 %), back to back (no sentence lost or doubled)
      for (let i = 0; i < 3; i++) expect(runs[i]![1], desc).to.be.within(expected[i]! * 0.75, expected[i]! * 1.25 + 2);
      expect(runs[2]![0] + runs[2]![1] - runs[0]![0], desc).to.be.below(total + 3 * 30);

      const stopped = await a.post(`/speakings/${id}/stop`);
      expect(stopped.status).to.equal(200);
      expect(stopped.body.status).to.equal('stopped');
      const late = await a.post(`/speakings/${id}/say`, { text: 'Too late.' });
      expect(late.status).to.equal(409);
      expect(late.body.error).to.include({ status: 'FAILED_PRECONDITION', reason: 'STATE_INVALID' });
      // stop silences at once: a long text queued and stopped right away leaves little audio
      const third = (await a.post('/speakings', { reference_type: 'call', reference_id: call.id })).body.id as string;
      await until(async () => (await a.get(`/speakings/${third}`)).body.status === 'active', 10_000, 'third active');
      const mark = sink.levels.length;
      await a.post(`/speakings/${third}/say`, { text: SENTENCES[1]! + ' ' + SENTENCES[1]! });
      await until(() => voicedRuns(sink.levels.slice(mark)).length > 0, 5000, 'speech starts');
      await a.post(`/speakings/${third}/stop`);
      await sleep(1500);
      const afterStop = voicedRuns(sink.levels.slice(mark)).reduce((n, r) => n + r[1], 0);
      expect(afterStop, 'voiced packets after stop').to.be.below(expected[1]! * 2 * 0.6);

      expect((await a.post(`/calls/${call.id}/hangup`)).status).to.equal(200);
      await until(async () => (await a.get(`/speakings/${other}`)).body.status === 'stopped', 10_000, 'hangup stops the open session');
      const list = await a.get('/speakings');
      expect(list.status).to.equal(200);
      expect(list.body.result.map((r: { id: string }) => r.id)).to.include.members([id, other, third]);
    } finally {
      await caller.done;
      sink.close();
    }
  });

  it('speaks into a conference and transcribes its mix: the participant hears it; the conference ending stops both', async () => {
    const { f } = await inboundSetup(s, [{ type: 'answer' }, { type: 'hangup' }]);
    const a = api(s.t, f);
    const { confId, sink, caller } = await conferenceWithCaller(s, f, 'speech', '+15551230002', 40_000);
    try {
      // the conference's whole mix is transcribed too (phrase list: flite-voiced phrases come out exact)
      const tr = await a.post('/transcribes', { reference_type: 'confbridge', reference_id: confId, language: 'en-US', phrases: ['check my balance', 'talk to an operator', 'goodbye'] });
      expect(tr.status, JSON.stringify(tr.body)).to.equal(200);
      const r = await a.post('/speakings', { reference_type: 'confbridge', reference_id: confId, provider: 'provider_b' });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      const id = r.body.id as string;
      await until(async () => (await a.get(`/speakings/${id}`)).body.status === 'active', 10_000, 'active');
      const mark = sink.levels.length;
      await sleep(500);
      await a.post(`/speakings/${id}/say`, { text: 'check my balance' });
      await a.post(`/speakings/${id}/say`, { text: SENTENCES[1]! });
      await until(() => voicedRuns(sink.levels.slice(mark)).some((x) => x[1] > 100), 15_000, 'the participant hears the sentences');
      await until(async () => ((await s.t.ctx.db('transcripts').where({ transcribe_id: tr.body.id, message: 'check my balance' })).length ? true : null), 10_000, 'conference transcript');
      await a.del(`/conferences/${confId}`);
      await until(async () => (await a.get(`/speakings/${id}`)).body.status === 'stopped', 15_000, 'conference end stops the session');
      await until(async () => (await a.get(`/transcribes/${tr.body.id}`)).body.status === 'done', 15_000, 'conference end ends the transcribe');
    } finally {
      await caller.done;
      sink.close();
    }
  });

  it('refuses bad input with the error envelope', async () => {
    const { f, number } = await inboundSetup(s, [{ type: 'answer' }, { type: 'sleep', option: { duration: 20_000 } }, { type: 'hangup' }]);
    const a = api(s.t, f);
    const unknown = '6f1c3f9e-1111-4222-8333-444455556666';
    let r = await a.post('/speakings', { reference_type: 'call', reference_id: unknown });
    expect(r.status).to.equal(404);
    expect(r.body.error.reason).to.equal('CALL_NOT_FOUND');
    r = await a.post('/speakings', { reference_type: 'confbridge', reference_id: unknown });
    expect(r.status).to.equal(404);
    r = await a.post('/speakings', { reference_type: 'recording', reference_id: unknown });
    expect(r.status).to.equal(400);
    r = await a.post('/speakings', { reference_type: 'call', reference_id: 'not-a-uuid' });
    expect(r.status).to.equal(400);
    r = await a.get(`/speakings/${unknown}`);
    expect(r.status).to.equal(404);
    expect(r.body.error).to.include({ status: 'NOT_FOUND' });
    r = await a.post(`/speakings/${unknown}/say`, { text: 'hello' });
    expect(r.status).to.equal(404);

    const { sink, caller } = await callNumber(s, number, '+15551230001', 40_000);
    try {
      const call = await progressingCall(s, f.customer.id);
      r = await a.post('/speakings', { reference_type: 'call', reference_id: call.id, provider: 'elevenlabs' });
      expect(r.status).to.equal(400);
      expect(r.body.error.details[0].field).to.equal('provider');
      r = await a.post('/speakings', { reference_type: 'call', reference_id: call.id, language: 'xx-YY' });
      expect(r.status).to.equal(400);
      expect(r.body.error.details[0].field).to.equal('language');
      r = await a.post('/speakings', { reference_type: 'call', reference_id: call.id, direction: 'sideways' });
      expect(r.status).to.equal(400);
      r = await a.post('/speakings', { reference_type: 'call', reference_id: call.id, language: 'de-DE', provider: 'provider_c' });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      const id = r.body.id as string;
      r = await a.post(`/speakings/${id}/say`, { text: '   ' });
      expect(r.status).to.equal(400);
      r = await a.post(`/speakings/${id}/say`, {});
      expect(r.status).to.equal(400);
      r = await a.post(`/speakings/${id}/say`, { text: 'hallo', extra: 1 });
      expect(r.status).to.equal(400);
      await a.post(`/calls/${call.id}/hangup`);
      await until(async () => (await a.get(`/speakings/${id}`)).body.status === 'stopped', 10_000, 'stopped by hangup');
      r = await a.post(`/speakings/${id}/say`, { text: 'hallo' });
      expect(r.status).to.equal(409);
      // an ended call takes no new session
      await until(async () => (await s.t.ctx.db('calls').where({ id: call.id }).first())!.status === 'hangup', 10_000, 'hangup');
      r = await a.post('/speakings', { reference_type: 'call', reference_id: call.id });
      expect(r.status).to.equal(409);
      expect(r.body.error.reason).to.equal('CALL_STATE_INVALID');
    } finally {
      await caller.done;
      sink.close();
    }
  });
});
