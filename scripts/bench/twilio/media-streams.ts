/**
 * Twilio Media Streams benchmark: the call plane on loopback (sip-server + media-app node), sipp
 * placing N calls whose flow is `<Connect><Stream>` (external_media_start encapsulation twilio, wait)
 * to one `ws` server of ours; each far end talks a PCMU tone.
 *   source .data/env && npx tsx scripts/bench/twilio/media-streams.ts [--calls 50] [--seconds 10]
 * 1. loss: over a window, the RTP packets each caller got from the platform and the `media` messages
 *    each stream got (both should be 50 a second), and the CPU of the process.
 * 2. first audio out: the server sends 300 ms of tone on every stream at once; the time until the
 *    caller's first voiced RTP packet (baseline in the same run: the RTP path alone, the gap between
 *    the caller's packets, i.e. what one 20 ms frame of the call's clock costs).
 * 3. clear → silence: the server queues 5 s of tone on every stream, after 1 s sends `clear`; the time
 *    until the caller hears only silence.
 * Writes dist/bench/twilio-media-streams.md (git-ignored; the figures go by hand into docs/benchmarks.md).
 */
process.env.LOG_LEVEL ??= 'silent';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pcmToMulawBase64 } from '../../../core/streams/twilio';
import { callSid } from '../../../core/twilio/sids';
import { truncateAll } from '../../../testkit/db';
import { killAllSipp, sleep, until } from '../../../testkit/media-app/harness';
import { customerWithTrunk, pcmBuffer, placeCall, startStack, tone, type PlacedCall } from '../../../testkit/streams/support';
import { twilioApp, type TwilioConn } from '../../../testkit/streams/twilio';
import { portBlock } from '../../../testkit/ports';
import { reportPath } from '../report';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const CALLS = Number(arg('calls', '50'));
const SECONDS = Number(arg('seconds', '10'));

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
const payload = (frames: number) => pcmToMulawBase64(Buffer.concat(Array.from({ length: frames }, (_, n) => pcmBuffer(tone(n, 500)))));

/** Arrival of the first voiced packet after `from`, or NaN. */
function firstVoiced(c: PlacedCall, from: number): number {
  for (let i = 0; i < c.peer.levels.length; i++) if (c.peer.arrivals[i]! > from && c.peer.levels[i]! > 300) return c.peer.arrivals[i]!;
  return NaN;
}

/** Arrival of the first packet after `from` from which on the caller hears only silence, or NaN. */
function silenceFrom(c: PlacedCall, from: number): number {
  const { levels, arrivals } = c.peer;
  let j = levels.length;
  while (j > 0 && levels[j - 1]! <= 300 && arrivals[j - 1]! > from) j--;
  return j < levels.length && arrivals[j]! > from ? arrivals[j]! : NaN;
}

async function main(): Promise<void> {
  await truncateAll();
  // two RTP ports a call, and some room
  const rtp = portBlock('platformRtp', Math.max(200, CALLS * 2 + 40));
  const stack = await startStack({ RTP_PORT_MIN: String(rtp.min), RTP_PORT_MAX: String(rtp.max) });
  const app = await twilioApp('/bench');
  const calls: PlacedCall[] = [];
  try {
    const owner = await customerWithTrunk(stack.api);
    const rampFrom = performance.now();
    const flow = [{ type: 'answer' }, { type: 'external_media_start', option: { url: app.url, encapsulation: 'twilio', wait: true } }, { type: 'hangup' }];
    for (let i = 0; i < CALLS; i++) {
      calls.push(await placeCall(stack, owner.customer.id, flow, { killAfterMs: 600_000 }));
      if ((i + 1) % 25 === 0) console.error(`${i + 1} calls up, ${app.conns.length} streams`);
    }
    const rampMs = performance.now() - rampFrom;
    await until(() => app.conns.filter((c) => c.of('start').length).length === CALLS, 60_000, 'every stream started');
    const connOf = new Map<string, TwilioConn>();
    for (const c of app.conns) connOf.set(String((c.of('start')[0]!.start as { callSid: string }).callSid), c);
    const conns = calls.map((c) => connOf.get(callSid(c.callId))!);
    await sleep(1000);

    // 1. loss over a window
    const cpu0 = process.cpuUsage();
    const from = performance.now();
    const media0 = conns.map((c) => c.of('media').length);
    const rtp0 = calls.map((c) => c.peer.arrivals.length);
    await sleep(SECONDS * 1000);
    const ms = performance.now() - from;
    const cpu = process.cpuUsage(cpu0);
    const expected = ms / 20;
    const rtpGot = calls.map((c, i) => c.peer.arrivals.length - rtp0[i]!);
    const mediaGot = conns.map((c, i) => c.of('media').length - media0[i]!);
    const loss = (got: number[]) => got.reduce((n, g) => n + Math.max(0, expected - 1 - g), 0) / (expected * got.length);
    const gaps: number[] = [];
    for (const c of calls) {
      const xs = c.peer.arrivals.filter((t) => t >= from && t <= from + ms);
      for (let i = 1; i < xs.length; i++) gaps.push(xs[i]! - xs[i - 1]!);
    }

    // 2. first audio out
    const sentAt = conns.map((c) => {
      c.send({ event: 'media', media: { payload: payload(15) } });
      return performance.now();
    });
    await sleep(1500);
    const firstAudio = calls.map((c, i) => firstVoiced(c, sentAt[i]!) - sentAt[i]!);

    // 3. clear → silence
    for (const c of conns) c.send({ event: 'media', media: { payload: payload(250) } });
    await sleep(1000);
    const clearAt = conns.map((c) => {
      c.send({ event: 'clear' });
      return performance.now();
    });
    await sleep(1000);
    const toSilence = calls.map((c, i) => silenceFrom(c, clearAt[i]!) - clearAt[i]!);

    const f = (x: number) => x.toFixed(1);
    const missing = (xs: number[]) => xs.filter((x) => Number.isNaN(x)).length;
    const fa = firstAudio.filter((x) => !Number.isNaN(x));
    const cs = toSilence.filter((x) => !Number.isNaN(x));
    const md = `# Benchmark: Twilio Media Streams

Command: \`source .data/env && npx tsx scripts/bench/twilio/media-streams.ts --calls ${CALLS} --seconds ${SECONDS}\`
Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}, shared with other work; run ${new Date().toISOString()}.

${CALLS} concurrent calls placed by sipp (ramp ${(rampMs / 1000).toFixed(1)} s) into one media-app node, each
with a bidirectional Twilio stream (\`<Connect><Stream>\`) to one \`ws\` server in this process.

| measure | p50 | p99 | max | notes |
|---|---|---|---|---|
| RTP to the callers over ${SECONDS} s | – | – | – | loss ${(loss(rtpGot) * 100).toFixed(3)} % (${rtpGot.reduce((a, b) => a + b, 0)} packets) |
| RTP inter-arrival gap (baseline: the call's own clock) | ${f(pct(gaps, 50))} ms | ${f(pct(gaps, 99))} ms | ${f(Math.max(...gaps))} ms | |
| \`media\` messages to the server over ${SECONDS} s | – | – | – | loss ${(loss(mediaGot) * 100).toFixed(3)} % |
| first audio out (server \`media\` → caller's first voiced RTP) | ${f(pct(fa, 50))} ms | ${f(pct(fa, 99))} ms | ${f(Math.max(...fa))} ms | ${missing(firstAudio)} calls heard nothing |
| \`clear\` → silence at the caller | ${f(pct(cs, 50))} ms | ${f(pct(cs, 99))} ms | ${f(Math.max(...cs))} ms | ${missing(toSilence)} calls not measured |

CPU of the whole process (media worker, node, the ws server, the RTP peers) over the loss window:
${((cpu.user + cpu.system) / 1000 / ms).toFixed(2)} cores.
`;
    const out = reportPath('twilio-media-streams');
    fs.writeFileSync(out, md);
    process.stdout.write(md);
    console.log(`wrote ${path.relative(process.cwd(), out)}`);
  } finally {
    for (const c of calls) c.peer.close();
    killAllSipp();
    await app.close();
    await stack.close();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
