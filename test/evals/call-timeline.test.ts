// A call's interruptions, silences and tool calls as its result reports them (evals/timeline.ts,
// evals/call-facts.ts toolCallsOf; docs/evals.md "What is measured, and how"), on timelines made by
// hand: the caller's speech spans and the agent's audio as heard, packet by packet.
import { expect } from 'chai';
import { interruptionsOf, silencesOf } from '../../evals/timeline';
import { toolCallsOf } from '../../evals/call-facts';
import { EVAL_TOOL_RESULT_MAX } from '../../core/evals/schema';
import { bargeInWithin } from '../../evals/checks/audio';
import type { CallFacts } from '../../evals/checks/facts';
import type { HeardPacket } from '../../evals/checks/heard';
import { EVAL_SILENCE_MS } from '../../core/evals/schema';

/** 20 ms packets from 0 to `to`, voiced inside the spans given (as caller-turns.test.ts makes them). */
function heard(to: number, spans: [number, number][]): HeardPacket[] {
  const out: HeardPacket[] = [];
  for (let t = 0; t < to; t += 20) out.push({ t_ms: t, level: spans.some(([a, b]) => t >= a && t < b) ? 2000 : 10 });
  return out;
}

const said = (t_ms: number, end_ms: number) => ({ t_ms, end_ms });

describe('evals call timeline: silences, interruptions and tool calls of a call', () => {
  it('a silence is a gap longer than the threshold, exactly the threshold is none', () => {
    expect(EVAL_SILENCE_MS).to.equal(2000);
    // caller 0-1000, agent heard 3000-4000 (its last packet at 3980 heard to 4000): 2000 ms between, twice
    expect(silencesOf([said(0, 1000)], heard(6000, [[3000, 4000]]), 6000)).to.deep.equal([]);
    // one ms more at the end; the agent 20 ms later: the dead air after the caller's turn
    expect(silencesOf([said(0, 1000)], heard(6000, [[3000, 4000]]), 6001)).to.deep.equal([{ t_ms: 4000, duration_ms: 2001, after: 'agent', before: 'end' }]);
    expect(silencesOf([said(0, 1000)], heard(6000, [[3020, 4000]]), 6000)).to.deep.equal([{ t_ms: 1000, duration_ms: 2020, after: 'caller', before: 'agent' }]);
    // the threshold given
    expect(silencesOf([said(0, 1000)], heard(6000, [[3000, 4000]]), 6000, 1500).map((s) => [s.t_ms, s.duration_ms])).to.deep.equal([
      [1000, 2000],
      [4000, 2000],
    ]);
  });

  it('overlapping spans: the gap starts where the later of the two sides ended', () => {
    // the agent inside the caller's speech, then a reply 3 s after the caller ended
    expect(
      silencesOf(
        [said(1000, 5000)],
        heard(9500, [
          [2000, 3000],
          [8000, 9000],
        ]),
        9500,
      ),
    ).to.deep.equal([{ t_ms: 5000, duration_ms: 3000, after: 'caller', before: 'agent' }]);
    // the caller inside the agent's utterance: the agent is heard last
    expect(silencesOf([said(1000, 2000)], heard(9000, [[0, 6000]]), 9000)).to.deep.equal([{ t_ms: 6000, duration_ms: 3000, after: 'agent', before: 'end' }]);
    // digits count as the caller heard; two caller spans overlapping each other
    expect(silencesOf([said(500, 3000), said(2500, 2600), said(5100, 5200)], [], 5200)).to.deep.equal([{ t_ms: 3000, duration_ms: 2100, after: 'caller', before: 'caller' }]);
  });

  it('a call with no agent audio: the silences are around the caller alone, from the answer to the end', () => {
    const expected = [
      { t_ms: 0, duration_ms: 3000, after: 'answer', before: 'caller' },
      { t_ms: 4000, duration_ms: 6000, after: 'caller', before: 'end' },
    ];
    expect(silencesOf([said(3000, 4000)], heard(10_000, []), 10_000)).to.deep.equal(expected);
    expect(silencesOf([said(3000, 4000)], [], 10_000)).to.deep.equal(expected);
    // nobody at all: the whole call
    expect(silencesOf([], [], 2500)).to.deep.equal([{ t_ms: 0, duration_ms: 2500, after: 'answer', before: 'end' }]);
  });

  it('a barge-in honoured: the agent stops before the caller finished, by the measure barge_in_within reads', () => {
    const h = heard(6000, [
      [0, 3000],
      [4500, 5500],
    ]);
    const speech = [said(1500, 3500)];
    expect(interruptionsOf(speech, h)).to.deep.equal([{ by: 'caller', t_ms: 1500, agent_from_ms: 0, caller_end_ms: 3500, agent_stopped_after_ms: 1480, agent_stopped: true, agent_resumed_ms: null }]);
    const check = bargeInWithin(1500, { talkOvers: [{ ...speech[0]!, after_agent_ms: 1500, agent_from_ms: 0 }], talkOversSkipped: 0, heard: h } as unknown as CallFacts);
    expect(check.evidence).to.equal('talk-over at 1500 ms (the agent talking since 0 ms): the agent stopped 1480 ms later');
  });

  it('the agent talking on, resuming while the caller speaks, or starting over it; none when the agent is silent', () => {
    expect(interruptionsOf([said(1500, 3000)], heard(7000, [[0, 6000]]))).to.deep.equal([
      { by: 'caller', t_ms: 1500, agent_from_ms: 0, caller_end_ms: 3000, agent_stopped_after_ms: 4480, agent_stopped: false, agent_resumed_ms: null },
    ]);
    // muted 1.2 s, heard again before the caller finished: not honoured, and the agent talked over the caller
    expect(
      interruptionsOf(
        [said(1500, 4000)],
        heard(6000, [
          [0, 2000],
          [3200, 5000],
        ]),
      ),
    ).to.deep.equal([
      { by: 'caller', t_ms: 1500, agent_from_ms: 0, caller_end_ms: 4000, agent_stopped_after_ms: 480, agent_stopped: false, agent_resumed_ms: 3200 },
      { by: 'agent', t_ms: 3200, agent_from_ms: 3200, caller_end_ms: 4000, agent_stopped_after_ms: 1780, agent_stopped: false, agent_resumed_ms: null },
    ]);
    // the agent starts over the caller and gives way
    expect(interruptionsOf([said(1000, 4000)], heard(5000, [[2000, 2500]]))).to.deep.equal([
      { by: 'agent', t_ms: 2000, agent_from_ms: 2000, caller_end_ms: 4000, agent_stopped_after_ms: 480, agent_stopped: true, agent_resumed_ms: null },
    ]);
    // the caller speaks 1 s after the agent fell silent, the agent answers after it
    expect(
      interruptionsOf(
        [said(3000, 4000)],
        heard(7000, [
          [0, 2000],
          [4500, 6000],
        ]),
      ),
    ).to.deep.equal([]);
  });

  it("tool calls: each assistant message's calls in order, arguments parsed, with the result recorded under its id", () => {
    const at = (ms: number) => new Date(1_000_000 + ms);
    const rows = [
      {
        role: 'assistant',
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'set_variables', arguments: '{"variables":{"x":"1"}}' } },
          { id: 'b', type: 'function', function: { name: 'stop_media', arguments: '' } },
        ],
        tool_call_id: '',
        content: null,
        tm_create: at(2100),
      },
      { role: 'tool', tool_calls: null, tool_call_id: 'a', content: 'ok', tm_create: at(2150) },
      { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'stop_flow', arguments: 'not json' } }], tool_call_id: '', content: 'Bye.', tm_create: at(5000) },
      { role: 'tool', tool_calls: null, tool_call_id: 'c', content: '', tm_create: at(5010) },
    ];
    expect(toolCallsOf(rows, 1_000_000)).to.deep.equal([
      { id: 'a', name: 'set_variables', arguments: { variables: { x: '1' } }, t_ms: 2100, result: 'ok' },
      { id: 'b', name: 'stop_media', arguments: '', t_ms: 2100, result: null },
      { id: 'c', name: 'stop_flow', arguments: 'not json', t_ms: 5000, result: '' },
    ]);
    // a result longer than a call's result keeps: its first EVAL_TOOL_RESULT_MAX characters, said cut
    const long = 'x'.repeat(EVAL_TOOL_RESULT_MAX) + 'tail';
    const cut = toolCallsOf([rows[0]!, { ...rows[1]!, content: long }], 1_000_000)[0]!;
    expect([cut.result!.length, cut.result_truncated, cut.result!.endsWith('tail')]).to.deep.equal([EVAL_TOOL_RESULT_MAX, true, false]);
    expect(toolCallsOf([rows[0]!, { ...rows[1]!, content: 'x'.repeat(EVAL_TOOL_RESULT_MAX) }], 1_000_000)[0]).to.not.have.property('result_truncated');
  });
});
