// An eval run against a ConversationRelay app whose reply was not all kept (issue 56, docs/evals.md "An
// incomplete relay transcript"): a real app on loopback (testkit/twiml/relay-app.ts) streams one reply far
// past RELAY_LINE_MAX_CHARS whose words near its end are never recorded; the simulated caller (SIP and RTP
// through the edge) waits and hangs up. transcript_not_contains on those words fails, saying how much
// was not recorded, instead of passing on words the agent said; transcript_contains on its kept start passes.
import { expect } from 'chai';
import twilio from 'twilio';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import { egressPolicyFor } from '../../core/net';
import type { Fixture } from '../../testkit/api';
import type { Platform } from '../../testkit/media-app/harness';
import { evalRunEnded, numberWithFlow, postEvalRun, postEvalScenario, startEvalWorker, useLiveEvals } from '../../testkit/evals/live';
import { TwimlServer } from '../../testkit/twiml/server';
import { RelayApp } from '../../testkit/twiml/relay-app';
import { incompleteRelay, RELAY_TEXT } from '../../evals/agent-kind';
import { RELAY_LINE_MAX_CHARS } from '../../core/repos/relay-lines';
import type { EvalCallResult } from '../../core/evals/schema';

const START = 'Let me read you our whole menu. ';
const FILLER = 'bread and rolls '.repeat(400);
const TAIL = 'and by the way we are closed on sundays.';

describe('evals: a ConversationRelay reply not all kept', function () {
  this.timeout(120_000);
  let p: Platform;
  let f: Fixture;
  let twiml: TwimlServer;
  let relay: RelayApp;
  const api = useLiveEvals('evals-relay-cut-', undefined, (s) => ({ p, f } = s));

  before(async () => {
    const token = twilioAuthToken(p.config.jwtSecret, f.customer.id, 0);
    twiml = await TwimlServer.start(token);
    relay = await RelayApp.start(token);
    relay.onMessage = (s, m) => {
      if (m.type !== 'setup') return;
      s.send({ type: 'text', token: START, last: false });
      s.send({ type: 'text', token: FILLER, last: false });
      s.send({ type: 'text', token: TAIL, last: true });
    };
  });
  after(async () => {
    await relay?.close();
    await twiml?.close();
  });

  it('transcript_not_contains fails saying how much was not recorded; transcript_contains passes on what was kept', async () => {
    const doc = new twilio.twiml.VoiceResponse();
    doc.connect().conversationRelay({ url: relay.url('/menu') });
    twiml.on('/menu', doc.toString());
    await numberWithFlow(api, '+899573000011', [{ type: 'answer' }, { type: 'twiml', option: { url: twiml.url('/menu') } }]);
    const scenario = await postEvalScenario(api, {
      name: 'menu',
      target: { type: 'number', target: '+899573000011' },
      caller: { turns: [{ wait_ms: 3000 }, { hangup: true }] },
      checks: [
        { type: 'transcript_not_contains', role: 'agent', text: 'we are closed' },
        { type: 'transcript_contains', role: 'agent', text: 'whole menu' },
      ],
    });
    const runId = await postEvalRun(api, { scenario_ids: [scenario] });
    api.worker ??= startEvalWorker(api, p, { env: {}, egress: egressPolicyFor({}) });
    const run = await evalRunEnded<{ status: string; error: string; results: EvalCallResult[] }>(api, runId, 90_000);
    expect(run.status, run.error).to.equal('finished');
    const r = run.results[0]!;
    const shown = JSON.stringify({ checks: r.checks, transcript: r.transcript.map((l) => [l.role, l.text.length]) });
    // the one reply kept to RELAY_LINE_MAX_CHARS: its start, not its tail
    const agent = r.transcript.filter((l) => l.role === 'agent');
    expect(
      agent.map((l) => l.text.length),
      shown,
    ).to.deep.equal([RELAY_LINE_MAX_CHARS - 1]);
    const lost = START.length + FILLER.length + TAIL.length - RELAY_LINE_MAX_CHARS;
    expect(r.checks, shown).to.deep.equal([
      { type: 'transcript_not_contains', passed: false, evidence: `"we are closed" in no agent line, but ${incompleteRelay({ replies: 0, chars: lost })} (${RELAY_TEXT})` },
      { type: 'transcript_contains', passed: true, evidence: `agent at ${agent[0]!.t_ms} ms: "${agent[0]!.text.slice(0, 120)}…" (${RELAY_TEXT})` },
    ]);
    expect(r.passed).to.equal(false);
  });
});
