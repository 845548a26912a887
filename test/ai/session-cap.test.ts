// ai_talk's session cap held past over a real call (issue 52's timer table: "voice session cap
// (maxDurationMs), media-app/ai/voice.ts"). The cap is ai_talk's `duration` (whole seconds, the
// spec's "maximum session length"): 3 s here. The agent's greeting is long (the LLM stand-in answers
// the opening with a dozen sentences, spoken by espeak-ng); the caller asks a question after the cap
// and stays on while the flow goes on (docs/ai.md: "duration caps the session; the flow then
// continues") to a variable_set and a 6 s sleep (the call held to 3× the cap) and hangs up. The session
// ends at the cap: the greeting is cut there, the aicall is terminated then, once; nothing of the
// session acts after it (no LLM request for the late question, no event, no audio), and the flow's
// next actions run once each.
import path from 'node:path';
import { expect } from 'chai';
import { endedActiveflow } from '../../testkit/call-ends';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { aisRepo } from '../../core/repos/ais';
import { repos } from '../../core/repos';
import { testDb } from '../../testkit/db';
import { type LlmServer } from '../../testkit/llm-server';
import { eventsFor, sipp, until, type Platform } from '../../testkit/media-app/harness';
import { aiCallerScenario, speechPcap, TimedSink } from '../../testkit/ai/audio';
import { useLiveAiStack } from '../../testkit/ai/turn-calls';
import { type RealtimeScript, type RealtimeServer } from '../../testkit/ai/realtime-server';
import { useRealtimeStack } from '../../testkit/ai/s2s-calls';

const CAP_S = 3;
const AFTER_MS = 6000;
const LONG = Array.from({ length: 12 }, (_, i) => `This is sentence number ${i + 1} of a very long greeting about our opening hours.`).join(' ');

type Db = Awaited<ReturnType<typeof testDb>>;
let seq = 0;

/** A customer, the AI `ai`, the flow [answer, ai_talk capped at CAP_S, variable_set, sleep AFTER_MS, hangup] and its number. */
async function cappedFlow(ai: Record<string, unknown>): Promise<{ db: Db; cid: string; number: string }> {
  const db = await testDb();
  const cid = (await repos(db).customers.create({ email: `cap${Date.now()}${++seq}@example.test`, status: 'active', name: 'cap' })).id;
  await trunksRepo(db).create(cid, `trcap${Date.now()}${seq}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  const row = await aisRepo(db).create(cid, { name: 'desk', init_prompt: 'You answer questions about the shop.', tool_names: ['all'], vad_config: { stop_secs: 0.5 }, ...ai } as Parameters<
    ReturnType<typeof aisRepo>['create']
  >[1]);
  const flow = await flowsRepo(db).create({
    customer_id: cid,
    actions: parseActions([
      { type: 'answer' },
      { type: 'ai_talk', option: { assistance_type: 'ai', assistance_id: row.id, duration: CAP_S } },
      { type: 'variable_set', option: { key: 'after_cap', value: 'yes' } },
      { type: 'sleep', option: { duration: AFTER_MS } },
      { type: 'hangup' },
    ]),
  } as never);
  const number = `+89911009${String(seq).padStart(4, '0')}`;
  await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
  return { db, cid, number };
}

/**
 * sipp calls `number`, says the question after the cap and stays until the platform hangs up; then the
 * checks both engines share: the session ended at the cap (its greeting cut there), terminated once with
 * nothing after, the flow went on. Returns when the session ended (ms since the epoch).
 */
async function holdPastCap(p: Platform, f: { db: Db; cid: string; number: string }, question: string): Promise<number> {
  const sink = await TimedSink.open();
  const scenario = aiCallerScenario(`${f.number}@127.0.0.1:${p.sipPort}`, sink.port, [{ atMs: CAP_S * 1000 + 1500, pcap: question }]);
  let byeAt = 0;
  let voiced: number[];
  try {
    const r = await sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '60s'], { killAfterMs: 70_000 }).done;
    byeAt = Date.now();
    expect(r.code, r.errors + r.messages).to.equal(0);
    voiced = sink.voicedTimes();
  } finally {
    sink.close();
  }
  const { db, cid } = f;
  const call = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 10_000, 'call hangup');
  const aicall = await until(async () => (await db('aicalls').where({ customer_id: cid, status: 'terminated' }))[0], 10_000, 'aicall terminated');
  const ended = new Date(aicall.tm_end!).getTime();
  // the session ended at its cap, not before, not with the call
  expect(ended - new Date(aicall.tm_create).getTime(), 'session length').to.be.within(CAP_S * 1000, CAP_S * 1000 + 1500);
  // the greeting (far longer than the cap) was heard and cut at the cap
  expect(voiced.length, 'greeting packets heard').to.be.greaterThan(25);
  expect(voiced.at(-1)! - voiced[0]!, 'greeting heard for at most the cap').to.be.below(CAP_S * 1000 + 300);
  // the flow went on: its next actions ran once each, the call held past the cap by the sleep and ended by the flow
  expect(byeAt - ended, 'the hangup after the sleep').to.be.at.least(AFTER_MS - 500);
  expect(call.hangup_by).to.equal('local');
  const af = await endedActiveflow(call.activeflow_id);
  expect(af.variables).to.include({ after_cap: 'yes' });
  expect((af.executed_actions as { type: string }[]).map((a) => a.type)).to.deep.equal(['answer', 'ai_talk', 'variable_set', 'sleep', 'hangup']);
  // nothing of the session after its end: no event after terminated, no message
  const events = await eventsFor(p.redis, aicall.id);
  expect(
    events.filter((e) => e.event_type === 'aicall_status_terminated'),
    'terminated once',
  ).to.have.length(1);
  expect(events.at(-1)!.event_type, 'the last event of the aicall').to.equal('aicall_status_terminated');
  const late = await db('aimessages').where({ aicall_id: aicall.id }).where('tm_create', '>', new Date(ended));
  expect(late, 'aimessages after the end').to.deep.equal([]);
  return ended;
}

describe('ai_talk held past its session cap (duration): the voice loop', function () {
  this.timeout(120_000);
  let p: Platform;
  let llm: LlmServer;
  let dir: string;
  const q = { file: '' };
  useLiveAiStack('ai-cap-', {}, (s) => ({ p, llm, dir } = s));
  before(() => {
    q.file = path.join(dir, 'q.pcap');
    speechPcap('What are your opening hours?', q.file);
  });

  it('ends the session at the cap once (greeting cut, aicall terminated), nothing of it after, and the flow goes on', async () => {
    const f = await cappedFlow({ engine_model: 'openai.gpt-test', engine_url: llm.url, parameter: { stt_phrases: ['what are your opening hours'] } });
    const asked: number[] = [];
    llm.options.respond = (req) => {
      asked.push(Date.now());
      // the opening (no caller words yet) is the long greeting; a caller's question would get a short answer
      return req.messages.some((m) => m.role === 'user' && m.content) ? { text: 'We open at nine.' } : { text: LONG };
    };
    const ended = await holdPastCap(p, f, q.file);
    // the late question never reached the LLM
    expect(asked.length, 'LLM requests (the greeting only)').to.equal(1);
    expect(asked[0]!).to.be.below(ended);
  });
});

describe('ai_talk held past its session cap (duration): a speech-to-speech model', function () {
  this.timeout(120_000);
  const KEY = 'sk-cap-realtime-key';
  let p: Platform;
  let rt: RealtimeServer;
  let question = '';
  // a greeting of 20 s, far past the cap; the caller's question would get an answer
  const script: RealtimeScript = {
    greeting: { say: 'A long greeting.', ms: 20_000, hz: 440 },
    turn: () => ({ heard: 'opening hours', reply: { say: 'At nine.', ms: 1000, hz: 660 } }),
    afterCall: () => null,
  };
  useRealtimeStack(
    'ai-cap-rt-',
    KEY,
    script,
    () => ({}),
    (s) => {
      ({ p, rt } = s);
      question = path.join(s.dir, 'q.pcap');
    },
  );
  before(() => speechPcap('What are your opening hours?', question));

  it('ends the session at the cap once, closes the vendor connection then, and the flow goes on', async () => {
    const f = await cappedFlow({ engine_model: 'openai-realtime.gpt-realtime', engine_url: rt.url, engine_key: KEY, tts_voice_id: 'marin' });
    const ended = await holdPastCap(p, f, question);
    // the caller's audio went to the vendor only while the session lived (the call lasted 3× longer)
    expect(rt.appendedMs, 'caller audio streamed to the vendor').to.be.within(1000, CAP_S * 1000 + 500);
    expect(rt.speechStartedAt, 'the question after the cap never reached the vendor').to.deep.equal([]);
    expect(
      rt.received.filter((e) => e.at > ended + 200).map((e) => e.type),
      'client events after the end',
    ).to.deep.equal([]);
  });
});
