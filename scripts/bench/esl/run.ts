/**
 * Event socket vs direct benchmark (issue 55), one run, about a minute:
 *   npx tsx scripts/bench/esl/run.ts [--reps 40] [--n 20] [--seconds 5]
 *
 * One process holds the media engine (one worker), the event socket (esl/) with its SIP face, two
 * in-process sip-servers, and an unmodified drachtio-fsmrf connected to it, as the tests' rig does. The
 * same engine answers both paths, so the difference is what the event socket adds:
 *   - play: a 100 ms WAV played on a channel with a far end, `Endpoint.play` through fsmrf (sendmsg
 *     execute playback, CHANNEL_EXECUTE_COMPLETE back) vs the engine's `Endpoint.play`; per command
 *     p50/p95 and the overhead over the 100 ms.
 *   - a uuid command: fsmrf's `getChannelVariables(true)` (uuid_set_media_stats, then uuid_dump) vs the
 *     engine's `getStats()` (the same counters); p50/p95.
 *   - CPU per endpoint: N channels (fsmrf, each playing a tone to its far end) vs N engine endpoints
 *     doing the same directly, the process's CPU (all threads) over `--seconds`, per endpoint; the far
 *     ends are in both; the direct endpoints are destroyed before the channels are measured.
 * Prints the figures and the load average (other work on the machine shows in it).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import Mrf, { type Endpoint as FsEndpoint, type MediaServer as FsMediaServer } from 'drachtio-fsmrf';
import { MediaServer, type Endpoint } from '../../../media-engine';
import { EslServer } from '../../../esl/server';
import { SipFace } from '../../../esl/sip-face';
import { startSipServer } from '../../../testkit/media-app/harness';
import { portRange } from '../../../testkit/media-engine/support';
import { freePort } from '../../../testkit/ports';
import { connectSwitch } from '../../../media-app/media-server/fsmrf/connect';
import { LegSocket } from '../../../media-app/media-server/fsmrf/leg-socket';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- drachtio-srf's constructor, driven untyped as the tests do
const Srf = require('drachtio-srf') as new () => { connect(o: object): void; on(e: string, f: (...a: any[]) => void): void; disconnect(): void };

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const REPS = arg('reps', 40);
const N = arg('n', 20);
const SECONDS = arg('seconds', 5);
const PASSWORD = 'bench-esl';
const SECRET = 'bench-esl';

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const f1 = (x: number) => x.toFixed(1);

async function connectSrf(port: number): Promise<InstanceType<typeof Srf>> {
  const srf = new Srf();
  await new Promise<void>((resolve, reject) => {
    srf.on('connect', (err: Error | null) => (err ? reject(err) : resolve()));
    srf.on('error', () => undefined);
    srf.connect({ host: '127.0.0.1', port, secret: SECRET });
  });
  return srf;
}

/**
 * An inbound client that writes each command in one write (drachtio-modesl writes a command's lines in
 * several, without TCP_NODELAY: Nagle then holds the last until the switch's delayed ACK, ~40 ms).
 * `api(cmd)` resolves with the reply's body.
 */
async function oneWriteClient(port: number): Promise<{ api(cmd: string): Promise<string>; close(): void }> {
  const socket = net.connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  socket.on('error', () => undefined);
  let buf = '';
  let waiter: ((frame: string) => void) | null = null;
  const frames: string[] = [];
  socket.on('data', (d: Buffer) => {
    buf += d.toString('utf8');
    for (;;) {
      const end = buf.indexOf('\n\n');
      if (end < 0) return;
      const len = Number(/Content-Length: (\d+)/.exec(buf.slice(0, end))?.[1] ?? 0);
      if (buf.length < end + 2 + len) return;
      const frame = buf.slice(0, end + 2 + len);
      buf = buf.slice(end + 2 + len);
      const w = waiter;
      waiter = null;
      if (w) w(frame);
      else frames.push(frame);
    }
  });
  const next = () => new Promise<string>((resolve) => (frames.length ? resolve(frames.shift()!) : (waiter = resolve)));
  await next(); // auth/request
  socket.write(`auth ${PASSWORD}\n\n`);
  await next();
  return {
    api: async (cmd) => {
      socket.write(`api ${cmd}\n\n`);
      return next();
    },
    close: () => socket.destroy(),
  };
}

async function timed(reps: number, f: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await f();
    out.push(performance.now() - t0);
  }
  return out;
}

/** The process's CPU (user + system, every thread) per second per endpoint, over `seconds`. */
async function cpuPerEndpoint(n: number, seconds: number): Promise<number> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000 / ((performance.now() - t0) / 1000) / n;
}

/** The rig: the engine, the event socket with its SIP face, two sip-servers, fsmrf connected; endpoints of both paths. */
async function startRig() {
  const logger = pino({ level: 'silent' });
  const appSip = await startSipServer(logger, SECRET);
  const faceSip = await startSipServer(logger, SECRET);
  const engine = await MediaServer.start({ rtpPorts: portRange(8 * N + 40), workers: 1 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-esl-'));
  const esl = new EslServer({ password: PASSWORD, profile: { name: 'drachtio_mrf', address: `127.0.0.1:${faceSip.sipPort}` }, heartbeatMs: 0, conferenceFiles: { recordings: dir, sounds: dir } });
  const port = await freePort();
  await esl.listen(port, '127.0.0.1');
  const faceSrf = await connectSrf(faceSip.drachtioPort);
  new SipFace(faceSrf as never, engine, esl).start();
  const appSrf = await connectSrf(appSip.drachtioPort);
  const ms: FsMediaServer = await new Mrf(appSrf).connect({ address: '127.0.0.1', port, secret: PASSWORD, listenAddress: '127.0.0.1', listenPort: 0 });
  // the same library as media-app connects it (connect.ts, and leg-socket.ts for each channel: TCP_NODELAY)
  const appMs = await connectSwitch(appSrf, { host: '127.0.0.1', port, password: PASSWORD }, { timeoutMs: 10_000, listenAddress: '127.0.0.1' });
  const peers: Endpoint[] = [];
  /** the direct path's endpoints and their far ends (also in peers) */
  const directs: Endpoint[] = [];
  const channels: FsEndpoint[] = [];
  return {
    dir,
    port,
    ms,
    appMs,
    /** an engine endpoint sending to another (its far end) */
    async direct(): Promise<Endpoint> {
      const a = await engine.createEndpoint({});
      const b = await engine.createEndpoint({ remoteSdp: a.local.sdp });
      await a.modify(b.local.sdp);
      peers.push(a, b);
      directs.push(a, b);
      return a;
    },
    /** every direct endpoint and its far end gone (before the fsmrf path's CPU is measured) */
    async endDirect(): Promise<void> {
      for (const x of directs.splice(0)) {
        await x.destroy().catch(() => undefined);
        peers.splice(peers.indexOf(x), 1);
      }
    },
    /** an fsmrf channel sending to an engine endpoint (its far end); `asMediaApp`: on media-app's connection, its socket as media-app's LegSocket sets it */
    async viaEsl(asMediaApp = false): Promise<FsEndpoint> {
      const peer = await engine.createEndpoint({});
      const ep = await (asMediaApp ? appMs : ms).createEndpoint({ remoteSdp: peer.local.sdp });
      if (asMediaApp) new LegSocket(ep);
      await peer.modify(ep.local.sdp!);
      peers.push(peer);
      channels.push(ep);
      return ep;
    },
    async close(): Promise<void> {
      for (const c of channels) await c.destroy().catch(() => undefined);
      for (const p of peers) await p.destroy().catch(() => undefined);
      ms.disconnect();
      appMs.disconnect();
      appSrf.disconnect();
      faceSrf.disconnect();
      await esl.close();
      await engine.destroy();
      for (const s of [appSip, faceSip]) {
        await s.drachtio.close();
        await s.stack.stop();
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

const line = (what: string, a: string, xs: number[], b: string, ys: number[]) =>
  console.log(`${what}, ${REPS} reps: ${a} p50 ${f1(pct(xs, 50))} ms p95 ${f1(pct(xs, 95))}; ${b} p50 ${f1(pct(ys, 50))} ms p95 ${f1(pct(ys, 95))}`);

/** Per command: play, media stats, one uuid command (also from a one-write client). */
async function perCommand(rig: Awaited<ReturnType<typeof startRig>>): Promise<void> {
  const wav = path.join(rig.dir, 'short.wav');
  execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', wav, 'synth', '0.1', 'sine', '440']);
  const d = await rig.direct();
  const e = await rig.viaEsl();
  line('play 100 ms WAV', 'direct', await timed(REPS, () => d.play(wav)), 'fsmrf over the event socket', await timed(REPS, () => e.play(wav)));
  line('media stats', 'direct getStats', await timed(REPS, () => d.getStats()), 'fsmrf getChannelVariables(true)', await timed(REPS, () => e.getChannelVariables(true)));
  const raw = await oneWriteClient(rig.port);
  const rawCmd = await timed(REPS, () => raw.api(`uuid_exists ${e.uuid}`));
  raw.close();
  line('uuid_exists', 'a client writing each command at once', rawCmd, "fsmrf's drachtio-modesl", await timed(REPS, () => rig.ms.api(`uuid_exists ${e.uuid}`)));
  // the same three as media-app drives fsmrf: TCP_NODELAY on the inbound connection and the channel's socket
  const m = await rig.viaEsl(true);
  const asApp = 'fsmrf as media-app connects it (TCP_NODELAY)';
  line('play 100 ms WAV', 'direct', await timed(REPS, () => d.play(wav)), asApp, await timed(REPS, () => m.play(wav)));
  line('media stats', 'direct getStats', await timed(REPS, () => d.getStats()), asApp, await timed(REPS, () => m.getChannelVariables(true)));
  line('uuid_exists', "fsmrf's drachtio-modesl as is", await timed(REPS, () => rig.ms.api(`uuid_exists ${m.uuid}`)), asApp, await timed(REPS, () => rig.appMs.api(`uuid_exists ${m.uuid}`)));
}

/** CPU per endpoint: N of each path playing a tone to its far end, one after the other. */
async function cpu(rig: Awaited<ReturnType<typeof startRig>>): Promise<void> {
  const tone = 'tone_stream://%(60000,0,440)';
  const dirEps = await Promise.all(Array.from({ length: N }, () => rig.direct()));
  for (const x of dirEps) void x.play(tone).catch(() => undefined);
  const dCpu = await cpuPerEndpoint(N, SECONDS);
  // their idle cost would count as fsmrf's
  await rig.endDirect();
  const eslEps = await Promise.all(Array.from({ length: N }, () => rig.viaEsl()));
  for (const x of eslEps) void x.play(tone).catch(() => undefined);
  const eCpu = await cpuPerEndpoint(N, SECONDS);
  console.log(`CPU per endpoint playing a tone, ${N} endpoints over ${SECONDS} s: direct ${f1(dCpu)} ms/s, fsmrf channels ${f1(eCpu)} ms/s (process, all threads; far ends included in both)`);
}

async function main(): Promise<void> {
  const rig = await startRig();
  try {
    await perCommand(rig);
    await cpu(rig);
    const load = os.loadavg().map((x) => x.toFixed(2));
    console.log(`load average ${load.join(' ')} on ${os.cpus().length} cores; ${new Date().toISOString()}`);
  } finally {
    await rig.close();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
