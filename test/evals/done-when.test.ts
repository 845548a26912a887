// Issue 56's "Done when", end to end in one run (docs/evals.md): one scenario against an ai_talk agent on
// the OpenAI-compatible stand-in (ask a question after the greeting, talk over the agent's answer, press
// a digit, hang up), run over versions 1 and 2 of the AI, each call a simulated caller over SIP and RTP
// through the platform's edge. Version 2's instructions were changed so that its answer (as long, as
// talkable-over) never says when the shop opens. The result shows each call's two-sided transcript in
// order, every turn's latency stages, the barge-in measured at the caller's ear, the judge's verdict and
// reason (the judge stand-in reads the transcript it is sent); version 1 passes, version 2 fails, and
// the compare block names the checks that moved (the answer's phrase and the judge), not those that held
// (latency, barge-in).
import { expect } from 'chai';
import request from 'supertest';
import { egressPolicyFor } from '../../core/net';
import { aisRepo } from '../../core/repos/ais';
import { JUDGE_PROMPT } from '../../evals/checks/judge';
import type { Fixture, TestApp } from '../../testkit/api';
import { lastUser, type LlmReply, type LlmRequest, type LlmServer } from '../../testkit/llm-server';
import type { Platform } from '../../testkit/media-app/harness';
import { bufferBody } from '../../testkit/buffer-body';
import { aiTalkActions, authed, evalRunEnded, numberWithFlow, postEvalRun, postEvalScenario, standInAi, startEvalWorker, useLiveEvals } from '../../testkit/evals/live';
import type { EvalCallResult } from '../../core/evals/schema';

const GREETING = 'Hello, corner bakery.';
const ASK = 'What are your opening hours?';
const TALK = 'Do you deliver to my street?';
const PHRASE = 'open from nine';
/** Version 1's answer: the hours first, then sentences enough to be talked over. */
const ANSWER =
  'We are open from nine in the morning until six in the evening. On Saturdays we open at eight and close at two in the afternoon. On Sundays the shop is closed, but you can still order cakes on our website.';
/** Version 2's: as long, and never says when the shop opens. */
const VAGUE =
  'Thank you so much for asking about that today. Our friendly staff will be very happy to help you with any question at all. Please come and visit the shop, or have a look at our website for all the details.';
const DELIVERY = 'Yes, we deliver to every street in the town.';
const RUBRIC = 'The agent tells the caller when the shop opens.';
/** The talk-over's after_agent_ms: it starts this long after the caller first heard the answer. */
const AFTER_AGENT_MS = 2000;

/** The judge's verdict read from the transcript it was sent: passed when an agent line says the phrase. */
function judge(transcript: string): LlmReply {
  const said = transcript.split('\n').some((l) => /\] agent: /.test(l) && l.toLowerCase().includes(PHRASE));
  const verdict = said ? { passed: true, reason: `The agent said the shop is ${PHRASE}.` } : { passed: false, reason: 'The agent never said when the shop opens.' };
  return { text: JSON.stringify(verdict) };
}

/** The stand-in: the judge by its prompt; the agent greets, answers the question by its version's instructions, answers the talk-over. */
function respond(req: LlmRequest): LlmReply {
  const system = req.messages[0]?.content ?? '';
  if (system === JUDGE_PROMPT) return judge(req.messages[1]?.content ?? '');
  const heard = lastUser(req).toLowerCase();
  if (!heard) return { text: GREETING };
  if (heard.includes('deliver')) return { text: DELIVERY };
  return { text: system.includes('VAGUE') ? VAGUE : ANSWER };
}

const CHECKS = [
  { type: 'transcript_contains', role: 'agent', text: PHRASE },
  { type: 'latency_under', ms: 6000 },
  { type: 'barge_in_within', ms: 1500 },
  { type: 'judge', rubric: RUBRIC },
];

/** A WAV's samples (16-bit mono after its 44-byte header). */
function samplesOf(wav: Buffer): Int16Array {
  const copy = Buffer.from(wav.subarray(44));
  return new Int16Array(copy.buffer, copy.byteOffset, copy.length / 2);
}
/** The power of `hz` in `s` (Goertzel), over the power of `s`: near 0.5 for a tone that is half of the signal's power. */
function share(s: Int16Array, hz: number): number {
  const k = 2 * Math.cos((2 * Math.PI * hz) / 8000);
  let [a, b, total] = [0, 0, 0];
  for (const v of s) {
    [a, b] = [v + k * a - b, a];
    total += v * v;
  }
  return total ? (a * a + b * b - k * a * b) / ((total * s.length) / 2) : 0;
}
/** The ms (20 ms windows, from the answer) where `s` carries digit 1: 697 Hz and 1209 Hz, each a good share of it. */
const digitOneAt = (s: Int16Array): number[] =>
  Array.from({ length: Math.floor(s.length / 160) }, (_, w) => w).flatMap((w) => {
    const win = s.subarray(w * 160, w * 160 + 160);
    return share(win, 697) > 0.3 && share(win, 1209) > 0.3 ? [w * 20] : [];
  });

type Moved = { index: number; type: string; moved: string; from: { passed: number }; to: { passed: number } };
type Run = {
  status: string;
  error: string;
  results: EvalCallResult[];
  by_version: { version: number; calls: number; pass_rate: number | null; checks: { index: number; type: string; passed: number; of: number }[] }[];
  compare: { from_version: number; to_version: number; checks: Moved[]; latency: unknown[] } | null;
};

describe("issue 56's done-when: ask, talk over the answer, a digit, hang up; two versions side by side over SIP", function () {
  this.timeout(120_000);
  let p: Platform;
  let llm: LlmServer;
  let t: TestApp;
  let f: Fixture;
  const NUMBER = '+899574000001';
  const api = useLiveEvals('evals-done-', respond, (s) => ({ p, llm, t, f } = s));
  let run: Run;
  const of = (v: number) => run.results.find((x) => x.ai_version === v)!;
  const dump = (v: number) => JSON.stringify(of(v));

  before(async () => {
    const ai = await standInAi(api, llm.url, { parameter: { stt_phrases: [ASK, TALK].map((s) => s.toLowerCase().replace(/[^a-z ]/g, '')) } });
    // version 2: its instructions changed, on purpose for the worse
    await aisRepo(t.ctx.db).update(f.customer.id, ai.id, { init_prompt: 'You answer questions about the shop. VAGUE' });
    await numberWithFlow(api, NUMBER, aiTalkActions(ai.id));
    const scenario = {
      name: 'ask, talk over the answer, a digit, hang up',
      target: { type: 'number', target: NUMBER },
      caller: {
        // the greeting heard out; the talk-over lands 2 s into the answer (the next utterance once the question is said)
        turns: [{ wait_ms: 3500 }, { say: ASK }, { say: TALK, after_agent_ms: AFTER_AGENT_MS }, { wait_ms: 5000 }, { dtmf: '1' }, { wait_ms: 1000 }, { hangup: true }],
      },
      checks: CHECKS,
    };
    const scenarioId = await postEvalScenario(api, scenario);
    const runId = await postEvalRun(api, { scenario_ids: [scenarioId], ai_id: ai.id, versions: [1, 2], calls: 1, concurrency: 2 });
    // the judge reaches the customer's vendor (the stand-in on loopback) through this policy
    api.worker = startEvalWorker(api, p, { config: { EVALS_AGENT_WAIT_MS: '10000' }, env: {}, egress: egressPolicyFor({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }) });
    run = await evalRunEnded<Run>(api, runId, 90_000);
  });

  it('the run finished with one call per version, each hanging up after its digit (its whole script played)', () => {
    expect(run.status, run.error).to.equal('finished');
    expect(run.results.map((x) => x.ai_version).sort()).to.deep.equal([1, 2]);
    for (const v of [1, 2]) {
      expect(of(v).error, dump(v)).to.equal(undefined);
      expect(of(v).ended_by, dump(v)).to.equal('caller');
    }
  });

  it("each call's digit went out after the talk-over's reply and its wait, before the hang-up, and reached the platform", async () => {
    for (const v of [1, 2]) {
      const r = of(v);
      const body = (await authed(api, request(t.app).get(r.audio!.caller_url)).buffer(true).parse(bufferBody).expect(200)).body as Buffer;
      const at = digitOneAt(samplesOf(body));
      // 100 ms of tone: five 20 ms windows, give or take the window edges
      expect(at.length, `${at}`).to.be.within(4, 6);
      expect(at.at(-1)! - at[0]!).to.be.at.most(100);
      // the talk-over said (about 2 s of speech), then 5 s of silence, then the digit
      const talk = r.transcript.find((l) => l.text === TALK)!.t_ms;
      expect(at[0]! - talk, dump(v)).to.be.within(5000, 9000);
      expect(at.at(-1)!).to.be.below(r.audio!.call_ms);
      // and the platform took it: the key held on the call's activeflow (a key pressed outside a digit gather)
      const flow = await t.ctx.db('activeflows').where({ reference_id: r.call_id }).first();
      expect(flow?.variables?.['svc.call.digits'], JSON.stringify(flow?.variables)).to.equal('1');
    }
  });

  it('each call has a two-sided transcript in order: greeting, question, answer, talk-over and its reply', () => {
    for (const [v, answer] of [
      [1, ANSWER],
      [2, VAGUE],
    ] as const) {
      const lines = of(v).transcript;
      const times = lines.map((l) => l.t_ms);
      expect(times, dump(v)).to.deep.equal([...times].sort((a, b) => a - b));
      for (const l of lines) expect(l.t_ms, dump(v)).to.be.a('number').and.at.least(0);
      expect(lines.filter((l) => l.role === 'caller').map((l) => l.text)).to.deep.equal([ASK, TALK]);
      expect(
        lines.filter((l) => l.role === 'agent').map((l) => l.text),
        dump(v),
      ).to.deep.equal([GREETING, answer, DELIVERY]);
      const at = (text: string) => lines.find((l) => l.text === text)!.t_ms;
      // the greeting was over before the question, the answer before the talk-over's reply
      expect(at(GREETING)).to.be.below(at(ASK));
      expect(at(ASK)).to.be.below(at(TALK));
      expect(at(answer)).to.be.below(at(DELIVERY));
    }
  });

  it("every turn has each latency stage measured (the greeting's caller-speech stages excepted), the answer cut", () => {
    for (const v of [1, 2]) {
      const turns = of(v).turns;
      expect(turns, dump(v)).to.have.length(3);
      for (const [i, turn] of turns.entries()) {
        const stages = ['latency_ms', 'llm_first_token_ms', 'tts_first_byte_ms', ...(i === 0 ? [] : ['end_of_turn_wait_ms', 'stt_final_ms'])];
        for (const s of stages)
          expect(turn[s], `${s} of turn ${i}: ${dump(v)}`)
            .to.be.a('number')
            .and.at.least(0);
      }
      expect(turns.map((x) => x.interrupted)).to.deep.equal([false, true, false]);
    }
  });

  it('the checks: version 1 passes all, with the barge-in measured and the judge’s reason; version 2 fails the phrase and the judge', () => {
    const barge = of(1).checks[2]!;
    expect(barge.passed, barge.evidence).to.equal(true);
    const m = /^talk-over at (\d+) ms \(the agent talking since (\d+) ms\): the agent stopped (\d+) ms later$/.exec(barge.evidence);
    expect(m, barge.evidence).to.not.equal(null);
    const [talkAt, since, stopped] = m!.slice(1).map(Number) as [number, number, number];
    // the talk-over is the caller's line, said 2 s into the answer as the caller heard it. The caller (evals/call.ts)
    // waits on a timer from the answer's first voiced packet, which is `since` (or later: the same utterance, read
    // from the same packets), and its line starts at its first packet sent after that timer: never sooner than
    // AFTER_AGENT_MS after `since` (but for rounding to whole ms), later by what a loaded machine makes its timers late. The
    // answer was still heard when it started (the evidence's "talking since"), and it came after the question.
    const lines = of(1).transcript;
    expect(talkAt).to.equal(lines.find((l) => l.text === TALK)!.t_ms);
    expect(since, 'the answer, heard after the question').to.be.above(lines.find((l) => l.text === ASK)!.t_ms);
    expect(talkAt - since, barge.evidence).to.be.at.least(AFTER_AGENT_MS - 20);
    // a ratio, not a window: late by as much again would be a talk-over scheduled from something else
    expect(talkAt - since, barge.evidence).to.be.below(2 * AFTER_AGENT_MS);
    expect(stopped).to.be.at.most(1500);

    expect(
      of(1).checks.map((c) => [c.type, c.passed]),
      dump(1),
    ).to.deep.equal(CHECKS.map((c) => [c.type, true]));
    expect(of(1).checks[3]).to.deep.equal({ type: 'judge', passed: true, evidence: `The agent said the shop is ${PHRASE}.` });
    expect(of(1).passed).to.equal(true);

    expect(
      of(2).checks.map((c) => [c.type, c.passed]),
      dump(2),
    ).to.deep.equal([
      ['transcript_contains', false],
      ['latency_under', true],
      ['barge_in_within', true],
      ['judge', false],
    ]);
    expect(of(2).checks[3]).to.deep.equal({ type: 'judge', passed: false, evidence: 'The agent never said when the shop opens.' });
    expect(of(2).passed).to.equal(false);

    // each judge got its call's transcript, the caller's talk-over in it
    const asked = llm.requests.filter((q) => q.messages[0]?.content === JUDGE_PROMPT).map((q) => q.messages[1]!.content ?? '');
    expect(asked).to.have.length(2);
    for (const a of asked) expect(a).to.contain(`caller: ${TALK}`).and.contain(RUBRIC);
  });

  it('side by side: the pass rates per version and exactly the checks that moved', () => {
    const [v1, v2] = run.by_version;
    expect([v1!.version, v1!.calls, v1!.pass_rate]).to.deep.equal([1, 1, 1]);
    expect([v2!.version, v2!.calls, v2!.pass_rate]).to.deep.equal([2, 1, 0]);
    expect(run.compare).to.include({ from_version: 1, to_version: 2 });
    const moved = run.compare!.checks.map((c) => [c.index, c.type, c.moved, c.from.passed, c.to.passed]);
    // what moved is what the two calls' verdicts say moved
    const differ = CHECKS.flatMap((c, i) => (of(1).checks[i]!.passed === of(2).checks[i]!.passed ? [] : [[i, c.type, 'worse', 1, 0]]));
    expect(moved).to.deep.equal(differ);
    expect(moved).to.deep.equal([
      [0, 'transcript_contains', 'worse', 1, 0],
      [3, 'judge', 'worse', 1, 0],
    ]);
  });
});
