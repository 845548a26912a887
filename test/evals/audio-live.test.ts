// Both tracks of a real eval call (docs/evals.md "Both tracks of a call"): a simulated caller asks an
// ai_talk agent on the OpenAI-compatible stand-in a question over SIP, waits for the answer, presses a
// digit and hangs up; the run's result names the two tracks and the API serves them. The caller's
// track has the caller's voice where its transcript line says it spoke (and its digit later), nothing
// while the agent talked; the agent's track has the agent's voice where the caller heard it (its
// recogniser's heard segments, timed on arrival) and nothing while the caller asked.
import { expect } from 'chai';
import request from 'supertest';
import type { TestApp } from '../../testkit/api';
import { lastUser, type LlmServer } from '../../testkit/llm-server';
import type { Platform } from '../../testkit/media-app/harness';
import { aiTalkActions, authed, evalRunEnded, numberWithFlow, postEvalRun, postEvalScenario, standInAi, startEvalWorker, useLiveEvals } from '../../testkit/evals/live';
import { bufferBody } from '../../testkit/buffer-body';
import type { EvalCallResult } from '../../core/evals/schema';
import { REANCHOR_MS } from '../../evals/call-audio';

const QUESTION = 'What are your opening hours?';
const ANSWER = 'We are open from nine in the morning until six in the evening.';
const VOICED_RMS = 300;
/** how late the phone's pacing timer may send a frame after it was due (a loaded machine; docs/evals.md "Both tracks of a call") */
const PACING_LATE_MS = 150;

/** The samples of a served track (a mono 16-bit 8 kHz WAV). */
function samplesOf(wav: Buffer): Int16Array {
  expect([wav.toString('ascii', 0, 4), wav.readUInt16LE(22), wav.readUInt32LE(24), wav.readUInt16LE(34)]).to.deep.equal(['RIFF', 1, 8000, 16]);
  const data = Buffer.from(wav.subarray(44));
  return new Int16Array(data.buffer, data.byteOffset, data.length / 2);
}

/** RMS of each 20 ms window. */
const windows = (s: Int16Array): number[] =>
  Array.from({ length: Math.floor(s.length / 160) }, (_, w) => {
    let sum = 0;
    for (let i = w * 160; i < (w + 1) * 160; i++) sum += s[i]! * s[i]!;
    return Math.sqrt(sum / 160);
  });
/** The loudest 20 ms window between `from` and `to` ms. */
const loudest = (rms: number[], from: number, to: number) => Math.max(0, ...rms.slice(Math.max(0, Math.floor(from / 20)), Math.ceil(to / 20)));
/** Voiced stretches (ms): voiced windows with gaps under 400 ms joined. */
function stretches(rms: number[]): [number, number][] {
  const out: [number, number][] = [];
  rms.forEach((v, w) => {
    if (v < VOICED_RMS) return;
    const last = out.at(-1);
    if (last && w * 20 - last[1] < 400) last[1] = w * 20 + 20;
    else out.push([w * 20, w * 20 + 20]);
  });
  return out;
}

describe('eval run: both audio tracks of a call over SIP', function () {
  this.timeout(150_000);
  let p: Platform;
  let llm: LlmServer;
  let t: TestApp;
  const NUMBER = '+899570000051';
  const api = useLiveEvals('evals-audio-', undefined, (s) => ({ p, llm, t } = s));

  before(async () => {
    const ai = await standInAi(api, llm.url, { parameter: { stt_phrases: ['what are your opening hours', 'thank you goodbye'] } });
    await numberWithFlow(api, NUMBER, aiTalkActions(ai.id));
    llm.options.respond = (req) => (lastUser(req) ? { text: ANSWER } : { text: '' });
  });

  it("the caller's track holds what the caller said where it said it, the agent's what the agent said where the caller heard it", async () => {
    const scenarioId = await postEvalScenario(api, {
      name: 'both tracks',
      target: { type: 'number', target: NUMBER },
      caller: {
        language: 'en-US',
        hear: { provider: 'pocketsphinx', phrases: [ANSWER.toLowerCase().replace(/[.,]/g, '')] },
        turns: [{ wait_ms: 1000 }, { say: QUESTION }, { wait_ms: 9000 }, { dtmf: '1' }, { wait_ms: 500 }, { hangup: true }],
      },
      checks: [{ type: 'transcript_contains', role: 'agent', text: 'open from nine' }],
    });
    const runId = await postEvalRun(api, { scenario_ids: [scenarioId] });
    api.worker = startEvalWorker(api, p);
    const run = await evalRunEnded<{ status: string; error: string; results: EvalCallResult[] }>(api, runId);
    expect(run.status, run.error).to.equal('finished');
    const r = run.results[0]!;
    expect(r.ended_by).to.equal('caller');
    expect(r.audio, JSON.stringify(r)).to.include({ format: 'wav', sample_rate: 8000, truncated: false });
    const audio = r.audio!;
    expect(audio.duration_ms).to.be.within(audio.call_ms, audio.call_ms + 100);
    const get = async (url: string) => samplesOf((await authed(api, request(t.app).get(url)).buffer(true).parse(bufferBody).expect(200)).body as Buffer);
    const [caller, agent] = [await get(audio.caller_url), await get(audio.agent_url)];
    expect(caller.length).to.equal(agent.length);
    expect(caller.length).to.equal(audio.duration_ms * 8);
    const [callerRms, agentRms] = [windows(caller), windows(agent)];

    // the caller: its question starts on its first packet (the transcript's t_ms: when that packet went out,
    // the track: when it was due on the phone's 20 ms clock, earlier by the pacing timer's lateness, a few ms
    // unless the machine is loaded: up to PACING_LATE_MS allowed), its digit comes after the wait (the wait
    // runs from the question's last packet going out; the digit is placed where its slot was due)
    const asked = r.transcript.find((l) => l.role === 'caller')!;
    expect(asked.text).to.equal(QUESTION);
    const firstSound = caller.findIndex((v) => v !== 0) / 8;
    expect(firstSound, 'the first sample the caller sent').to.be.within(asked.t_ms - PACING_LATE_MS, asked.t_ms + 1);
    const said = stretches(callerRms);
    expect(said.length, JSON.stringify(said)).to.equal(2);
    const [question, digit] = said as [[number, number], [number, number]];
    // its first voiced window: the speech's onset after the first sample, on the 20 ms grid
    expect(question[0], 'the question, from its first sample').to.be.within(firstSound - 20, firstSound + 100);
    expect(question[1] - question[0], 'the question lasts').to.be.within(1000, 3500);
    expect(digit[0], 'the digit after the 9 s wait').to.be.at.least(question[1] + 9000 - PACING_LATE_MS - 20);
    expect(digit[1] - digit[0], 'the digit: 100 ms of its two tones').to.be.within(80, 140);

    // the agent: its answer where the caller heard it (its recogniser's segments, on arrival), silence while the caller asked
    const heard = (r.heard ?? []).filter((h) => h.end_ms - h.t_ms > 500);
    expect(heard.length, JSON.stringify(r)).to.be.at.least(1);
    const answer = r.transcript.find((l) => l.role === 'agent' && l.text === ANSWER);
    expect(answer, JSON.stringify(r.transcript)).to.not.equal(undefined);
    const firstHeard = heard[0]!;
    expect(loudest(agentRms, 0, question[1] + 200), "the agent's track while the caller asked").to.be.below(VOICED_RMS);
    const spoke = stretches(agentRms);
    expect(spoke.length, JSON.stringify(spoke)).to.be.at.least(1);
    // placed by RTP timestamp from the stream's first packet: within REANCHOR_MS of its arrival (and a 20 ms window)
    expect(spoke[0]![0], "the agent's first voiced window, where the caller first heard it").to.be.within(firstHeard.t_ms - REANCHOR_MS - 20, firstHeard.t_ms + REANCHOR_MS + 20);
    for (const h of heard) expect(loudest(agentRms, h.t_ms, h.end_ms), `heard ${h.t_ms}-${h.end_ms} ms`).to.be.above(2 * VOICED_RMS);
    // and the caller said nothing while it heard the agent (no background, no echo)
    for (const h of heard) expect(loudest(callerRms, h.t_ms, h.end_ms), `the caller's track at ${h.t_ms}-${h.end_ms} ms`).to.be.below(VOICED_RMS);
  });
});
