// Transcription end to end on live calls: REST and flow actions start it, what the platform plays
// is recognised by pocketsphinx, each segment is a Transcript and a transcript_created event, and
// stop (or hangup) ends the transcribe with transcribe_done. Recordings are transcribed too.
import { expect } from 'chai';
import { RtpSink, sipp, sleep, uacWaitsForBye, until } from '../../testkit/media-app/harness';
import { api, eventsWhere, inboundSetup, progressingCall, useStack, type Stack } from '../../testkit/speech/support';

const PHRASES = ['please transfer me to sales', 'talk to an operator', 'check my balance', 'goodbye'];

/** sipp, as a phone, calls `number` and waits for the platform's BYE; the audio it gets goes to `sink`. */
const callNumberTo = (s: Stack, number: string, sink: RtpSink, user = '+15551239999') =>
  sipp(uacWaitsForBye(`${number}@127.0.0.1:${s.p.sipPort}`, user, sink.port), [`127.0.0.1:${s.p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 60_000 });

// A call's live transcription on both media backends: the embedded engine, and fsmrf (drachtio-fsmrf against
// our switch, esl/), where the same recognisers run on forks of the leg (media-app/media-server/fsmrf/leg-taps.ts).
for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`live transcription of a call (${backend} media backend)`, function () {
    this.timeout(120_000);
    let s: Stack;

    useStack((x) => (s = x), { EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }, { mediaServer: backend });
    const call = (number: string, sink: RtpSink) => callNumberTo(s, number, sink);

    it('POST /transcribes on a live call: a spoken phrase becomes a Transcript and transcript_created; stop → done', async () => {
      const { f, number } = await inboundSetup(s, [{ type: 'answer' }, { type: 'sleep', option: { duration: 25_000 } }, { type: 'hangup' }]);
      const a = api(s.t, f);
      const sink = await RtpSink.open();
      const caller = call(number, sink);
      try {
        const c = await progressingCall(s, f.customer.id);
        const t = await a.post('/transcribes', { reference_type: 'call', reference_id: c.id, language: 'en-US', direction: 'out', phrases: PHRASES });
        expect(t.status, JSON.stringify(t.body)).to.equal(200);
        expect(t.body).to.include({ status: 'progressing', reference_type: 'call', reference_id: c.id, direction: 'out', provider: 'pocketsphinx' });
        const dup = await a.post('/transcribes', { reference_type: 'call', reference_id: c.id, language: 'en-US' });
        expect(dup.status).to.equal(409);
        // flite (provider_b) speaks the phrase into the call; the transcriber hears the call's outgoing audio
        const sp = (await a.post('/speakings', { reference_type: 'call', reference_id: c.id, provider: 'provider_b' })).body.id as string;
        await until(async () => (await a.get(`/speakings/${sp}`)).body.status === 'active', 10_000, 'speaking active');
        await sleep(700);
        await a.post(`/speakings/${sp}/say`, { text: 'talk to an operator' });
        const tid = t.body.id as string;
        const ev = await until(
          async () => {
            const evs = await eventsWhere(s, ['transcript_created'], (d) => d.transcribe_id === tid);
            return evs.length ? evs : null;
          },
          20_000,
          'transcript_created',
        );
        const texts = ev.map((e) => e.data.message);
        expect(texts, JSON.stringify(texts)).to.include('talk to an operator');
        const seg = ev.find((e) => e.data.message === 'talk to an operator')!.data;
        expect(seg).to.include({ direction: 'out', customer_id: f.customer.id });
        expect(seg.offset_ms as number).to.be.within(500, 8000);

        const stopped = await a.post(`/transcribes/${tid}/stop`);
        expect(stopped.status).to.equal(200);
        await until(async () => (await a.get(`/transcribes/${tid}`)).body.status === 'done', 10_000, 'done');
        expect((await a.post(`/transcribes/${tid}/stop`)).status).to.equal(409);
        const types = (await eventsWhere(s, ['transcribe_created', 'transcribe_progressing', 'transcribe_done'], (d) => d.id === tid)).map((e) => e.event_type);
        expect(types).to.deep.equal(['transcribe_created', 'transcribe_progressing', 'transcribe_done']);
        const list = await a.get(`/transcripts?transcribe_id=${tid}`);
        expect(list.status).to.equal(200);
        expect(list.body.result.map((r: { message: string }) => r.message)).to.include('talk to an operator');
        expect(list.body.result[0]).to.have.all.keys('id', 'customer_id', 'transcribe_id', 'direction', 'message', 'offset_ms', 'tm_transcript', 'tm_create');
        const byCall = await a.get(`/transcribes?resource_id=${c.id}`);
        expect(byCall.body.result.map((r: { id: string }) => r.id)).to.deep.equal([tid]);
        await a.post(`/calls/${c.id}/hangup`);
      } finally {
        await caller.done;
        sink.close();
      }
    });

    it('a silent call gives no transcripts; hangup ends a running transcribe', async () => {
      const { f, number } = await inboundSetup(s, [{ type: 'answer' }, { type: 'transcribe_start', option: {} }, { type: 'sleep', option: { duration: 2500 } }, { type: 'hangup' }]);
      const sink = await RtpSink.open();
      try {
        expect((await call(number, sink).done).code).to.equal(0);
      } finally {
        sink.close();
      }
      const db = s.t.ctx.db;
      const c = await db('calls').where({ customer_id: f.customer.id }).first();
      const row = await until(
        async () => {
          const r = await db('transcribes').where({ reference_id: c!.id }).first();
          return r?.status === 'done' ? r : null;
        },
        15_000,
        'done after hangup',
      );
      expect(row.direction).to.equal('both');
      expect((await db('transcripts').where({ transcribe_id: row.id })).length).to.equal(0);
      // it ran: progressing is published only once the recognisers (and on fsmrf their forks) started
      const types = (await eventsWhere(s, ['transcribe_progressing', 'transcribe_done'], (d) => d.id === row.id)).map((e) => e.event_type);
      expect(types).to.deep.equal(['transcribe_progressing', 'transcribe_done']);
    });
  });

describe('transcribes and transcripts (flows, recordings, bad input)', function () {
  this.timeout(120_000);
  let s: Stack;

  useStack((x) => (s = x));
  const call = (number: string, sink: RtpSink, user?: string) => callNumberTo(s, number, sink, user);

  it('flow transcribe_start → talk → transcribe_stop (free speech, offline): segments stored and published; recordings transcribed', async () => {
    const prompt = 'Hello. Thank you for calling the support line. Please hold while we connect you.';
    const { f, number } = await inboundSetup(s, [
      { type: 'answer' },
      { type: 'recording_start', option: {} },
      { type: 'transcribe_start', option: { language: 'en-US', direction: 'out' } },
      { type: 'talk', option: { text: prompt, language: 'en-US' } },
      { type: 'transcribe_stop' },
      { type: 'recording_stop' },
      { type: 'transcribe_recording', option: { direction: 'both' } },
      { type: 'sleep', option: { duration: 1500 } },
      { type: 'hangup' },
    ]);
    const a = api(s.t, f);
    const sink = await RtpSink.open();
    try {
      const r = await call(number, sink).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      sink.close();
    }
    const db = s.t.ctx.db;
    const c = await db('calls').where({ customer_id: f.customer.id }).first();
    const live = await until(
      async () => {
        const row = await db('transcribes').where({ reference_id: c!.id }).first();
        return row?.status === 'done' ? row : null;
      },
      15_000,
      'live transcribe done',
    );
    expect(live).to.include({ direction: 'out', provider: 'pocketsphinx', reference_type: 'call', activeflow_id: c!.activeflow_id });
    const segs = await db('transcripts').where({ transcribe_id: live.id });
    // pocketsphinx on synthetic telephone speech gets most words wrong (docs/speech.md): what
    // matters here is that the prompt's speech became segments, with text, inside the prompt's time
    expect(segs.length, 'segments of the prompt').to.be.greaterThan(0);
    for (const sg of segs) {
      expect(sg.message).to.match(/^[a-z' ]+$/);
      expect(sg.direction).to.equal('out');
      expect(sg.offset_ms).to.be.within(0, 15_000);
    }
    const evs = await eventsWhere(s, ['transcript_created'], (d) => d.transcribe_id === live.id);
    expect(evs.map((e) => e.data.id).sort()).to.deep.equal(segs.map((x: { id: string }) => x.id).sort());

    const rec = await db('recordings').where({ reference_id: c!.id }).first();
    expect(rec, 'the call was recorded').to.not.equal(undefined);
    const rt = await until(
      async () => {
        const row = await db('transcribes').where({ reference_id: rec!.id }).first();
        return row?.status === 'done' ? row : null;
      },
      30_000,
      'recording transcribe done',
    );
    expect(rt).to.include({ reference_type: 'recording', direction: 'both' });
    expect((await db('transcripts').where({ transcribe_id: rt.id })).length, 'recording segments').to.be.greaterThan(0);
    // REST on the same recording, same language: the existing transcribe comes back
    const again = await a.post('/transcribes', { reference_type: 'recording', reference_id: rec!.id, language: 'en-US' });
    expect(again.status).to.equal(200);
    expect(again.body.id).to.equal(rt.id);
  });

  it('refuses bad input', async () => {
    const { f, number } = await inboundSetup(s, [{ type: 'answer' }, { type: 'sleep', option: { duration: 20_000 } }, { type: 'hangup' }]);
    const a = api(s.t, f);
    const unknown = '6f1c3f9e-1111-4222-8333-444455556666';
    let r = await a.post('/transcribes', { reference_type: 'call', reference_id: unknown, language: 'en-US' });
    expect(r.status).to.equal(404);
    r = await a.post('/transcribes', { reference_type: 'recording', reference_id: unknown, language: 'en-US' });
    expect(r.status).to.equal(404);
    r = await a.post('/transcribes', { reference_type: 'call', reference_id: unknown, language: 'en-US', provider: 'gcp' });
    expect(r.status).to.equal(400);
    expect(r.body.error.details[0].field).to.equal('provider');
    r = await a.post('/transcribes', { reference_type: 'call', reference_id: unknown, language: 'fr-FR' });
    expect(r.status).to.equal(400);
    expect(r.body.error.details[0].field).to.equal('language');
    r = await a.post('/transcribes', { reference_type: 'call', reference_id: unknown, language: 'en-US', direction: 'up' });
    expect(r.status).to.equal(400);
    r = await a.get('/transcripts');
    expect(r.status).to.equal(400);
    r = await a.get(`/transcripts?transcribe_id=${unknown}`);
    expect(r.status).to.equal(404);
    r = await a.get(`/transcribes/${unknown}`);
    expect(r.status).to.equal(404);
    r = await a.post(`/transcribes/${unknown}/stop`);
    expect(r.status).to.equal(404);
    // a live call with a provider that cannot start: the transcribe ends at once, the call goes on
    const sink = await RtpSink.open();
    const caller = call(number, sink, '+15551238888');
    try {
      const c = await progressingCall(s, f.customer.id);
      const prev = process.env.DEEPGRAM_API_KEY;
      delete process.env.DEEPGRAM_API_KEY;
      try {
        r = await a.post('/transcribes', { reference_type: 'call', reference_id: c.id, language: 'en-US', provider: 'deepgram' });
        expect(r.status).to.equal(200);
        await until(async () => (await a.get(`/transcribes/${r.body.id}`)).body.status === 'done', 10_000, 'failed transcribe done');
      } finally {
        if (prev !== undefined) process.env.DEEPGRAM_API_KEY = prev;
      }
      expect((await s.t.ctx.db('calls').where({ id: c.id }).first())!.status).to.equal('progressing');
      await a.post(`/calls/${c.id}/hangup`);
    } finally {
      await caller.done;
      sink.close();
    }
  });
});
