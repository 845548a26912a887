// An AI call's start, counted: the database queries media-app runs from an inbound INVITE to its ai_talk
// agent listening (testkit/call-start-queries.ts attributes each query to the INVITE that made it). At 50
// calls starting at once the pool (10 connections) queued them and the agents' start-up waited behind it
// (docs/evals.md "Performance"); the count is held here so that it cannot grow back unnoticed.
import { expect } from 'chai';
import { aiCallerScenario, TimedSink } from '../../testkit/ai/audio';
import { aiTalkNumber, useDeepgramTurnStack, type DeepgramTurnStack } from '../../testkit/ai/turn-calls';
import { beforeListening, describeStart, kindOf, recordCallStarts } from '../../testkit/call-start-queries';
import { sipp } from '../../testkit/media-app/harness';
import { freePort, sippMediaPort } from '../../testkit/ports';

/**
 * The queries before the agent listens (measured 2026-11-27: 15 before the start was cut, 12 after: the
 * trunk with its account's standing, the number with its flow, the call's row and its ringing, the
 * activeflow's row and its two actions, the call's flow and answer, the eval pin beside the AI, the
 * aicall), with a margin of one.
 */
export const MAX_START_QUERIES = 13;

describe('an AI call: its database queries from the INVITE to the agent listening', function () {
  this.timeout(90_000);
  let s: DeepgramTurnStack;
  useDeepgramTurnStack('call-start-key', ['hello'], { respond: () => ({ text: '' }) }, (x) => (s = x));

  it(`runs at most ${MAX_START_QUERIES}, each statement once except the call's and the activeflow's updates`, async () => {
    const { db, number } = await aiTalkNumber({ llmUrl: s.llm.url, tag: 'cstart', number: '+89944100001', duration: 2, ai: { stt_type: 'deepgram' } });
    const rec = recordCallStarts(db);
    const sink = await TimedSink.open();
    try {
      const r = await sipp(
        aiCallerScenario(`${number}@127.0.0.1:${s.p.sipPort}`, sink.port, [], 30_000),
        [`127.0.0.1:${s.p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mp', String(await sippMediaPort()), '-cp', String(await freePort()), '-timeout', '40s'],
        { killAfterMs: 50_000 },
      ).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      rec.stop();
      sink.close();
    }
    expect(rec.calls, 'one INVITE routed').to.have.length(1);
    const start = rec.calls[0]!;
    const timeline = describeStart(start).join('\n');
    expect(start.listeningMs, `the agent listened\n${timeline}`).to.not.equal(null);
    const kinds = beforeListening(start).map((q) => kindOf(q.sql));
    // the recorder sees the start's own writes (it would pass on an empty list otherwise)
    expect(kinds, timeline).to.include.members(['insert calls', 'insert activeflows', 'insert aicalls', 'select ais']);
    expect(kinds.length, `queries before the agent listened:\n${timeline}`).to.be.at.most(MAX_START_QUERIES);
    const twice = kinds.filter((k, i) => kinds.indexOf(k) !== i && k !== 'update calls' && k !== 'update activeflows');
    expect(twice, `a statement run twice before the agent listened:\n${timeline}`).to.deep.equal([]);
  });
});
