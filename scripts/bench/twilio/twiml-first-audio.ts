/**
 * TwiML fetch → first audio out: the call plane on loopback (sip-server + media-app node), sipp
 * calling a number whose flow is a `twiml` action; a TwiML app on loopback answers `<Say>` then
 * `<Hangup>`. Measured from the moment the app receives the signed fetch to the first voiced RTP
 * packet at the caller (both clocks are this process's).
 *   source .data/env && npx tsx scripts/bench/twilio/twiml-first-audio.ts [--calls 20]
 * Same-run baseline, alternating call by call: a VoIPbin flow of webhook_send (sync, to the same app)
 * then talk of the same text: the webhook's arrival → first audio. The ratio is what TwiML (signing,
 * parsing, compiling, the pushed actions) adds to an HTTP round trip and a talk.
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

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const CALLS = Number(arg('calls', '20'));

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};

async function main(): Promise<void> {
  const stack = await startStack();
  const f = await customerWithTrunk(stack.api);
  const app = await TwimlServer.start(twilioAuthToken(stack.platform.config.jwtSecret, f.customer.id, 0));
  const twiml: number[] = [];
  const baseline: number[] = [];
  let unsigned = 0;
  try {
    for (let i = 0; i < CALLS * 2; i++) {
      const mode = i % 2 === 0 ? 'twiml' : 'baseline';
      const text = `Hello caller number ${i}, welcome`;
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
    }
  } finally {
    killAllSipp();
    await app.close();
    await stack.close();
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
    `- p99 ratio ${(pct(twiml, 99) / pct(baseline, 99)).toFixed(2)}; unsigned TwiML fetches: ${unsigned}`,
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
