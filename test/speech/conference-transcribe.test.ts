// POST /conferences/{id}/transcribe_start and /transcribe_stop end to end: a participant (sipp, by a
// trunk) sits in a live conference, speech goes into the mix (a speaking), transcribe_start makes a
// confbridge transcribe whose transcripts land, the conference names it (transcribe_id, _ids) and
// conference_updated is published; transcribe_stop ends it. Then the errors.
import { expect } from 'chai';
import { sleep, until } from '../../testkit/media-app/harness';
import { createFixture } from '../../testkit/api';
import { api, conferenceWithCaller, eventsWhere, useStack, type Stack } from '../../testkit/speech/support';
import { EMPTY_UUID } from '../../core/ids';

describe('conference transcription (transcribe_start, transcribe_stop)', function () {
  this.timeout(90_000);
  let s: Stack;

  useStack((x) => (s = x));

  it('transcribes the mix of a live conference until stopped; the conference names its transcribe', async () => {
    const f = await createFixture(s.t.ctx);
    const a = api(s.t, f);
    const { confId, sink, caller } = await conferenceWithCaller(s, f, 'tr', '+15551230003', 40_000);
    try {
      const start = await a.post(`/conferences/${confId}/transcribe_start`, { language: 'en-US' });
      expect(start.status, JSON.stringify(start.body)).to.equal(200);
      expect(start.body).to.include({ reference_type: 'confbridge', reference_id: confId, status: 'progressing', language: 'en-US' });
      const trId = start.body.id as string;
      const named = (await a.get(`/conferences/${confId}`)).body;
      expect(named.transcribe_id).to.equal(trId);
      expect(named.transcribe_ids).to.deep.equal([trId]);
      const again = await a.post(`/conferences/${confId}/transcribe_start`, { language: 'en-US' });
      expect(again.status).to.equal(409);
      expect(again.body.error.reason).to.equal('ALREADY_EXISTS');

      const sp = await a.post('/speakings', { reference_type: 'confbridge', reference_id: confId, provider: 'provider_b' });
      await until(async () => (await a.get(`/speakings/${sp.body.id}`)).body.status === 'active', 10_000, 'speaking active');
      await sleep(300);
      await a.post(`/speakings/${sp.body.id}/say`, { text: 'Please check my balance and talk to an operator.' });
      await until(async () => ((await s.t.ctx.db('transcripts').where({ transcribe_id: trId })).length ? true : null), 20_000, 'a transcript of the mix');

      const stop = await a.post(`/conferences/${confId}/transcribe_stop`);
      expect(stop.status, JSON.stringify(stop.body)).to.equal(200);
      expect(stop.body.id).to.equal(trId);
      await until(async () => (await a.get(`/transcribes/${trId}`)).body.status === 'done', 15_000, 'the transcribe ends');
      const after = (await a.get(`/conferences/${confId}`)).body;
      expect(after.transcribe_id).to.equal(EMPTY_UUID);
      expect(after.transcribe_ids).to.deep.equal([trId]);
      const updates = await eventsWhere(s, ['conference_updated'], (d) => d.id === confId);
      expect(updates.map((e) => e.data.transcribe_id)).to.include.members([trId, EMPTY_UUID]);
      const twice = await a.post(`/conferences/${confId}/transcribe_stop`);
      expect(twice.status).to.equal(409);
      expect(twice.body.error.reason).to.equal('STATE_INVALID');
      await a.del(`/conferences/${confId}`);
    } finally {
      await caller.done;
      sink.close();
    }
  });

  it('bad input: a missing or bad language, an unknown or foreign conference, one not progressing', async () => {
    const f = await createFixture(s.t.ctx);
    const a = api(s.t, f);
    const conf = await a.post('/conferences', { type: 'conference', name: 'idle', detail: '', data: {}, timeout: 0 });
    const confId = conf.body.id as string;
    for (const body of [{}, { language: '' }, { language: 'not a tag!' }, { language: 'en-US', provider: 'gcp' }]) {
      const r = await a.post(`/conferences/${confId}/transcribe_start`, body);
      expect(r.status, JSON.stringify(body)).to.equal(400);
    }
    expect((await a.post('/conferences/nope/transcribe_start', { language: 'en-US' })).status).to.equal(400);
    const other = api(s.t, await createFixture(s.t.ctx));
    const foreign = await other.post(`/conferences/${confId}/transcribe_start`, { language: 'en-US' });
    expect(foreign.status).to.equal(404);
    expect((await other.post(`/conferences/${confId}/transcribe_stop`)).status).to.equal(404);
    await a.del(`/conferences/${confId}`);
    const gone = await a.post(`/conferences/${confId}/transcribe_start`, { language: 'en-US' });
    expect(gone.status).to.be.oneOf([404, 409]);
  });
});
