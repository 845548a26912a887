// Caller-side turns (evals/caller-turns.ts, docs/evals.md "Caller-side turns"): the agent's audio as
// the caller heard it, made by hand packet by packet, against the caller's inputs.
import { expect } from 'chai';
import { callerTurns } from '../../evals/caller-turns';
import type { HeardPacket } from '../../evals/checks/heard';

/** 20 ms packets from 0 to `to`, voiced inside the spans given. */
function heard(to: number, spans: [number, number][]): HeardPacket[] {
  const out: HeardPacket[] = [];
  for (let t = 0; t < to; t += 20) out.push({ t_ms: t, level: spans.some(([a, b]) => t >= a && t < b) ? 2000 : 10 });
  return out;
}

/** A turn measured at the caller: `latency_ms` from the input's end to the reply heard; the platform's stages unknown. */
const turn = (latency_ms: number, caller_end_at: number, agent_heard_at: number, interrupted = false) => ({
  latency_ms,
  end_of_turn_wait_ms: null,
  stt_final_ms: null,
  llm_first_token_ms: null,
  tts_first_byte_ms: null,
  interrupted,
  measured: 'caller',
  caller_end_at,
  agent_heard_at,
});

describe('evals caller-side turns: from the end of each caller input to the agent utterance heard after it', () => {
  it('each answered input is a turn: its end to the start of the next utterance, with where it was taken', () => {
    const turns = callerTurns(
      [
        { t_ms: 3000, end_ms: 4000 },
        { t_ms: 9000, end_ms: 9100 },
      ],
      heard(14_000, [
        [0, 2000],
        [5500, 7000],
        [9840, 11_000],
      ]),
    );
    expect(turns).to.deep.equal([turn(1500, 4000, 5500), turn(740, 9100, 9840)]);
  });

  it('an utterance still heard when the input ended is not its reply; pauses under 1 s are inside an utterance', () => {
    // the agent talks through the caller's input (2000-2500) and pauses 600 ms at 3000: one utterance; it answers at 5000
    const turns = callerTurns(
      [{ t_ms: 2000, end_ms: 2500 }],
      heard(8000, [
        [1000, 3000],
        [3600, 4000],
        [5000, 6000],
      ]),
    );
    expect(turns.map((t) => [t.latency_ms, t.agent_heard_at])).to.deep.equal([[2500, 5000]]);
  });

  it('an input not answered before the next one (or the end) has no turn; a reply the next input talks over is interrupted', () => {
    const turns = callerTurns(
      [
        { t_ms: 1000, end_ms: 2000 },
        { t_ms: 2500, end_ms: 3000 },
        { t_ms: 5000, end_ms: 5500 },
        { t_ms: 9000, end_ms: 9500 },
      ],
      heard(12_000, [[4000, 6000]]),
    );
    // input 1: nothing before input 2; input 2: the 4000 utterance, still heard when input 3 started; input 3 and 4: none after them
    expect(turns.map((t) => [t.caller_end_at, t.latency_ms, t.interrupted])).to.deep.equal([[3000, 1000, true]]);
  });

  it('no agent audio: no turn', () => {
    expect(callerTurns([{ t_ms: 0, end_ms: 500 }], heard(3000, []))).to.deep.equal([]);
  });
});
