/**
 * Twilio Media Streams benchmark: the call plane on loopback (sip-server + media-app node), sipp
 * placing N calls whose flow is `<Connect><Stream>` (external_media_start encapsulation twilio, wait)
 * to one `ws` server of ours; each far end talks a PCMU tone.
 *   source .data/env && npx tsx scripts/bench/twilio/media-streams.ts [--calls 50] [--seconds 10] [--rounds 4] [--rt-priority 10]
 * 1. loss: over a window, the RTP packets each caller got from the platform and the `media` messages
 *    each stream got (both should be 50 a second), and the CPU of the process.
 * 2. first audio out: the server sends 300 ms of tone on every stream at once; the time until the
 *    caller's first voiced RTP packet (baseline in the same run: the RTP path alone, the gap between
 *    the caller's packets, i.e. what one 20 ms frame of the call's clock costs). --rounds times (4),
 *    1.5 s apart: the first round (the streams' first playback, cold code) apart, the rest pooled.
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
import { procStat } from '../../../media-engine/worker/proc-stat';
import { reportPath } from '../report';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const CALLS = Number(arg('calls', '50'));
const SECONDS = Number(arg('seconds', '10'));
const ROUNDS = Math.max(2, Number(arg('rounds', '4')));
/** --rt-priority N: the media worker on SCHED_RR (MEDIA_WORKER_RT_PRIORITY, as an operator may set it) */
const RT = arg('rt-priority', '');

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
  // two RTP ports a call, and room: the block lies in the kernel's ephemeral range, where the peers' and
  // the streams' own sockets take ports the engine then skips (at 200 calls and 440 ports, a call got 488)
  const rtp = portBlock('platformRtp', Math.max(200, CALLS * 4 + 100));
  const stack = await startStack({ RTP_PORT_MIN: String(rtp.min), RTP_PORT_MAX: String(rtp.max), ...(RT ? { MEDIA_WORKER_RT_PRIORITY: RT } : {}) });
  const app = await twilioApp('/bench', { keepMedia: false });
  const calls: PlacedCall[] = [];
  try {
    const owner = await customerWithTrunk(stack.api);
    const rampFrom = performance.now();
    const flow = [{ type: 'answer' }, { type: 'external_media_start', option: { url: app.url, encapsulation: 'twilio', wait: true } }, { type: 'hangup' }];
    // placed 25 at a time (each group at once)
    for (let i = 0; i < CALLS; i += 25) {
      const group = Array.from({ length: Math.min(25, CALLS - i) }, () => placeCall(stack, owner.customer.id, flow, { killAfterMs: 600_000 }));
      calls.push(...(await Promise.all(group)));
      console.error(`${calls.length} calls up, ${app.conns.length} streams`);
    }
    const rampMs = performance.now() - rampFrom;
    // a stream that could not connect (the ws server shares this loaded process) ends its call: said in the report
    await until(() => app.conns.filter((c) => c.of('start').length).length === CALLS, 60_000, 'every stream started').catch(() => undefined);
    const connOf = new Map<string, TwilioConn>();
    for (const c of app.conns) if (c.of('start').length) connOf.set(String((c.of('start')[0]!.start as { callSid: string }).callSid), c);
    const streamed = calls.filter((c) => connOf.has(callSid(c.callId)));
    const conns = streamed.map((c) => connOf.get(callSid(c.callId))!);
    await sleep(1000);

    // 1. loss over a window
    const tids = stack.platform.app.media.workerTids.filter((t): t is number => t !== undefined);
    const workerMs = () => tids.reduce((n, t) => n + procStat(process.pid, t).cpuMs, 0);
    const worker0 = workerMs();
    const cpu0 = process.cpuUsage();
    const from = performance.now();
    const media0 = conns.map((c) => c.mediaCount);
    const rtp0 = streamed.map((c) => c.peer.arrivals.length);
    await sleep(SECONDS * 1000);
    const ms = performance.now() - from;
    const cpu = process.cpuUsage(cpu0);
    const workerCores = (workerMs() - worker0) / ms;
    const expected = ms / 20;
    const rtpGot = streamed.map((c, i) => c.peer.arrivals.length - rtp0[i]!);
    const mediaGot = conns.map((c, i) => c.mediaCount - media0[i]!);
    const loss = (got: number[]) => got.reduce((n, g) => n + Math.max(0, expected - 1 - g), 0) / (expected * got.length);
    const gaps: number[] = [];
    for (const c of streamed) {
      const xs = c.peer.arrivals.filter((t) => t >= from && t <= from + ms);
      for (let i = 1; i < xs.length; i++) gaps.push(xs[i]! - xs[i - 1]!);
    }

    // 2. first audio out, in ROUNDS rounds 1.5 s apart: the first is the process's first playback on
    // these streams (cold code paths), reported apart; the others pooled
    const tone300 = payload(15);
    const rounds: number[][] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const sentAt = conns.map((c) => {
        c.send({ event: 'media', media: { payload: tone300 } });
        return performance.now();
      });
      await sleep(1500);
      rounds.push(streamed.map((c, i) => firstVoiced(c, sentAt[i]!) - sentAt[i]!));
    }
    const firstAudio = rounds.slice(1).flat();
    const cold = rounds[0]!.filter((x) => !Number.isNaN(x));
    const perRound = rounds
      .map((xs) =>
        pct(
          xs.filter((x) => !Number.isNaN(x)),
          99,
        ).toFixed(0),
      )
      .join(', ');

    // 3. clear → silence
    const tone5s = payload(250);
    for (const c of conns) c.send({ event: 'media', media: { payload: tone5s } });
    await sleep(1000);
    const clearAt = conns.map((c) => {
      c.send({ event: 'clear' });
      return performance.now();
    });
    await sleep(1000);
    const toSilence = streamed.map((c, i) => silenceFrom(c, clearAt[i]!) - clearAt[i]!);

    const cores = (cpu.user + cpu.system) / 1000 / ms;
    const f = (x: number) => x.toFixed(1);
    const missing = (xs: number[]) => xs.filter((x) => Number.isNaN(x)).length;
    const fa = firstAudio.filter((x) => !Number.isNaN(x));
    const cs = toSilence.filter((x) => !Number.isNaN(x));
    const md = `# Benchmark: Twilio Media Streams

Command: \`source .data/env && npx tsx scripts/bench/twilio/media-streams.ts --calls ${CALLS} --seconds ${SECONDS} --rounds ${ROUNDS}${RT ? ` --rt-priority ${RT}` : ''}\`
Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}, shared with other work; run ${new Date().toISOString()}.

${CALLS} concurrent calls placed by sipp (ramp ${(rampMs / 1000).toFixed(1)} s) into one media-app node, each
with a bidirectional Twilio stream (\`<Connect><Stream>\`) to one \`ws\` server in this process; ${conns.length} of
${CALLS} streams started (the others' WebSocket handshake did not complete within 5 s: their calls ended) and
are measured.

| measure | p50 | p99 | max | notes |
|---|---|---|---|---|
| RTP to the callers over ${SECONDS} s | – | – | – | loss ${(loss(rtpGot) * 100).toFixed(3)} % (${rtpGot.reduce((a, b) => a + b, 0)} packets) |
| RTP inter-arrival gap (baseline: the call's own clock) | ${f(pct(gaps, 50))} ms | ${f(pct(gaps, 99))} ms | ${f(Math.max(...gaps))} ms | |
| \`media\` messages to the server over ${SECONDS} s | – | – | – | loss ${(loss(mediaGot) * 100).toFixed(3)} % |
| first audio out (server \`media\` → caller's first voiced RTP), rounds 2–${ROUNDS} | ${f(pct(fa, 50))} ms | ${f(pct(fa, 99))} ms | ${f(Math.max(...fa))} ms | ${missing(firstAudio)} of ${firstAudio.length} heard nothing; p99 per round (ms): ${perRound} |
| first audio out, round 1 (the streams' first playback) | ${f(pct(cold, 50))} ms | ${f(pct(cold, 99))} ms | ${f(Math.max(...cold))} ms | |
| \`clear\` → silence at the caller | ${f(pct(cs, 50))} ms | ${f(pct(cs, 99))} ms | ${f(Math.max(...cs))} ms | ${missing(toSilence)} calls not measured |

CPU over the loss window: the whole process (media worker, node, the ws server, the RTP peers)
${cores.toFixed(2)} cores, ${((cores * 1000) / conns.length).toFixed(2)} ms per stream per second (an upper bound: the
far ends share the process); of it the media worker thread ${workerCores.toFixed(2)} cores
(${((workerCores * 1000) / conns.length).toFixed(2)} ms per stream per second).
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
