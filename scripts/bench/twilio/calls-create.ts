/**
 * Twilio's `POST /2010-04-01/Accounts/{sid}/Calls.json` → INVITE at the far end, against
 * `POST /v1.0/calls` → INVITE in the same run (issue 36: p99 within 1.2×). control-api (the app on a
 * loopback port), sip-server and media-app (startPlatform) in this process, one Postgres database and
 * Redis prefix; the far end is a UDP UAS that timestamps each INVITE and answers 486 at once. The two
 * kinds of request alternate at --rate, each to its own Request-URI user.
 *
 *   source .data/env && npx tsx scripts/bench/twilio/calls-create.ts [--calls 200] [--rate 20]
 */
process.env.LOG_LEVEL ??= 'silent';
import dgram from 'node:dgram';
import http from 'node:http';
import os from 'node:os';
import { buildTestApp, createFixture } from '../../../testkit/api';
import { startPlatform } from '../../../testkit/media-app/harness';
import { serveApp } from '../../../testkit/twilio';
import { accountSid } from '../../../core/twilio/sids';
import { twilioAuthToken } from '../../../core/twilio/auth-token';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const CALLS = arg('calls', 200);
const RATE = arg('rate', 20);
if (!(CALLS > 0 && CALLS <= 2000 && RATE > 0 && RATE <= 200)) {
  console.error('usage: calls-create.ts [--calls 1..2000] [--rate 1..200]');
  process.exit(2);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};

/** Notes when each INVITE arrives (by Request-URI user) and rejects it with 486. */
async function timingUas(): Promise<{ port: number; arrivals: Map<string, number>; close(): void }> {
  const arrivals = new Map<string, number>();
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  sock.on('message', (buf, rinfo) => {
    const at = performance.now();
    const raw = buf.toString();
    const m = /^INVITE sip:([^@\s]+)@/.exec(raw);
    if (!m) return;
    if (!arrivals.has(m[1]!)) arrivals.set(m[1]!, at);
    const lines = raw.split('\r\n');
    const keep = lines.filter((l) => /^(Via|From|Call-ID|CSeq|v|f|i):/i.test(l));
    const to = lines.find((l) => /^(To|t):/i.test(l)) ?? 'To: <sip:x@127.0.0.1>';
    sock.send(['SIP/2.0 486 Busy Here', ...keep, /;tag=/.test(to) ? to : `${to};tag=u${m[1]}`, 'Content-Length: 0', '', ''].join('\r\n'), rinfo.port, rinfo.address);
  });
  return { port: sock.address().port, arrivals, close: () => sock.close() };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
function post(base: string, path: string, body: string, headers: Record<string, string>): Promise<number> {
  const u = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: `${u.pathname}${u.search}`, method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function main(): Promise<void> {
  const p = await startPlatform({ MEDIA_WORKERS: '1', EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
  const t = await buildTestApp({ env: { REDIS_KEY_PREFIX: p.config.redisKeyPrefix, RATE_LIMIT_SCALE: '0', EGRESS_ALLOW_CIDRS: '127.0.0.0/8' } });
  const api = await serveApp(t.app);
  const f = await createFixture(t.ctx);
  const sid = accountSid(f.customer.id);
  const basic = `Basic ${Buffer.from(`${sid}:${twilioAuthToken(t.ctx.config.jwtSecret, f.customer.id, 0)}`).toString('base64')}`;
  const uas = await timingUas();
  const sent = new Map<string, { kind: 'v1' | 'twilio'; t0: number }>();
  let failed = 0;
  try {
    console.log(
      `machine: ${os.cpus().length} cores, load ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}; ${CALLS} calls at ${RATE}/s, alternating`,
    );
    const start = performance.now();
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < CALLS; i++) {
      const wait = start + (i * 1000) / RATE - performance.now();
      if (wait > 0) await sleep(wait);
      const kind = i % 2 === 0 ? 'v1' : 'twilio';
      const user = `${kind}${i}`;
      const target = `sip:${user}@127.0.0.1:${uas.port}`;
      inflight.push(
        (async () => {
          const t0 = performance.now();
          sent.set(user, { kind, t0 });
          const status = await createCall(kind, target, { baseUrl: api.baseUrl, accesskey: f.accesskey, sid, basic });
          if (status >= 300) {
            failed++;
            sent.delete(user);
          }
        })(),
      );
    }
    await Promise.all(inflight);
    const end = performance.now() + 10_000;
    while (uas.arrivals.size < sent.size && performance.now() < end) await sleep(100);
    report(sent, uas.arrivals, failed);
  } finally {
    await sleep(1500);
    uas.close();
    await api.close();
    await t.close();
    await p.close();
  }
}

/** One call created the way `kind` asks: POST /v1.0/calls (JSON) or Twilio's Calls.json (form, Basic auth); the answer's status. */
function createCall(kind: 'v1' | 'twilio', target: string, to: { baseUrl: string; accesskey: string; sid: string; basic: string }): Promise<number> {
  if (kind === 'v1') {
    return post(
      to.baseUrl,
      `/v1.0/calls?accesskey=${to.accesskey}`,
      JSON.stringify({ source: { type: 'sip', target: 'bench@example.test' }, destinations: [{ type: 'sip', target }], actions: [{ type: 'hangup' }] }),
      { 'content-type': 'application/json' },
    );
  }
  return post(to.baseUrl, `/2010-04-01/Accounts/${to.sid}/Calls.json`, new URLSearchParams({ To: target, From: 'sip:bench@example.test', Twiml: '<Response><Hangup/></Response>' }).toString(), {
    'content-type': 'application/x-www-form-urlencoded',
    authorization: to.basic,
  });
}

/** Request → INVITE at the UAS per kind: percentiles, and the p99 ratio against the target. */
function report(sent: Map<string, { kind: 'v1' | 'twilio'; t0: number }>, arrivals: Map<string, number>, failed: number): void {
  const by: Record<'v1' | 'twilio', number[]> = { v1: [], twilio: [] };
  for (const [user, s] of sent) {
    const at = arrivals.get(user);
    if (at !== undefined) by[s.kind].push(at - s.t0);
  }
  const f1 = (x: number) => x.toFixed(1);
  const row = (name: string, xs: number[]) => `| ${name} | ${xs.length} | ${f1(pct(xs, 50))} | ${f1(pct(xs, 90))} | ${f1(pct(xs, 99))} | ${f1(Math.max(...xs))} |`;
  console.log(
    `\nload at end ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}; failed POSTs ${failed}; INVITEs missing ${sent.size - by.v1.length - by.twilio.length}`,
  );
  console.log('| request → INVITE at UAS | n | p50 ms | p90 ms | p99 ms | max ms |');
  console.log('|---|---:|---:|---:|---:|---:|');
  console.log(row('baseline: POST /v1.0/calls', by.v1));
  console.log(row('POST …/Calls.json', by.twilio));
  const ratio = pct(by.twilio, 99) / pct(by.v1, 99);
  console.log(`\np99 ratio Calls.json / v1.0 = ${ratio.toFixed(2)}; target ≤ 1.2: ${ratio <= 1.2 ? 'met' : 'NOT met'}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
