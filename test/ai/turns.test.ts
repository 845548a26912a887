// Turn-taking on real calls (docs/ai.md "Turn-taking"): sipp calls a number whose flow runs ai_talk
// and plays espeak-ng speech (pcaps made here); pocketsphinx with a phrase list recognises it, the
// local OpenAI-compatible server answers, espeak-ng speaks into the call and the test's RTP sink
// times it. A finished sentence is answered after the short wait, a trailing "uh" waits for the
// rest (one turn), "okay" over the agent is ignored and "stop" stops it; each assistant aimessage
// carries its latency breakdown, /metrics the histogram; bad settings are 400s naming the field.
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { platformRegistry } from '../../core/metrics';
import { startMetricsServer } from '../../core/metrics-server';
import { testDb } from '../../testkit/db';
import { buildTestApp, createFixture } from '../../testkit/api';
import { lastUser, type LlmServer, type LlmReply, type LlmRequest } from '../../testkit/llm-server';
import { eventsFor, sipp, until, type Platform } from '../../testkit/media-app/harness';
import { aiCallerScenario, speechSequencePcap, TimedSink } from '../../testkit/ai/audio';
import { useLiveAiStack } from '../../testkit/ai/turn-calls';
import { aiTalkNumber } from '../../testkit/ai/turn-calls';

// pocketsphinx hears these reliably from espeak-ng ("the rest" it does not: "that is all" stands in)
const PHRASES = ['what time is it', 'and then uh', 'that is all', 'tell me a story', 'okay', 'stop'];
const MIN = 300;
const MAX = 3000;
const LEAD = 200;
/**
 * The platform dates the caller's speech end by the VAD's windows (32 ms, with hysteresis) over frames
 * stamped as media-app received them, the sink by the sipp caller's file: the two ends differ by up to
 * about 100 ms from call to call (seen: -80..+90 ms with identical audio)
 */
const SPEECH_END_SLACK = 150;

interface Msg {
  role: string;
  content: string;
  metadata: { latency?: Record<string, number | string | boolean | null> };
}

describe('ai_talk turn-taking on a live call', function () {
  this.timeout(150_000);
  let p: Platform;
  let llm: LlmServer;
  let dir: string;
  let seq = 0;
  useLiveAiStack('ai-turns-', {}, (s) => ({ p, llm, dir } = s));

  async function setUp(respond: (req: LlmRequest) => LlmReply, parameter: Record<string, unknown> = {}) {
    const made = await aiTalkNumber({
      llmUrl: llm.url,
      tag: 'turns',
      number: `+8991200${String(++seq).padStart(5, '0')}`,
      duration: 40,
      ai: {
        parameter: { stt_phrases: PHRASES, min_endpointing_delay_ms: MIN, max_endpointing_delay_ms: MAX, ...parameter },
        // what a fixed silence would be: the short wait (the turn ended after it, whatever was said)
        vad_config: { stop_secs: MIN / 1000 },
      },
    });
    llm.options.respond = respond;
    return made;
  }

  /** Plays `parts` (texts and pauses) from `atMs` after the answer; returns the sink and where each utterance ended (sink clock). */
  async function call(number: string, parts: (string | { pauseMs: number })[], atMs = 1000, during?: (sink: TimedSink) => void) {
    const file = path.join(dir, `q${seq}.pcap`);
    const spoken = speechSequencePcap(parts, file, { leadMs: LEAD, trailMs: 4000 });
    const sink = await TimedSink.open();
    during?.(sink);
    try {
      const r = await sipp(aiCallerScenario(`${number}@127.0.0.1:${p.sipPort}`, sink.port, [{ atMs, pcap: file }]), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '60s'], {
        killAfterMs: 70_000,
      }).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      sink.close();
    }
    // the sink's first packet is the answer (the platform sends from its 200 OK; sipp's pauses start at its ACK)
    const t0 = sink.packets[0]!.at;
    return { sink, ends: spoken.map((s) => ({ text: s.text, start: t0 + atMs + s.startMs, end: t0 + atMs + s.endMs })) };
  }

  async function messages(db: Awaited<ReturnType<typeof testDb>>, cid: string): Promise<{ aicallId: string; msgs: Msg[] }> {
    const aicall = await until(async () => (await db('aicalls').where({ customer_id: cid, status: 'terminated' }))[0], 15_000, 'aicall terminated');
    const msgs = (await db('aimessages').where({ aicall_id: aicall.id }).orderBy('tm_create')) as Msg[];
    return { aicallId: aicall.id, msgs };
  }

  it('a finished sentence ("What time is it.") is answered after about the short wait; its aimessage carries the latency breakdown, /metrics the histogram', async () => {
    const { db, cid, number } = await setUp((req) =>
      lastUser(req) && req.messages.at(-1)?.role !== 'tool' ? { text: 'It is noon.', tool_calls: [{ name: 'stop_service', arguments: {} }] } : { text: '' },
    );
    const { sink, ends } = await call(number, ['What time is it.']);
    const first = sink.voicedTimes().find((t) => t > ends[0]!.end);
    expect(first, 'the agent answered').to.be.a('number');
    const latency = first! - ends[0]!.end;
    // the short wait, recognition, the LLM (no delay) and espeak-ng: far below the long wait
    expect(latency, 'speech end → first answer audio')
      .to.be.at.least(MIN)
      .and.below(MIN + 1500);
    const { aicallId, msgs } = await messages(db, cid);
    expect(msgs.filter((m) => m.role === 'user').map((m) => m.content)).to.deep.equal(['what time is it']);
    const answer = await until(
      async () => ((await db('aimessages').where({ aicall_id: aicallId, role: 'assistant' })) as Msg[]).find((m) => m.content && m.metadata.latency),
      10_000,
      'the latency on the answer',
    );
    const l = answer.metadata.latency!;
    expect(l.end_of_turn_rule).to.equal('complete');
    expect(l.end_of_turn_wait_ms as number)
      .to.be.at.least(MIN - 60)
      .and.below(MAX);
    for (const k of ['stt_final_ms', 'llm_first_token_ms', 'tts_first_byte_ms', 'first_rtp_ms']) expect(l[k], k).to.be.a('number').and.at.least(0);
    // the platform's first packet of the reply: after the wait, and not after the sink heard the voice
    // (espeak-ng's own lead-in silence comes before its first voiced packet), give or take SPEECH_END_SLACK
    expect(l.first_rtp_ms as number, 'first_rtp_ms').to.be.at.least(l.end_of_turn_wait_ms as number);
    expect(l.first_rtp_ms as number, 'first_rtp_ms vs the sink').to.be.at.most(latency + SPEECH_END_SLACK);
    expect(l.interrupted).to.equal(false);
    // the same breakdown in the aicall's events
    const events = await eventsFor(p.redis, aicallId);
    const turn = events.find((e) => e.event_type === 'aicall_turn');
    expect(turn, 'an aicall_turn event').to.not.equal(undefined);
    const created = events.filter((e) => e.event_type === 'aimessage_created').map((e) => e.data);
    expect(
      created.every((d) => d.metadata !== undefined),
      'aimessage JSON has metadata',
    ).to.equal(true);
    const m = await startMetricsServer(platformRegistry, { host: '127.0.0.1', port: 0 });
    try {
      const body = (await request(`http://127.0.0.1:${m.port}`).get('/metrics')).text;
      for (const stage of ['end_of_turn_wait', 'stt_final', 'llm_first_token', 'tts_first_byte', 'first_rtp']) {
        const count = new RegExp(`^ai_turn_latency_ms_count\\{stage="${stage}"\\} (\\d+)`, 'm').exec(body);
        expect(Number(count?.[1] ?? 0), `observations of ${stage}`).to.be.at.least(1);
      }
      expect(body).to.match(/^ai_interruptions_total\{by="caller",of="agent",outcome="stopped"\} \d+/m);
    } finally {
      await m.close();
    }
  });

  it("first_rtp_ms is the reply's first packet even when media-app's thread is busy as the reply ends", async () => {
    const { db, cid, number } = await setUp((req) =>
      lastUser(req) && req.messages.at(-1)?.role !== 'tool' ? { text: 'It is noon.', tool_calls: [{ name: 'stop_service', arguments: {} }] } : { text: '' },
    );
    // once the reply is heard, the test's thread (the platform's too: one process) is held past the
    // reply's end; the sink stamped the reply's first packet before that
    let held = 0;
    const during = (sink: TimedSink) => {
      const watch = setInterval(() => {
        if (!sink.voicedTimes().length) return;
        clearInterval(watch);
        setTimeout(() => {
          const until = performance.now() + 1500;
          while (performance.now() < until) held++;
        }, 150);
      }, 5);
      watch.unref();
    };
    const { sink, ends } = await call(number, ['What time is it.'], 1000, during);
    expect(held, 'the thread was held').to.be.above(0);
    const first = sink.voicedTimes().find((t) => t > ends[0]!.end);
    expect(first, 'the agent answered').to.be.a('number');
    const latency = first! - ends[0]!.end;
    const { aicallId } = await messages(db, cid);
    const answer = await until(
      async () => ((await db('aimessages').where({ aicall_id: aicallId, role: 'assistant' })) as Msg[]).find((m) => m.content && m.metadata.latency),
      10_000,
      'the latency on the answer',
    );
    const l = answer.metadata.latency!;
    expect(l.first_rtp_ms as number, 'first_rtp_ms').to.be.at.least(l.end_of_turn_wait_ms as number);
    expect(l.first_rtp_ms as number, 'first_rtp_ms vs the sink').to.be.at.most(latency + SPEECH_END_SLACK);
  });

  it('"and then, uh" + 700 ms pause + "that is all." is one turn, not two', async () => {
    const { db, cid, number } = await setUp((req) =>
      lastUser(req) && req.messages.at(-1)?.role !== 'tool' ? { text: 'Noted.', tool_calls: [{ name: 'stop_service', arguments: {} }] } : { text: '' },
    );
    const { sink, ends } = await call(number, ['and then, uh', { pauseMs: 700 }, 'That is all.']);
    // nothing said in the pause
    const inPause = sink.voicedTimes().filter((t) => t > ends[0]!.end && t < ends[1]!.start + 100);
    expect(inPause, 'agent audio during the pause').to.have.length(0);
    const { msgs } = await messages(db, cid);
    const users = msgs.filter((m) => m.role === 'user').map((m) => m.content);
    expect(users).to.deep.equal(['and then uh that is all']);
    const said = msgs.find((m) => m.role === 'assistant' && m.content);
    expect(said?.content).to.equal('Noted.');
  });

  it('"okay" while the agent speaks is ignored (it keeps speaking); "stop" stops it', async () => {
    const long = Array.from({ length: 12 }, (_, i) => `This is sentence number ${i + 1} of a very long story.`).join(' ');
    let turns = 0;
    const { db, cid, number } = await setUp((req) => {
      if (!lastUser(req) || req.messages.at(-1)?.role === 'tool') return { text: '' };
      turns++;
      return turns === 1 ? { text: long } : { tool_calls: [{ name: 'stop_flow', arguments: {} }] };
    });
    const { sink, ends } = await call(number, ['Tell me a story.', { pauseMs: 3500 }, 'okay', { pauseMs: 4000 }, 'Stop.']);
    const voiced = sink.voicedTimes();
    const [, okay, stop] = ends;
    // the agent still speaks well after "okay" (about 2 s later and up to "stop")
    const after = voiced.filter((t) => t > okay!.end + 1500 && t < stop!.start);
    expect(after.length, 'agent audio between "okay" and "stop"').to.be.greaterThan(50);
    // and is silent soon after "stop" (recognition of the word, then the cut)
    const late = voiced.filter((t) => t > stop!.end + 1500);
    expect(late, 'agent audio 1.5 s after "stop"').to.have.length(0);
    const { msgs } = await messages(db, cid);
    expect(msgs.filter((m) => m.role === 'user').map((m) => m.content)).to.deep.equal(['tell me a story', 'stop']);
    const cut = await until(
      async () =>
        (
          (await db('aimessages')
            .where({ role: 'assistant' })
            .whereIn('aicall_id', db('aicalls').select('id').where({ customer_id: cid }))) as Msg[]
        ).find((m) => m.content && m.metadata.latency?.interrupted),
      10_000,
      'the story recorded as interrupted',
    );
    expect(cut.content).to.include('sentence number 1');
  });

  it('interruptible_greeting false: "stop" over the greeting does not cut it; the words are the first turn once it has played', async () => {
    const greeting = Array.from({ length: 4 }, (_, i) => `Welcome to the shop, this is greeting sentence ${i + 1}.`).join(' ');
    const { db, cid, number } = await setUp(
      (req) => {
        if (req.messages.at(-1)?.role === 'tool') return { text: '' };
        return lastUser(req) ? { tool_calls: [{ name: 'stop_flow', arguments: {} }] } : { text: greeting };
      },
      { interruptible_greeting: false },
    );
    const { sink, ends } = await call(number, ['Stop.'], 1500);
    const voiced = sink.voicedTimes();
    // the greeting goes on well past "stop" (recognised about 0.5 s after it)
    expect(voiced.filter((t) => t > ends[0]!.end + 2000).length, 'greeting audio 2 s after "stop"').to.be.greaterThan(50);
    const { msgs } = await messages(db, cid);
    expect(msgs.filter((m) => m.role === 'user').map((m) => m.content)).to.deep.equal(['stop']);
    const said = msgs.find((m) => m.role === 'assistant' && m.content);
    expect(said?.content).to.equal(greeting);
    // the user turn came after the whole greeting was recorded as played
    expect(msgs.findIndex((m) => m.role === 'user')).to.be.greaterThan(msgs.indexOf(said!));
  });

  it('refuses bad turn settings with a 400 naming the field; good ones are stored', async () => {
    const t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
    try {
      const f = await createFixture(t.ctx);
      const create = (parameter: Record<string, unknown>) => request(t.app).post('/v1.0/ais').set('Authorization', `Bearer ${f.token}`).send({ name: 'bot', engine_model: 'openai.gpt-5', parameter });
      const bad: [Record<string, unknown>, string][] = [
        [{ min_endpointing_delay_ms: 50 }, 'parameter.min_endpointing_delay_ms'],
        [{ min_endpointing_delay_ms: 'fast' }, 'parameter.min_endpointing_delay_ms'],
        [{ max_endpointing_delay_ms: 60_000 }, 'parameter.max_endpointing_delay_ms'],
        [{ max_endpointing_delay_ms: 1.5 }, 'parameter.max_endpointing_delay_ms'],
        [{ min_endpointing_delay_ms: 900, max_endpointing_delay_ms: 400 }, 'parameter.max_endpointing_delay_ms'],
        [{ interruptible_greeting: 'no' }, 'parameter.interruptible_greeting'],
        [{ echo_cancellation: 'on' }, 'parameter.echo_cancellation'],
        [{ min_interruption_duration_ms: -1 }, 'parameter.min_interruption_duration_ms'],
        [{ min_interruption_duration_ms: 5001 }, 'parameter.min_interruption_duration_ms'],
        [{ min_interruption_duration_ms: '300' }, 'parameter.min_interruption_duration_ms'],
        [{ min_interruption_duration_ms: 250.5 }, 'parameter.min_interruption_duration_ms'],
      ];
      for (const [parameter, field] of bad) {
        const r = await create(parameter);
        expect(r.status, JSON.stringify(r.body)).to.equal(400);
        expect(r.body.error.reason).to.equal('INVALID_ARGUMENT');
        expect(r.body.error.message).to.include(field);
        expect(r.body.error.details[0].field).to.equal(field);
      }
      const ok = await create({ min_endpointing_delay_ms: 300, max_endpointing_delay_ms: 2500, interruptible_greeting: false, min_interruption_duration_ms: 0 });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
      expect(ok.body.parameter).to.include({ min_endpointing_delay_ms: 300, max_endpointing_delay_ms: 2500, interruptible_greeting: false, min_interruption_duration_ms: 0 });
      // a refused update keeps what was stored
      const put = await request(t.app)
        .put(`/v1.0/ais/${ok.body.id}`)
        .set('Authorization', `Bearer ${f.token}`)
        .send({ parameter: { max_endpointing_delay_ms: 5 } });
      expect(put.status).to.equal(400);
      const got = await request(t.app).get(`/v1.0/ais/${ok.body.id}`).set('Authorization', `Bearer ${f.token}`);
      expect(got.body.parameter.max_endpointing_delay_ms).to.equal(2500);
    } finally {
      await t.close();
    }
  });
});
