// Turn-taking calls on loopback for the barge-in and preemption tests: an AI with the Deepgram
// recogniser (its phrase stand-in, testkit/speech/deepgram-phrases.ts) and a local voice, a number
// whose flow runs ai_talk with it, and sipp calling that number with an echo-phone
// (testkit/ai/echo-phone.ts, no echo) as its RTP side, saying espeak-ng utterances at given times.
// What comes back: when each utterance started and ended at the phone, when the agent's voiced
// packets arrived, and the conversation's aimessages.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { aisRepo } from '../../core/repos/ais';
import { repos } from '../../core/repos';
import { testDb, truncateAll } from '../db';
import { killAllSipp, sipp, startPlatform, until, type Platform } from '../media-app/harness';
import { startLlmServer, type LlmServer, type LlmServerOptions } from '../llm-server';
import { FakeDeepgram } from '../speech/deepgram-server';
import { PhraseRecogniser } from '../speech/phrase-recogniser';
import { freePort, sippMediaPort } from '../ports';
import { aiCallerScenario } from './audio';
import { EchoPhone, speechSamples } from './echo-phone';
import { loopbackTrunk } from '../trunks';
import { type PhraseSessionOptions } from '../speech/deepgram-phrases';

export interface Utterance {
  /** what the caller says (espeak-ng) */
  text: string;
  /** when, ms after the call's first packet */
  atMs: number;
  /** espeak-ng's voice: the interjections in another voice than the recogniser's templates */
  voice?: { speed?: number; pitch?: number };
}

export interface SaidUtterance extends Utterance {
  startedAt: number | null;
  endedAt: number | null;
}

export interface AiMessage {
  role: string;
  content: string;
  metadata: { latency?: Record<string, unknown> };
}

export interface TurnCall {
  said: SaidUtterance[];
  /** arrival times (performance.now) of the agent's voiced packets */
  voiced: number[];
  messages: AiMessage[];
}

/**
 * One call of `seconds` to an AI with `parameter` (merged over the Deepgram settings) that says
 * `script`. `numberPrefix`: digits no other test file uses (numbers are unique per database). `before`:
 * flow actions run between the answer and ai_talk.
 */
export async function turnCall(
  p: Platform,
  o: { llmUrl: string; numberPrefix: string; seconds: number; script: Utterance[]; parameter?: Record<string, unknown>; before?: Record<string, unknown>[] },
): Promise<TurnCall> {
  const db = await testDb();
  const tag = `${Date.now()}${Math.floor(Math.random() * 1e6)}`;
  const cid = (await repos(db).customers.create({ email: `tc${tag}@example.test`, status: 'active', name: 'turns' })).id;
  await trunksRepo(db).create(cid, `trtc${tag}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  const ai = await aisRepo(db).create(cid, {
    name: 'turns',
    engine_model: 'openai.turns',
    engine_url: o.llmUrl,
    stt_type: 'deepgram',
    parameter: { ...o.parameter },
    vad_config: { engine: 'silero' },
  });
  const flow = await flowsRepo(db).create({
    customer_id: cid,
    actions: parseActions([{ type: 'answer' }, ...(o.before ?? []), { type: 'ai_talk', option: { assistance_type: 'ai', assistance_id: ai.id, duration: o.seconds } }, { type: 'hangup' }]),
  });
  const number = `+${o.numberPrefix}${tag.slice(-6)}`;
  await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
  const phone = await EchoPhone.open({ echoGain: 0 });
  const said: SaidUtterance[] = o.script.map((u) => ({ ...u, startedAt: null, endedAt: null }));
  const samples = o.script.map((u) => speechSamples(u.text, u.voice));
  const timers = said.map((u, i) =>
    setTimeout(() => {
      const s = phone.say(samples[i]!);
      const poll = setInterval(() => {
        u.startedAt = s.startedAt();
        u.endedAt = s.endedAt();
        if (u.endedAt !== null) clearInterval(poll);
      }, 20);
      timers.push(poll);
    }, u.atMs),
  );
  try {
    const r = await sipp(
      aiCallerScenario(`${number}@127.0.0.1:${p.sipPort}`, phone.port, [], o.seconds * 1000 + 20_000),
      [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mp', String(await sippMediaPort()), '-cp', String(await freePort()), '-timeout', `${o.seconds + 30}s`],
      { killAfterMs: o.seconds * 1000 + 40_000 },
    ).done;
    expect(r.code, r.errors + r.messages).to.equal(0);
  } finally {
    timers.forEach((t) => clearTimeout(t));
    phone.close();
  }
  const aicall = await until(async () => (await db('aicalls').where({ customer_id: cid }))[0] as { id: string } | undefined, 5000, 'the aicall');
  // the last reply's latency is written once its first audio went out: the call has ended by now
  await new Promise((r) => setTimeout(r, 500));
  const messages = (await db('aimessages').where({ aicall_id: aicall.id }).orderBy('tm_create')) as AiMessage[];
  return { said, voiced: phone.voicedTimes(), messages };
}

export interface DeepgramTurnStack {
  p: Platform;
  llm: LlmServer;
  dg: FakeDeepgram;
}

/**
 * A mocha suite's platform with the Deepgram phrase stand-in (100 ms latency) as every AI's
 * recogniser and an LLM stand-in, started before its tests and closed after; `ready` gets them.
 */
type AiFields = Parameters<ReturnType<typeof aisRepo>['create']>[1];

/**
 * A customer (`tag` in its email and trunk) with a loopback trunk, an AI on the LLM stand-in at `llmUrl`
 * (`ai` over a plain 'desk' on openai.gpt-test with every tool), a flow answer → ai_talk (`duration` s)
 * → hangup, and `number` calling it.
 */
export async function aiTalkNumber(o: {
  llmUrl: string;
  tag: string;
  number: string;
  duration: number;
  ai: Partial<AiFields>;
}): Promise<{ db: Awaited<ReturnType<typeof testDb>>; cid: string; number: string }> {
  const db = await testDb();
  const cid = (await repos(db).customers.create({ email: `${o.tag}${Date.now()}${Math.random()}@example.test`, status: 'active', name: o.tag })).id;
  await loopbackTrunk(db, cid, `tr${o.tag}${Date.now()}${o.number.slice(-5)}`);
  const ai = await aisRepo(db).create(cid, { name: 'desk', init_prompt: 'You answer questions.', engine_model: 'openai.gpt-test', engine_url: o.llmUrl, tool_names: ['all'], ...o.ai } as AiFields);
  const flow = await flowsRepo(db).create({
    customer_id: cid,
    actions: parseActions([{ type: 'answer' }, { type: 'ai_talk', option: { assistance_type: 'ai', assistance_id: ai.id, duration: o.duration } }, { type: 'hangup' }]),
  } as never);
  await numbersRepo(db).create({ customer_id: cid, number: o.number, type: 'virtual', call_flow_id: flow.id });
  return { db, cid, number: o.number };
}

export interface LiveAiStack {
  p: Platform;
  llm: LlmServer;
  /** a scratch folder for the suite's pcaps, removed after it */
  dir: string;
}

/**
 * Mocha hooks of the live ai_talk suites: a scratch folder (named from `prefix`), the LLM stand-in
 * (`llmOptions`) and a platform that takes sipp's MD5 digest and may reach the LLM on loopback; `ready`
 * receives them once up, before the suite's own hooks.
 */
export function useLiveAiStack(prefix: string, llmOptions: LlmServerOptions, ready: (s: LiveAiStack) => void): void {
  let s: Partial<LiveAiStack> = {};
  before(async () => {
    await truncateAll();
    s.dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    s.llm = await startLlmServer(llmOptions);
    s.p = await startPlatform({ SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256', EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
    ready(s as LiveAiStack);
  });
  after(async () => {
    killAllSipp();
    await s.p?.close();
    await s.llm?.close();
    if (s.dir) fs.rmSync(s.dir, { recursive: true, force: true });
    s = {};
  });
}

/**
 * Mocha hooks of the suites on the Deepgram stand-in: it hears `phrases` (a list: a PhraseRecogniser
 * answering after 100 ms; or its own options), the LLM stand-in and a platform that reaches both.
 */
export function useDeepgramTurnStack(key: string, phrases: string[] | PhraseSessionOptions | undefined, llmOptions: LlmServerOptions, ready: (s: DeepgramTurnStack) => void): void {
  let s: Partial<DeepgramTurnStack> = {};
  before(async () => {
    await truncateAll();
    const dg = await new FakeDeepgram(key, Array.isArray(phrases) ? { recogniser: new PhraseRecogniser(phrases), latencyMs: 100 } : phrases).listen();
    s.dg = dg;
    // the recogniser reads its settings from the environment when a stream is made
    process.env.DEEPGRAM_API_KEY = key;
    process.env.DEEPGRAM_URL = dg.url;
    process.env.EGRESS_ALLOW_CIDRS = '127.0.0.0/8';
    s.llm = await startLlmServer(llmOptions);
    s.p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', DEEPGRAM_API_KEY: key, DEEPGRAM_URL: dg.url });
    ready(s as DeepgramTurnStack);
  });
  after(async () => {
    killAllSipp();
    await s.p?.close();
    await s.llm?.close();
    await s.dg?.close();
    s = {};
    delete process.env.DEEPGRAM_API_KEY;
    delete process.env.DEEPGRAM_URL;
    delete process.env.EGRESS_ALLOW_CIDRS;
  });
}
