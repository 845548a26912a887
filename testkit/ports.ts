import { spawnSync } from 'node:child_process';
import net from 'node:net';
import dgram from 'node:dgram';
import fs from 'node:fs';

/**
 * The suite's port ranges. scripts/test-run.ts splits the suites into shards and runs a few at a time;
 * each running mocha process takes an equal, disjoint slice of every range (portSlot), so two processes
 * never race for one port, whichever of them run together. Every fixed range a test hands out
 * (its own listeners, sipp's media, the RTP ranges of the engines it starts, rtpengine's media) comes
 * from here. The kernel's ephemeral ports (32768–60999) take every bind(0) on the machine (a test's far-end
 * socket, Chromium's ICE, sipp's signalling): a range a test counts or probes and hands on lies below them;
 * only platformRtp and rtpengine, whose engines skip a busy port and whose ports no test counts, lie inside
 * (test/scripts/test-ports.test.ts holds both). The ranges are sized so that each of up to MAX_PORT_SLICES
 * slices still holds the largest blocks the suite takes (the same test lists them).
 */
export const PORT_RANGES = {
  /** sipPortPair: a phone's SIP port and the TLS one after it. */
  sipPair: [6000, 7999],
  /** sippMediaPort: sipp's four media ports (and the softphones' RTP). */
  sippMedia: [8000, 11999],
  /** RTP of media-app child processes (test/scale, test/reliability node faults), blocks of 200. */
  nodeRtp: [12000, 19999],
  /** RTP of the media-engine suites' MediaServers (testkit/media-engine/support.ts): 1300 in one test; they count their pools. */
  engineRtp: [20000, 32599],
  /** RTP of in-process platforms (testkit/media-app/harness.ts, fault platforms, process tests), blocks of 200. */
  platformRtp: [33000, 44999],
  /** rtpengine's media (testkit/rtpengine.ts), blocks of 200. */
  rtpengine: [45000, 50999],
  /** freePort: listeners of every kind. */
  free: [61000, 65499],
} as const satisfies Record<string, readonly [number, number]>;

export type PortRangeName = keyof typeof PORT_RANGES;

/**
 * The most slices the ranges are cut for: at 10, engineRtp's slice would be smaller than the 1300 ports
 * of test/media-engine/worker-realtime.test.ts. portSlot refuses more. A slice belongs to a mocha process
 * while it runs, not to a shard: scripts/test-run.ts runs TEST_JOBS shards at once, each on the slot of
 * the pool's worker that runs it, so the pool may hold any number of shards.
 */
export const MAX_PORT_SLICES = 9;

/**
 * This process's slice of the port ranges: TEST_PORT_SLOT of TEST_PORT_SLOTS (1-based, at most
 * MAX_PORT_SLICES; scripts/test-run.ts sets them: the pool worker running the shard), else TEST_SHARD of
 * TEST_SHARDS (a process started by hand beside others), 1 of 1 when neither is set.
 */
export function portSlot(env: NodeJS.ProcessEnv = process.env): { index: number; count: number } {
  const [slotVar, countVar] = env.TEST_PORT_SLOT !== undefined || env.TEST_PORT_SLOTS !== undefined ? ['TEST_PORT_SLOT', 'TEST_PORT_SLOTS'] : ['TEST_SHARD', 'TEST_SHARDS'];
  const count = env[countVar] === undefined ? 1 : Number(env[countVar]);
  const index = env[slotVar] === undefined ? 1 : Number(env[slotVar]);
  if (!Number.isInteger(count) || count < 1 || count > MAX_PORT_SLICES || !Number.isInteger(index) || index < 1 || index > count) {
    throw new Error(`${slotVar}/${countVar}: want 1 <= ${slotVar} <= ${countVar} <= ${MAX_PORT_SLICES}, got ${env[slotVar]}/${env[countVar]}`);
  }
  return { index, count };
}

/**
 * This process's slice of a range: the range cut into its slot count (portSlot) of consecutive parts whose
 * bounds fall on multiples of `align` from the range's start (so blocks of `align` never straddle two slices).
 */
export function shardSlice(name: PortRangeName, align = 1, env: NodeJS.ProcessEnv = process.env): { min: number; max: number } {
  const [lo, hi] = PORT_RANGES[name];
  const { index, count } = portSlot(env);
  const units = Math.floor((hi - lo + 1) / align);
  const per = Math.floor(units / count);
  if (per < 1) throw new Error(`port range ${name} is too small for ${count} shards of ${align}`);
  const min = lo + (index - 1) * per * align;
  return { min, max: min + per * align - 1 };
}

/** A random block of `size` ports starting on a multiple of `align` inside this shard's slice of the range. */
export function portBlock(name: PortRangeName, size: number, align = size): { min: number; max: number } {
  const slice = shardSlice(name, align);
  const starts = Math.floor((slice.max - slice.min + 1 - size) / align) + 1;
  if (starts < 1) throw new Error(`no block of ${size} ports in this shard's part of ${name} (${slice.min}-${slice.max})`);
  const min = slice.min + align * Math.floor(Math.random() * starts);
  return { min, max: min + size - 1 };
}

/**
 * Blocks of `size` ports of a range (this shard's slice), handed out in turn from a random start, so one
 * test process gets a block again only after it has used all of its slice's: a block drawn at random
 * could go to a second user of this process before the first bound it (CI on 7ffef1d: EADDRINUSE; CI:
 * errno 98 on sipp's audio RTP port). A block is skipped unless `isFree` says each of its ports is free.
 */
function inTurn(name: PortRangeName, size: number): (isFree: (port: number) => Promise<boolean>, what: string) => Promise<number> {
  let next = -1;
  return async (isFree, what) => {
    const slice = shardSlice(name, size);
    const blocks = Math.floor((slice.max - slice.min + 1) / size);
    if (next < 0) next = Math.floor(Math.random() * blocks);
    for (let attempt = 0; attempt < 200; attempt++) {
      const base = slice.min + size * (next++ % blocks);
      let ok = true;
      for (let i = 0; i < size && ok; i++) ok = await isFree(base + i);
      if (ok) return base;
    }
    throw new Error(`no free ${what} found`);
  };
}

const freeTurn = inTurn('free', 1);
/**
 * A port free for TCP and UDP, drawn from this shard's part of 61000–65499: above the kernel's ephemeral
 * ports (32768–60999), which every outgoing connection of the suite takes from (a port found free there
 * could be handed to a connection before the test listened on it), and above every fixed range of the suite.
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return freeTurn((port) => tcpUdpFree(port, host), 'port');
}

/**
 * A listener of this process on a port of its part of 61000–65499, taken in turn as freePort's are, by `listen` itself:
 * the bind is the claim, so nothing can take the port between a probe and the listen (freePort's probe, then the event
 * socket's listen, lost 62801 to another socket in CI: EADDRINUSE). A port in use is skipped, said in a warning with
 * what holds it (ss), and the next one tried; any other error is `listen`'s. `listen` must leave nothing bound when it fails.
 */
export async function listenInTurn(listen: (port: number) => Promise<unknown>, what: string): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await freeTurn(async () => true, what);
    try {
      await listen(port);
      return port;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
      process.emitWarning(`testkit: ${what} found port ${port} taken at its listen (${holders(port) || 'its holder gone already'}); the next port is tried`);
    }
  }
  throw new Error(`no free port for ${what} in 20 tries`);
}

/** The sockets on local `port` and their processes, as ss prints them (one line each). */
export function holders(port: number): string {
  const r = spawnSync('ss', ['-Htanup', `sport = :${port}`], { encoding: 'utf8', timeout: 5000 });
  return (r.stdout ?? '')
    .trim()
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' '))
    .filter(Boolean)
    .join('; ');
}

function udpFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = dgram.createSocket('udp4');
    s.once('error', () => resolve(false));
    s.bind(port, host, () => s.close(() => resolve(true)));
  });
}

/**
 * Resolves once a socket is bound to UDP `port` (a sipp UAS started on it: an INVITE sent from now on
 * waits in its socket). Read from /proc/net/udp, never by binding the port to try it: a probe bind
 * at the moment sipp binds would take the port from it.
 */
export async function udpBound(port: number, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!udpPortsBound().has(port)) {
    if (Date.now() > end) throw new Error(`nothing bound UDP port ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The local ports of every UDP socket on the machine (IPv4 and IPv6). */
function udpPortsBound(): Set<number> {
  const out = new Set<number>();
  for (const f of ['/proc/net/udp', '/proc/net/udp6']) {
    if (!fs.existsSync(f)) continue;
    for (const line of fs.readFileSync(f, 'utf8').split('\n').slice(1)) {
      const local = line.trim().split(/\s+/)[1];
      if (local) out.add(parseInt(local.split(':').pop()!, 16));
    }
  }
  return out;
}

const sippTurn = inTurn('sippMedia', 4);
/**
 * A base port for sipp's -mp: sipp binds four UDP ports from it (audio RTP/RTCP, video RTP/RTCP).
 * Drawn from this shard's part of 8000–11999: below every RTP range of the suite and the kernel's ephemeral
 * ports (32768+), so nothing else in the suite is handed one of the four meanwhile.
 */
export function sippMediaPort(host = '127.0.0.1'): Promise<number> {
  return sippTurn((port) => udpFree(port, host), 'block of four UDP ports for sipp media');
}

/** TCP and UDP both free on `port` right now. */
async function tcpUdpFree(port: number, host: string): Promise<boolean> {
  const tcp = await new Promise<boolean>((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
  return tcp && udpFree(port, host);
}

const sipPairTurn = inTurn('sipPair', 2);
/**
 * A SIP port for a phone that also opens TLS on the next one (baresip listens on `sip_listen` for UDP
 * and TCP and on port + 1 for TLS, with no way to turn that off): both free, drawn in turn from this
 * shard's part of 6000–7999 (a pair drawn at random could go to a second phone of this process before the
 * first one's baresip bound it), below the kernel's ephemeral ports (32768+) that every connection in the
 * suite takes from, so the second one is not handed to someone else meanwhile.
 */
export function sipPortPair(host = '127.0.0.1'): Promise<number> {
  return sipPairTurn((port) => tcpUdpFree(port, host), 'pair of SIP ports');
}
