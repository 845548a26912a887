/**
 * TwiML fetch → first audio out: the call plane on loopback (sip-server + media-app node), sipp
 * calling a number whose flow is a `twiml` action; a TwiML app on loopback answers `<Say>` then
 * `<Hangup>`. Measured from the moment the app receives the signed fetch to the first voiced RTP
 * packet at the caller (both clocks are this process's).
 *   source .data/env && npx tsx scripts/bench/twilio/twiml-first-audio.ts [--calls 20]
 * Same-run baseline, alternating call by call: a VoIPbin flow of webhook_send (sync, to the same app)
 * then talk of the same text: the webhook's arrival → first audio. The ratio is what TwiML (signing,
 * parsing, compiling, the pushed actions) adds to an HTTP round trip and a talk.
 * Per step (first-audio-steps.ts, from the platform's spans kept in memory): the time from one
 * milestone to the next (document answered → in → compiled → talk start → 200 sent → play start →
 * first audio ready → first voiced RTP), p50/p99 over the calls of each mode; and, off that path,
 * the answer's status write (from the 200 OK).
 * Writes dist/bench/twilio.md (git-ignored; the figures go by hand into docs/benchmarks.md).
 */
process.env.LOG_LEVEL ??= 'silent';
import fs from 'node:fs';
import os from 'node:os';
import twilio from 'twilio';
import { reportPath } from '../report';
import { killAllSipp } from '../../../testkit/media-app/harness';
import { customerWithTrunk, placeCall, startStack } from '../../../testkit/streams/support';
import { TwimlServer } from '../../../testkit/twiml/server';
import { twilioAuthToken } from '../../../core/twilio/auth-token';
import { MILESTONES, STATUS_WRITTEN, StepTracer, type Milestone } from './first-audio-steps';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const CALLS = Number(arg('calls', '20'));
const RUN = Math.floor(Math.random() * 90000) + 10000;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};

type Steps = Partial<Record<Milestone, number>>;

/** The call's steps once its spans have ended (its call span ends with the hangup). */
async function stepsOf(tracer: StepTracer, callId: string): Promise<Steps> {
  for (let i = 0; i < 100; i++) {
    const s = tracer.take(callId);
    if (s) return s;
    await new Promise((r) => setTimeout(r, 20));
  }
  return {};
}

/** Each step's own time (from the milestone before it that the call passed), p50 / p99. */
function breakdown(calls: Steps[]): string[] {
  const rows: string[] = ['| step | p50 ms | p99 ms | n |', '| --- | --- | --- | --- |'];
  for (let k = 0; k < MILESTONES.length; k++) {
    const m = MILESTONES[k]!;
    const d: number[] = [];
    for (const c of calls) {
      const at = c[m];
      if (at === undefined) continue;
      let prev = 0;
      for (let j = k - 1; j >= 0; j--) {
        const p = c[MILESTONES[j]!];
        if (p !== undefined) {
          prev = p;
          break;
        }
      }
      d.push(at - prev);
    }
    if (d.length) rows.push(`| ${m} | ${pct(d, 50).toFixed(1)} | ${pct(d, 99).toFixed(1)} | ${d.length} |`);
  }
  const written = calls.filter((c) => c[STATUS_WRITTEN] !== undefined && c['200 sent'] !== undefined).map((c) => c[STATUS_WRITTEN]! - c['200 sent']!);
  if (written.length) rows.push(`| (off the path) ${STATUS_WRITTEN}, from 200 sent | ${pct(written, 50).toFixed(1)} | ${pct(written, 99).toFixed(1)} | ${written.length} |`);
  return rows;
}

async function main(): Promise<void> {
  const tracer = new StepTracer();
  tracer.start();
  const stack = await startStack();
  const f = await customerWithTrunk(stack.api);
  const app = await TwimlServer.start(twilioAuthToken(stack.platform.config.jwtSecret, f.customer.id, 0));
  const twiml: number[] = [];
  const baseline: number[] = [];
  const steps: Record<'twiml' | 'baseline', Steps[]> = { twiml: [], baseline: [] };
  let unsigned = 0;
  try {
    for (let i = 0; i < CALLS * 2; i++) {
      const mode = i % 2 === 0 ? 'twiml' : 'baseline';
      // a text of this run only: the TTS cache (by text) must not serve an earlier run's speech
      const text = `Hello caller number ${i} of run ${RUN}, welcome`;
      const path = `/b${i}`;
      const doc = new twilio.twiml.VoiceResponse();
      doc.say(text);
      doc.hangup();
      app.on(path, mode === 'twiml' ? doc.toString() : { status: 200, body: '{}', contentType: 'application/json' });
      const actions =
        mode === 'twiml'
          ? [{ type: 'twiml', option: { url: app.url(path) } }]
          : [{ type: 'webhook_send', option: { sync: true, uri: app.url(path), method: 'POST', data_type: 'application/json', data: '{}' } }, { type: 'talk', option: { text } }, { type: 'hangup' }];
      const call = await placeCall(stack, f.customer.id, actions, { talk: false });
      const req = await app.next(path);
      if (mode === 'twiml' && !req.signed) unsigned++;
      const r = await call.sipp;
      if (r.code !== 0) throw new Error(`call ${i} failed: ${r.errors}`);
      const k = call.peer.levels.findIndex((l) => l > 300);
      if (k < 0) throw new Error(`call ${i}: no audio heard`);
      (mode === 'twiml' ? twiml : baseline).push(call.peer.arrivals[k]! - req.at);
      call.peer.close();
      // epoch ms from here on (the spans' clock), from the fetch's arrival at the app
      const epoch = (t: number) => performance.timeOrigin + t;
      const s = await stepsOf(tracer, call.callId);
      const rel: Steps = { 'document answered': epoch(req.answeredAt ?? req.at), 'first voiced RTP': epoch(call.peer.arrivals[k]!) };
      for (const m of [...MILESTONES, STATUS_WRITTEN] as const) if (s[m] !== undefined) rel[m] = s[m];
      const zero = epoch(req.at);
      for (const m of [...MILESTONES, STATUS_WRITTEN] as const) if (rel[m] !== undefined) rel[m] = rel[m]! - zero;
      steps[mode].push(rel);
    }
  } finally {
    killAllSipp();
    await app.close();
    await stack.close();
    await tracer.close();
  }
  const line = (name: string, xs: number[]) => `${name}: n=${xs.length} p50 ${pct(xs, 50).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms`;
  const out = [
    '# TwiML fetch → first audio',
    '',
    `load average ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}; ${new Date().toISOString()}`,
    '',
    `- ${line('twiml (fetch → first voiced RTP)', twiml)}`,
    `- ${line('baseline (webhook_send sync + talk: webhook → first voiced RTP)', baseline)}`,
    `- p99 ratio ${(pct(twiml, 99) / pct(baseline, 99)).toFixed(2)}; unsigned TwiML fetches: ${unsigned}; TTS cache hits: ${tracer.cacheHits}`,
    '',
    'Steps of the TwiML calls (each from the milestone before it; the first from the fetch received):',
    '',
    ...breakdown(steps.twiml),
    '',
    'Steps of the baseline calls:',
    '',
    ...breakdown(steps.baseline),
    '',
  ].join('\n');
  console.log(out);
  fs.writeFileSync(reportPath('twilio'), out);
}

main().then(
  () => process.exit(0),
  (e: Error) => {
    console.error(e);
    process.exit(1);
  },
);
