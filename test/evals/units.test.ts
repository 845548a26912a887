// The evals worker's parts that need no call: its settings (defaults, one line per bad value, every
// variable in .env.example), the checks' verdicts and evidence (a check with nothing to judge fails),
// the turns read from ai_talk's messages (one per reply however many messages it spans), and the SIP
// parser on what the edge sends (compact headers, a body cut at Content-Length, garbage ignored).
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { EVALS_VARIABLES, loadEvalsConfig } from '../../evals/config';
import { judgeText as judge } from '../../evals/checks/text';
import { turnsOf } from '../../evals/observe';
import { repliesOf } from '../../evals/call-facts';
import { parseSip, sdpAudio, tagOf, header } from '../../evals/sip-message';
import type { EvalCheck, EvalTranscriptLine, EvalTurnResult } from '../../core/evals/schema';
import { incompleteRelay, RELAY_TEXT, withoutAiTalk } from '../../evals/agent-kind';
import { runEvalFile } from '../../scripts/eval/run-file';

describe('evals: settings, checks, turns, SIP parsing', () => {
  it('settings: the defaults, values as given, one line per bad variable, each documented in .env.example', () => {
    expect(loadEvalsConfig({})).to.deep.equal({
      edge: { host: '127.0.0.1', port: 5060 },
      localHost: '127.0.0.1',
      pollMs: 1000,
      answerTimeoutMs: 30_000,
      maxCallMs: 300_000,
      settleMs: 10_000,
      maxRuns: 2,
      leaseMs: 30_000,
      agentWaitMs: 30_000,
      judgeTimeoutMs: 60_000,
      goalReplySilenceMs: 1000,
      audioMaxS: 300,
      callSpacingMs: 0,
      nice: 10,
    });
    expect(loadEvalsConfig({ EVALS_SIP_EDGE: '10.0.0.2:5080', EVALS_POLL_MS: '' }).edge).to.deep.equal({ host: '10.0.0.2', port: 5080 });
    expect(loadEvalsConfig({ EVALS_CALL_SPACING_MS: '100' }).callSpacingMs).to.equal(100);
    expect(() => loadEvalsConfig({ EVALS_CALL_SPACING_MS: '-1' })).to.throw(/^EVALS_CALL_SPACING_MS: /);
    expect(loadEvalsConfig({ EVALS_NICE: '0' }).nice).to.equal(0);
    expect(() => loadEvalsConfig({ EVALS_NICE: '20' })).to.throw(/^EVALS_NICE: /);
    expect(() => loadEvalsConfig({ EVALS_SIP_EDGE: 'sip.example.com', EVALS_POLL_MS: 'soon', EVALS_MAX_RUNS: '0' }))
      .to.throw()
      .with.property('message')
      .that.satisfies((m: string) => m.split('\n').length === 3 && /^EVALS_SIP_EDGE: /.test(m) && /EVALS_POLL_MS: must be a number/.test(m));
    const example = fs.readFileSync(path.join(__dirname, '../../.env.example'), 'utf8');
    for (const v of EVALS_VARIABLES) expect(example, v).to.match(new RegExp(`^#?\\s*${v}=`, 'm'));
  });

  const transcript: EvalTranscriptLine[] = [
    { role: 'caller', text: 'What are your opening hours?', t_ms: 1000 },
    { role: 'agent', text: 'We open at Nine.', t_ms: 3000 },
  ];
  const turn = (latency_ms: number | null, interrupted = false): EvalTurnResult => ({
    latency_ms,
    end_of_turn_wait_ms: 500,
    stt_final_ms: 0,
    llm_first_token_ms: 10,
    tts_first_byte_ms: 10,
    interrupted,
  });

  it('checks: transcript_contains per role and case-insensitive; not_contains; the evidence names the line or the miss', () => {
    expect(judge({ type: 'transcript_contains', role: 'agent', text: 'at nine' }, transcript, [])).to.deep.equal({
      type: 'transcript_contains',
      passed: true,
      evidence: 'agent at 3000 ms: "We open at Nine."',
    });
    expect(judge({ type: 'transcript_contains', role: 'caller', text: 'at nine' }, transcript, [])).to.deep.equal({
      type: 'transcript_contains',
      passed: false,
      evidence: '"at nine" not in any of 1 caller line(s)',
    });
    expect(judge({ type: 'transcript_not_contains', role: 'agent', text: 'NINE' }, transcript, []).passed).to.equal(false);
    expect(judge({ type: 'transcript_not_contains', role: 'agent', text: 'closed' }, transcript, []).passed).to.equal(true);
  });

  it("checks on a ConversationRelay app's replies: not_contains fails when some were not kept, saying how much; contains judges what was kept", () => {
    const lines: EvalTranscriptLine[] = [{ role: 'agent', text: 'We are open from nine.', t_ms: 100 }];
    const checks: EvalCheck[] = [
      { type: 'transcript_not_contains', role: 'agent', text: 'closed' },
      { type: 'transcript_contains', role: 'agent', text: 'open from nine' },
      { type: 'transcript_not_contains', role: 'agent', text: 'open' },
      { type: 'transcript_not_contains', role: 'caller', text: 'closed' },
    ];
    const judged = checks.map((c) => judge(c as Parameters<typeof judge>[0], lines, []));
    const loss = { replies: 2, chars: 130 };
    const incomplete = withoutAiTalk(checks, judged, { lines: 1, loss });
    expect(incomplete.map((c) => [c.type, c.passed])).to.deep.equal([
      ['transcript_not_contains', false],
      ['transcript_contains', true],
      ['transcript_not_contains', false],
      ['transcript_not_contains', true],
    ]);
    expect(incomplete[0]!.evidence).to.equal(`"closed" in no agent line, but ${incompleteRelay(loss)} (${RELAY_TEXT})`);
    expect(incompleteRelay(loss)).to.match(/^the agent's transcript is incomplete: 2 replies and 130 characters not recorded/);
    // the line that matched is the evidence still
    expect(incomplete[2]!.evidence).to.equal(`agent at 100 ms: "We are open from nine." (${RELAY_TEXT})`);
    // every reply kept: judged as before
    expect(withoutAiTalk(checks, judged, { lines: 1, loss: null }).map((c) => c.passed)).to.deep.equal([true, true, false, true]);
    // nothing kept but something lost: still the app's text (none of it kept), not a pass
    expect(withoutAiTalk(checks, judged, { lines: 0, loss })[0]!.passed).to.equal(false);
  });

  it('checks: latency_under fails on a turn at or over budget, on a reply with no audio, and with no turn at all; a reply cut before its audio is not judged', () => {
    const check = { type: 'latency_under' as const, ms: 1000 };
    expect(judge(check, transcript, [turn(400), turn(999)])).to.deep.equal({ type: 'latency_under', passed: true, evidence: '2 turn(s), the slowest 999 ms' });
    expect(judge(check, transcript, [turn(400), turn(1000), turn(null)])).to.deep.equal({ type: 'latency_under', passed: false, evidence: 'over 1000 ms: turn 2: 1000 ms, turn 3: no audio' });
    expect(judge(check, transcript, [turn(400), turn(null, true)]).passed).to.equal(true);
    expect(judge(check, transcript, [])).to.deep.equal({ type: 'latency_under', passed: false, evidence: 'no agent turn was measured' });
  });

  it("turns: one per reply (its messages share ai_talk's latency record), stages named, other fields kept", () => {
    const latency = { end_of_turn_rule: 'complete', end_of_turn_wait_ms: 500, stt_final_ms: 0, llm_first_token_ms: 20, tts_first_byte_ms: 30, first_rtp_ms: 640, interrupted: false, preempted: false };
    const m = (role: string, lat?: object) => ({ role, content: 'x', metadata: lat ? { latency: lat } : {}, tm_create: new Date() });
    const messages = [m('user'), m('assistant', latency), m('assistant', latency), m('user'), m('assistant', { ...latency, first_rtp_ms: 700, interrupted: true }), m('assistant')];
    const turns = turnsOf(messages);
    // the checks' replies (call-facts.ts) are the same replies: one each, timed by its first message
    const answeredAt = messages[1]!.tm_create.getTime() - 250;
    expect(repliesOf(messages, answeredAt)).to.deep.equal([
      { t_ms: 250, interrupted: false },
      { t_ms: messages[4]!.tm_create.getTime() - answeredAt, interrupted: true },
    ]);
    expect(turns).to.deep.equal([
      { end_of_turn_rule: 'complete', preempted: false, latency_ms: 640, end_of_turn_wait_ms: 500, stt_final_ms: 0, llm_first_token_ms: 20, tts_first_byte_ms: 30, interrupted: false },
      { end_of_turn_rule: 'complete', preempted: false, latency_ms: 700, end_of_turn_wait_ms: 500, stt_final_ms: 0, llm_first_token_ms: 20, tts_first_byte_ms: 30, interrupted: true },
    ]);
  });

  it('SIP: a response with compact headers and a body cut at Content-Length; a request; garbage is null', () => {
    const sdp = 'v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 40002 RTP/AVP 0 101\r\n';
    const ok = parseSip(Buffer.from(`SIP/2.0 200 OK\r\nv: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bKx\r\nt: <sip:+1@h>;tag=abc\r\nCSeq: 1 INVITE\r\nl: ${sdp.length}\r\n\r\n${sdp}trailing`))!;
    expect(ok).to.include({ method: null, status: 200, body: sdp });
    expect(tagOf(header(ok, 'to'))).to.equal('abc');
    expect(sdpAudio(ok.body)).to.deep.equal({ host: '127.0.0.1', port: 40002 });
    const bye = parseSip(Buffer.from('BYE sip:evals@127.0.0.1:5070 SIP/2.0\r\ni: abc@x\r\nContent-Length: 0\r\n\r\n'))!;
    expect(bye).to.include({ method: 'BYE', status: 0 });
    expect(header(bye, 'call-id')).to.equal('abc@x');
    expect(parseSip(Buffer.from('hello'))).to.equal(null);
    expect(parseSip(Buffer.from('NOT A START LINE\r\n\r\n'))).to.equal(null);
  });

  it('CI command: the access key goes only to OPENVOICE_API; a run file naming another origin is refused before anything is sent', async () => {
    const seen: string[] = [];
    const other = http.createServer((req, res) => {
      seen.push(req.url ?? '');
      res.writeHead(500).end();
    });
    other.on('error', () => undefined);
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    try {
      const elsewhere = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      const lines: string[] = [];
      const o = { accesskey: 'ci-secret-key', api: 'http://127.0.0.1:1', out: (l: string) => lines.push(l) };
      expect(await runEvalFile(JSON.stringify({ api: elsewhere, scenario_ids: ['x'] }), o)).to.equal(2);
      expect(seen, 'requests the other host got').to.deep.equal([]);
      expect(lines).to.deep.equal([`the run file's api (${elsewhere}) is not OPENVOICE_API's origin (http://127.0.0.1:1): refused, the access key goes only to OPENVOICE_API`]);
      lines.length = 0;
      // no OPENVOICE_API: the file's api is not used instead
      expect(await runEvalFile(JSON.stringify({ api: elsewhere }), { ...o, api: undefined })).to.equal(2);
      expect(seen).to.deep.equal([]);
      expect(lines[0]).to.match(/^no api: OPENVOICE_API/);
      lines.length = 0;
      // the same origin (another path, a trailing slash) is accepted and the key goes there
      expect(await runEvalFile(JSON.stringify({ api: `${elsewhere}/`, scenario_ids: ['x'] }), { ...o, api: elsewhere })).to.equal(2);
      expect(seen).to.have.length(1);
      expect(seen[0]).to.equal('/v1.0/eval_runs?accesskey=ci-secret-key');
    } finally {
      await new Promise((r) => other.close(r));
    }
  });
});
