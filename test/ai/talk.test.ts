// ai_talk on real calls: sipp calls a number whose flow runs ai_talk; sipp plays spoken questions
// (espeak-ng → pcap, made here); the platform recognises them (pocketsphinx with a phrase list),
// asks the local OpenAI-compatible server (streamed), and speaks the answer (espeak-ng) into the
// call, which the test hears on its RTP sink. Barge-in, a hang-up tool, and no endpoint.
import { endedActiveflow } from '../../testkit/call-ends';
import path from 'node:path';
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { aisRepo } from '../../core/repos/ais';
import { repos } from '../../core/repos';
import { testDb } from '../../testkit/db';
import { lastUser, type LlmServer, type LlmReply, type LlmRequest } from '../../testkit/llm-server';
import { answeringUas, eventsFor, sipp, until, type Platform } from '../../testkit/media-app/harness';
import { freePort } from '../../testkit/ports';
import { aiCallerScenario, speechPcap, TimedSink } from '../../testkit/ai/audio';
import { startTracing } from '../../core/tracing';
import { OtlpReceiver } from '../support/otlp-receiver';
import { useLiveAiStack } from '../../testkit/ai/turn-calls';

const PHRASES = ['what are your opening hours', 'stop please', 'thank you goodbye'];

describe('ai_talk on a live call', function () {
  this.timeout(120_000);
  let p: Platform;
  let llm: LlmServer;
  let dir: string;
  let q1: { file: string; ms: number };
  let q2: { file: string; ms: number };
  let numberSeq = 0;
  // the LLM server is on loopback
  useLiveAiStack('ai-talk-', {}, (s) => ({ p, llm, dir } = s));
  before(() => {
    q1 = { file: path.join(dir, 'q1.pcap'), ms: 0 };
    q1.ms = speechPcap('What are your opening hours?', q1.file);
    q2 = { file: path.join(dir, 'q2.pcap'), ms: 0 };
    q2.ms = speechPcap('Stop please.', q2.file);
  });

  /** A customer, trunk, AI, flow [answer, ai_talk, ...after] and a number; returns what the test needs. */
  async function setUp(respond: (req: LlmRequest) => LlmReply, opts: { engineUrl?: string; after?: unknown[]; duration?: number; task?: boolean; middle?: unknown } = {}) {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `ai${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'ai' })).id;
    await trunksRepo(db).create(cid, `trai${Date.now()}${numberSeq}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const ai = await aisRepo(db).create(cid, {
      name: 'desk',
      init_prompt: 'You answer questions about the shop.',
      engine_model: 'openai.gpt-test',
      engine_url: opts.engineUrl ?? llm.url,
      tool_names: ['all'],
      parameter: { stt_phrases: PHRASES },
      vad_config: { stop_secs: 0.5 },
    });
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([
        { type: 'answer' },
        opts.middle
          ? (opts.middle as never)
          : opts.task
            ? { type: 'ai_task', option: { ai_id: ai.id } }
            : { type: 'ai_talk', option: { assistance_type: 'ai', assistance_id: ai.id, duration: opts.duration ?? 40 } },
        ...((opts.after as never[]) ?? [{ type: 'hangup' }]),
      ]),
    } as never);
    const number = `+8991100${String(++numberSeq).padStart(5, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    llm.options.respond = respond;
    return { db, cid, ai, number };
  }

  async function runCall(number: string, plays: { atMs: number; pcap: string }[], sink: TimedSink) {
    const scenario = aiCallerScenario(`${number}@127.0.0.1:${p.sipPort}`, sink.port, plays);
    return sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '60s'], { killAfterMs: 70_000 }).done;
  }

  it('hears a spoken question and answers it: recognised text to the LLM, the answer spoken back, an aimessage per turn', async () => {
    const answer = 'We are open from nine in the morning until six in the evening. Thank you for calling.';
    const { db, cid, number } = await setUp((req) => {
      if (req.messages.at(-1)?.role === 'tool') return { text: '' };
      return lastUser(req) ? { text: answer, tool_calls: [{ name: 'stop_service', arguments: {} }] } : { text: '' };
    });
    const sink = await TimedSink.open();
    try {
      const t0 = performance.now();
      const r = await runCall(number, [{ atMs: 1000, pcap: q1.file }], sink);
      expect(r.code, r.errors + r.messages).to.equal(0);
      // nothing is played before the question (no greeting), so speech on the sink is the answer
      const voiced = sink.voicedTimes();
      expect(voiced.length, 'voiced packets from the agent').to.be.greaterThan(100);
      expect(voiced[0]! - t0).to.be.greaterThan(1000 + q1.ms);
    } finally {
      sink.close();
    }
    const call = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 10_000, 'call hangup');
    const aicall = await until(async () => (await db('aicalls').where({ customer_id: cid, status: 'terminated' }))[0], 10_000, 'aicall terminated');
    expect(aicall).to.include({ reference_type: 'call', reference_id: call.id, assistance_type: 'ai' });
    const msgs = await db('aimessages').where({ aicall_id: aicall.id }).orderBy('tm_create');
    const user = msgs.find((m: { role: string }) => m.role === 'user');
    expect(user!.direction).to.equal('incoming');
    expect(PHRASES).to.include(user!.content);
    const said = msgs.find((m: { role: string; content: string }) => m.role === 'assistant' && m.content);
    expect(said).to.include({ content: answer, direction: 'outgoing' });
    expect(llm.requests.some((q) => lastUser(q) === user!.content)).to.equal(true);
    const types = (await eventsFor(p.redis, aicall.id)).map((e) => e.event_type);
    expect(types).to.include.members(['aicall_status_initializing', 'aicall_status_progressing', 'aimessage_created', 'aicall_status_terminated']);
    // the flow went on after ai_talk (stop_service) to its hangup
    expect(call.hangup_by).to.equal('local');
  });

  it('traced (OTLP on): each caller turn is an "ai turn" span under the ai_talk action, with its STT wait and LLM first token', async () => {
    const otlp = await OtlpReceiver.start();
    const tracing = startTracing('ai-test', { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '100' })!;
    try {
      const { number } = await setUp((req) => (lastUser(req) ? { text: 'We open at nine. Goodbye.', tool_calls: [{ name: 'stop_service', arguments: {} }] } : { text: '' }));
      const sink = await TimedSink.open();
      try {
        const r = await runCall(number, [{ atMs: 1000, pcap: q1.file }], sink);
        expect(r.code, r.errors + r.messages).to.equal(0);
      } finally {
        sink.close();
      }
      const turn = await until(
        async () => {
          await tracing.flush();
          const t = otlp.spans.find((x) => x.name === 'ai turn' && x.attributes['openvoice.ai.turn_outcome'] === 'answered');
          // the call's own span ends with the call
          return t && otlp.spans.some((x) => x.name === 'call' && x.traceId === t.traceId) ? t : null;
        },
        20_000,
        'an answered ai turn span in the trace of its call',
      );
      const action = otlp.spans.find((x) => x.spanId === turn.parentSpanId);
      expect(action?.name, 'the turn is a child of the ai_talk action').to.equal('action ai_talk');
      for (const k of ['openvoice.ai.stt_wait_ms', 'openvoice.ai.llm_first_token_ms', 'openvoice.ai.first_sentence_ms']) expect(turn.attributes[k], k).to.be.a('number').and.at.least(0);
      expect(turn.attributes['openvoice.ai.first_sentence_ms'] as number).to.be.at.least(turn.attributes['openvoice.ai.llm_first_token_ms'] as number);
    } finally {
      await tracing.shutdown();
      await otlp.close();
    }
  });

  it('a tool call hangs up the call (stop_flow) long before the duration cap', async () => {
    const { db, cid, number } = await setUp((req) => (lastUser(req) ? { text: 'Goodbye.', tool_calls: [{ name: 'stop_flow', arguments: {} }] } : { text: '' }), {
      after: [{ type: 'talk', option: { text: 'this must never be said', language: 'en-US' } }, { type: 'hangup' }],
      duration: 60,
    });
    const sink = await TimedSink.open();
    const started = Date.now();
    try {
      const r = await runCall(number, [{ atMs: 800, pcap: q1.file }], sink);
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      sink.close();
    }
    expect(Date.now() - started).to.be.lessThan(40_000);
    const call = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 10_000, 'call hangup');
    expect(call.hangup_by).to.equal('local');
    const af = await endedActiveflow(call.activeflow_id);
    const executed = (af.executed_actions as { type: string }[]).map((a) => a.type);
    expect(executed).to.not.include('talk');
    const aicall = (await db('aicalls').where({ customer_id: cid }))[0];
    expect(await db('aimessages').where({ aicall_id: aicall.id, role: 'user' })).to.have.length(1);
    const tool = await db('aimessages').where({ aicall_id: aicall.id, role: 'tool' }).first();
    expect(tool!.content).to.include('call will end');
    const asked = await db('aimessages').where({ aicall_id: aicall.id, role: 'assistant' }).first();
    expect((asked!.tool_calls as { function: { name: string } }[])[0]!.function.name).to.equal('stop_flow');
  });

  it("barge-in: the caller's words over the agent stop its speech (before the LLM has answered them)", async () => {
    const long = Array.from({ length: 12 }, (_, i) => `This is sentence number ${i + 1} of a very long answer about our opening hours.`).join(' ');
    let turns = 0;
    const { db, cid, number } = await setUp((req) => {
      if (!lastUser(req) || req.messages.at(-1)?.role === 'tool') return { text: '' };
      turns++;
      // first question: a long answer; the interruption: hang up without a word
      return turns === 1 ? { text: long } : { tool_calls: [{ name: 'stop_flow', arguments: {} }] };
    });
    // the cut comes with the recognised words (docs/ai.md "Turn-taking"), the hang-up only once the
    // LLM has answered them: a slow LLM keeps the two apart
    llm.options.firstChunkDelayMs = 1000;
    const sink = await TimedSink.open();
    try {
      const r = await runCall(
        number,
        [
          { atMs: 800, pcap: q1.file },
          { atMs: 800 + q1.ms + 6000, pcap: q2.file },
        ],
        sink,
      );
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      sink.close();
      llm.options.firstChunkDelayMs = 0;
    }
    const voiced = sink.voicedTimes();
    expect(voiced.length, 'the agent spoke').to.be.greaterThan(50);
    const spokenMs = voiced.at(-1)! - voiced[0]!;
    // the whole answer takes well over 40 s of speech; it was cut a few seconds in
    expect(spokenMs, 'agent speech span').to.be.lessThan(12_000);
    const last = sink.packets.at(-1)!.at;
    expect(last - voiced.at(-1)!, 'silence between the cut and the hangup').to.be.greaterThan(300);
    const aicall = (await db('aicalls').where({ customer_id: cid }))[0];
    const users = await db('aimessages').where({ aicall_id: aicall.id, role: 'user' });
    expect(users).to.have.length(2);
    const call = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 10_000, 'call hangup');
    expect(call.hangup_by).to.equal('local');
  });

  it('ai_task (no audio, deprecated ai_id): the AI sets flow variables through its tools and its answer lands in svc.ai_task.result', async () => {
    const { db, cid, number } = await setUp(
      (req) => (req.messages.at(-1)?.role === 'tool' ? { text: 'Intent recorded.' } : { tool_calls: [{ name: 'set_variables', arguments: { variables: { intent: 'cancel', 'svc.call.id': 'x' } } }] }),
      { task: true },
    );
    const sink = await TimedSink.open();
    try {
      const r = await runCall(number, [], sink);
      const c = (await db('calls').where({ customer_id: cid }))[0];
      const a = c && (await db('activeflows').where({ id: c.activeflow_id }).first());
      expect(r.code, JSON.stringify(a)).to.equal(0);
    } finally {
      sink.close();
    }
    const call = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 10_000, 'call hangup');
    const af = await endedActiveflow(call.activeflow_id);
    expect(af.error).to.equal('');
    expect(af.variables).to.include({ intent: 'cancel', 'svc.ai_task.result': 'Intent recorded.' });
    expect(af.variables['svc.call.id']).to.equal(call.id);
    const aicall = (await db('aicalls').where({ customer_id: cid }))[0];
    expect(aicall).to.include({ reference_type: 'task', status: 'terminated' });
    const sent = llm.requests.at(-2)!;
    expect(sent.tools!.map((t) => t.function.name)).to.include.members(['set_variables', 'stop_flow']);
  });

  /** A caller that says nothing calls `number`; the customer's call row once hung up. */
  async function quietCall(number: string, db: Awaited<ReturnType<typeof testDb>>, cid: string) {
    const sink = await TimedSink.open();
    try {
      const r = await runCall(number, [], sink);
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      sink.close();
    }
    return until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 10_000, 'call hangup');
  }

  it('ai_summary starts a summary of the call and the flow moves on; without transcripts it ends done and empty', async () => {
    process.env.AI_LLM_BASE_URL = llm.url;
    try {
      const { db, cid, number } = await setUp(() => ({ text: 'A summary.' }), { middle: { type: 'ai_summary', option: { language: 'en-US' } } });
      const call = await quietCall(number, db, cid);
      const s = await until(async () => (await db('summaries').where({ customer_id: cid, status: 'done' }))[0], 10_000, 'summary done');
      expect(s).to.include({ reference_type: 'call', reference_id: call.id, activeflow_id: call.activeflow_id, content: '' });
      expect(s.status_message).to.include('no transcript');
      const af = await db('activeflows').where({ id: call.activeflow_id }).first();
      expect(af!.variables['svc.ai_summary.id']).to.equal(s.id);
      expect((await eventsFor(p.redis, s.id)).map((e) => e.event_type)).to.include.members(['summary_created', 'summary_updated']);
    } finally {
      delete process.env.AI_LLM_BASE_URL;
    }
  });

  it('connect_call: the AI transfers the caller, who is bridged to the destination', async () => {
    const uasPort = await freePort();
    const { db, cid, number } = await setUp((req) =>
      lastUser(req) && req.messages.at(-1)?.role !== 'tool'
        ? { text: 'Connecting you now.', tool_calls: [{ name: 'connect_call', arguments: { destinations: [{ type: 'sip', target: `agent@127.0.0.1:${uasPort}` }] } }] }
        : { text: '' },
    );
    const uas = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(uasPort), '-m', '1', '-timeout', '50s'], { killAfterMs: 60_000 });
    const sink = await TimedSink.open();
    try {
      const caller = runCall(number, [{ atMs: 800, pcap: q1.file }], sink);
      // once the destination leg is up, end the caller's call: the bridge ends both legs
      const leg = await until(async () => (await db('calls').where({ customer_id: cid, direction: 'outgoing', status: 'progressing' }))[0], 40_000, 'destination answered');
      const master = (await db('calls').where({ customer_id: cid, direction: 'incoming' }))[0];
      expect(leg.destination).to.deep.include({ type: 'sip' });
      await (p.app.calls.get(master.id) as unknown as { hangup(r: string): Promise<void> }).hangup('normal');
      const [r, u] = await Promise.all([caller, uas.done]);
      expect(r.code, r.errors + r.messages).to.equal(0);
      expect(u.code, u.errors + u.messages).to.equal(0);
    } finally {
      sink.close();
    }
    const aicall = (await db('aicalls').where({ customer_id: cid }))[0];
    expect(aicall.status).to.equal('terminated');
    const tool = await db('aimessages').where({ aicall_id: aicall.id, role: 'tool' }).first();
    expect(tool!.content).to.equal('connecting');
  });

  it('without an LLM endpoint ai_talk ends the flow with a clear error', async () => {
    const { db, cid, number } = await setUp(() => ({ text: 'unused' }), { engineUrl: '' });
    const call = await quietCall(number, db, cid);
    const af = await endedActiveflow(call.activeflow_id);
    expect(af.error).to.include('no LLM endpoint is configured');
    expect(await db('aicalls').where({ customer_id: cid })).to.have.length(0);
  });
});
