// The rest of the speaking and transcribe API on one live call: POST /speakings/{id}/flush (what is
// being said and what is queued are dropped, the session stays open and speaks what comes next),
// DELETE /speakings/{id}, transcribe_speech_started/_ended around a recognised phrase, and
// DELETE /transcribes/{id} on a live transcribe. Bad input answers in the error envelope.
import { expect } from 'chai';
import { sleep, until } from '../../testkit/media-app/harness';
import { api, espeakLevels, eventsWhere, inboundSetup, progressingCall, useStack, callNumber, voicedRuns, type Stack } from '../../testkit/speech/support';

const SENTENCE = 'This is a long monologue that goes on and on, sentence after sentence. ';
const LONG = SENTENCE.repeat(6);
const SHORT = 'Okay then, goodbye.';

describe('speakings flush and delete; transcribe speech events and delete', function () {
  this.timeout(90_000);
  let s: Stack;

  useStack((x) => (s = x));

  it('flush drops the speech in progress and the queue, then speaks what comes next; delete stops and hides the session', async () => {
    const { f, number } = await inboundSetup(s, [{ type: 'answer' }, { type: 'sleep', option: { duration: 40_000 } }, { type: 'hangup' }]);
    const a = api(s.t, f);
    const { sink, caller } = await callNumber(s, number, '+15551230101', 70_000);
    try {
      const call = await progressingCall(s, f.customer.id);
      const id = (await a.post('/speakings', { reference_type: 'call', reference_id: call.id })).body.id as string;
      await until(async () => (await a.get(`/speakings/${id}`)).body.status === 'active', 10_000, 'speaking active');

      // a long text speaking and another queued behind it; flush as soon as speech is heard
      const mark = sink.levels.length;
      await a.post(`/speakings/${id}/say`, { text: LONG });
      await a.post(`/speakings/${id}/say`, { text: LONG });
      await until(() => (voicedRuns(sink.levels.slice(mark)).length > 0 ? true : null), 8000, 'speech starts');
      const flushed = await a.post(`/speakings/${id}/flush`);
      expect(flushed.status, JSON.stringify(flushed.body)).to.equal(200);
      expect(flushed.body).to.include({ id, status: 'active' });
      await sleep(1500);
      const longPackets = 6 * voicedRuns(espeakLevels(SENTENCE), 300, 40).reduce((n, r) => n + r[1], 0);
      const heard = voicedRuns(sink.levels.slice(mark)).reduce((n, r) => n + r[1], 0);
      expect(heard, `voiced packets of two long texts flushed (one text is ${longPackets})`).to.be.below(longPackets * 0.4);
      // quiet now: the queued text was dropped too
      const quiet = sink.levels.length;
      await sleep(1000);
      expect(voicedRuns(sink.levels.slice(quiet)), 'nothing after the flush').to.have.length(0);

      // the session stays open: the next say is spoken, once and whole
      expect((await a.get(`/speakings/${id}`)).body.status).to.equal('active');
      const next = sink.levels.length;
      expect((await a.post(`/speakings/${id}/say`, { text: SHORT })).status).to.equal(200);
      const expected = voicedRuns(espeakLevels(SHORT))[0]![1];
      await until(
        () => {
          const runs = voicedRuns(sink.levels.slice(next));
          return runs.length && sink.levels.length - next > runs[0]![0] + runs[0]![1] + 20 ? runs : null;
        },
        10_000,
        'the text after the flush is heard',
      );
      const runs = voicedRuns(sink.levels.slice(next));
      expect(runs, JSON.stringify(runs)).to.have.length(1);
      expect(runs[0]![1]).to.be.within(expected * 0.75, expected * 1.25 + 2);

      // bad input
      expect((await a.post('/speakings/not-a-uuid/flush')).status).to.equal(400);
      const unknown = await a.post('/speakings/00000000-0000-4000-8000-000000000001/flush');
      expect(unknown.status).to.equal(404);
      expect(unknown.body.error).to.include({ status: 'NOT_FOUND' });

      // delete: stops a live session and hides it
      const del = await a.del(`/speakings/${id}`);
      expect(del.status, JSON.stringify(del.body)).to.equal(200);
      expect(del.body).to.include({ id, status: 'stopped' });
      expect(del.body.tm_delete).to.be.a('string').and.not.equal('');
      expect((await a.get(`/speakings/${id}`)).status).to.equal(404);
      expect((await a.post(`/speakings/${id}/say`, { text: 'gone' })).status).to.equal(404);
      expect((await a.post(`/speakings/${id}/flush`)).status).to.equal(404);
      expect((await a.del(`/speakings/${id}`)).status).to.equal(404);
      expect((await a.del('/speakings/nope')).status).to.equal(400);
      expect((await a.get('/speakings')).body.result.map((r: { id: string }) => r.id)).to.not.include(id);
      const stoppedDb = await s.t.ctx.db('speakings').where({ id }).first();
      expect(stoppedDb!.status).to.equal('stopped');

      // a stopped session cannot be flushed
      const other = (await a.post('/speakings', { reference_type: 'call', reference_id: call.id })).body.id as string;
      await a.post(`/speakings/${other}/stop`);
      const late = await a.post(`/speakings/${other}/flush`);
      expect(late.status).to.equal(409);
      expect(late.body.error).to.include({ status: 'FAILED_PRECONDITION', reason: 'STATE_INVALID' });

      // transcribe: a recognised phrase is framed by transcribe_speech_started and _ended of one streaming
      const t = await a.post('/transcribes', { reference_type: 'call', reference_id: call.id, direction: 'out', phrases: ['talk to an operator', 'goodbye'] });
      expect(t.status, JSON.stringify(t.body)).to.equal(200);
      const tid = t.body.id as string;
      const sp = (await a.post('/speakings', { reference_type: 'call', reference_id: call.id, provider: 'provider_b' })).body.id as string;
      await until(async () => (await a.get(`/speakings/${sp}`)).body.status === 'active', 10_000, 'second speaking active');
      await sleep(500);
      await a.post(`/speakings/${sp}/say`, { text: 'talk to an operator' });
      const types = ['transcribe_speech_started', 'transcribe_speech_interim', 'transcribe_speech_ended', 'transcript_created'];
      const evs = await until(
        async () => {
          const e = await eventsWhere(s, types, (d) => d.transcribe_id === tid);
          return e.some((x) => x.event_type === 'transcript_created') && e.some((x) => x.event_type === 'transcribe_speech_ended') ? e : null;
        },
        20_000,
        'speech events',
      );
      const order = evs.map((e) => e.event_type);
      expect(order.indexOf('transcribe_speech_started'), JSON.stringify(order)).to.be.below(order.indexOf('transcribe_speech_ended'));
      const started = evs.find((e) => e.event_type === 'transcribe_speech_started')!.data;
      const ended = evs.find((e) => e.event_type === 'transcribe_speech_ended')!.data;
      expect(started).to.include({ customer_id: f.customer.id, transcribe_id: tid, direction: 'out', message: '' });
      expect(started).to.have.all.keys('id', 'customer_id', 'streaming_id', 'transcribe_id', 'direction', 'message', 'tm_event', 'tm_create');
      expect(ended.streaming_id).to.equal(started.streaming_id);
      expect(ended.id).to.not.equal(started.id);
      expect(String(ended.tm_event) >= String(started.tm_event), `${started.tm_event} .. ${ended.tm_event}`).to.equal(true);

      // delete a live transcribe: stopped, hidden with its transcripts
      const tdel = await a.del(`/transcribes/${tid}`);
      expect(tdel.status, JSON.stringify(tdel.body)).to.equal(200);
      expect(tdel.body.id).to.equal(tid);
      expect(tdel.body.tm_delete).to.be.a('string').and.not.equal('');
      expect((await a.get(`/transcribes/${tid}`)).status).to.equal(404);
      expect((await a.get(`/transcripts?transcribe_id=${tid}`)).status).to.equal(404);
      expect((await a.get(`/transcribes?resource_id=${call.id}`)).body.result.map((r: { id: string }) => r.id)).to.not.include(tid);
      await until(async () => ((await s.t.ctx.db('transcribes').where({ id: tid }).first())!.status === 'done' ? true : null), 10_000, 'deleted transcribe stopped');
      expect((await a.del(`/transcribes/${tid}`)).status).to.equal(404);
      expect((await a.del('/transcribes/xyz')).status).to.equal(400);
      // the call can be transcribed again
      const again = await a.post('/transcribes', { reference_type: 'call', reference_id: call.id, direction: 'out' });
      expect(again.status, JSON.stringify(again.body)).to.equal(200);

      await a.post(`/calls/${call.id}/hangup`);
      await until(async () => (await a.get(`/transcribes/${again.body.id}`)).body.status === 'done', 10_000, 'hangup ends the transcribe');
    } finally {
      await caller.done;
      sink.close();
    }
  });
});
