// Issue 52, "a crash is one process, not the platform": the HTTP and WebSocket fault battery. The platform's
// processes as start.sh runs them (sip-server, media-app, control-api: child processes, testkit/reliability/
// processes.ts); every listener (REST, the provisioning URL, /v1.0/ws, the service-agent socket, media
// stream attachment, media-app's stream relay, SIP over WebSocket, SIP over TCP, the drachtio port, the
// three /metrics listeners) gets TCP resets at every stage, half-open and slow clients, oversized and
// malformed requests, upgrades and frames (faults/battery.ts). Not one process may exit or report an
// unhandled error, and each answers its protocol afterwards.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type net from 'node:net';
import { Redis } from 'ioredis';
import { buildTestApp, createFixture, TEST_JWT_SECRET, type Fixture } from '../../testkit/api';
import { ProcessPlatform } from '../../testkit/reliability/processes';
import { RELAY_SECRET_HEADER, relayAdKey } from '../../core/streams/relay';
import { slow, stagesOf, type Listener } from './faults/battery';
import { connect, head, readFor, reset, sleep, upgradeHeaders } from './faults/raw-socket';

const FOREIGN = 'http://evil.example';

/** Listens for the answer of one well-formed upgrade: the status line. */
async function upgradeStatus(l: Listener): Promise<string> {
  const s = await connect(l.port);
  if (!s) return 'refused';
  const u = l.accept!();
  s.write(head(u.path, upgradeHeaders(l.port, u.headers)));
  const got = await readFor(s, 5000);
  reset(s);
  return got.split('\r\n', 1)[0]!;
}

async function sipOptionsOverTcp(port: number): Promise<string> {
  const s = await connect(port);
  if (!s) return 'refused';
  s.write(
    `OPTIONS sip:127.0.0.1:${port} SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:5999;branch=z9hG4bK${randomUUID().slice(0, 8)}\r\nMax-Forwards: 70\r\n` +
      `From: <sip:probe@127.0.0.1>;tag=1\r\nTo: <sip:127.0.0.1>\r\nCall-ID: ${randomUUID()}\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n`,
  );
  const got = await readFor(s, 5000);
  reset(s);
  return got.split('\r\n', 1)[0]!;
}

describe('reliability: HTTP and WebSocket faults end no process', function () {
  this.timeout(110_000);
  let p: ProcessPlatform;
  let f: Fixture;
  let relaySecret: string;
  let listeners: Listener[];

  before(async function () {
    this.timeout(120_000);
    const t = await buildTestApp();
    f = await createFixture(t.ctx);
    await t.close();
    p = await ProcessPlatform.start({ jwtSecret: TEST_JWT_SECRET });
    const redis = new Redis(process.env.TEST_REDIS_URL!);
    const ad = await redis.get(p.prefix + relayAdKey(p.env['media-app'].MEDIA_APP_NODE_ID!));
    redis.disconnect();
    relaySecret = (JSON.parse(ad!) as { secret: string }).secret;
    const { http, sipWs, relay, sip, drachtio, apiMetrics, sipMetrics, mediaMetrics } = p.ports;
    const own = `http://127.0.0.1:${http}`;
    const call = randomUUID();
    listeners = [
      { name: 'REST', port: http, kind: 'http', path: '/v1.0/customer' },
      { name: 'provisioning URL', port: http, kind: 'http', path: '/provisioning/extension?token=nope' },
      {
        name: '/v1.0/ws',
        port: http,
        kind: 'http',
        path: '/v1.0/ws',
        accept: () => ({ path: `/v1.0/ws?accesskey=${f.accesskey}`, headers: {} }),
        refuse: [() => ({ path: '/v1.0/ws', headers: {} }), () => ({ path: '/v1.0/ws', headers: { Origin: FOREIGN, Cookie: `token=${f.token}` } })],
      },
      {
        name: 'service-agent socket',
        port: http,
        kind: 'http',
        path: '/v1.0/service_agents/ws',
        accept: () => ({ path: `/v1.0/service_agents/ws?token=${f.token}`, headers: {} }),
        refuse: [() => ({ path: '/v1.0/service_agents/ws', headers: {} }), () => ({ path: `/v1.0/service_agents/ws?accesskey=${f.accesskey}`, headers: {} })],
      },
      {
        name: 'media stream attachment',
        port: http,
        kind: 'http',
        path: `/v1.0/calls/${call}/media_stream`,
        refuse: [
          () => ({ path: `/v1.0/calls/${call}/media_stream`, headers: {} }),
          () => ({ path: `/v1.0/calls/${call}/media_stream?accesskey=${f.accesskey}&encapsulation=none`, headers: {} }),
          () => ({ path: `/v1.0/calls/${call}/media_stream`, headers: { Origin: FOREIGN, Cookie: `token=${f.token}` } }),
        ],
      },
      {
        name: "media-app's stream relay",
        port: relay,
        kind: 'http',
        path: `/relay/call/${call}`,
        accept: () => ({ path: `/relay/call/${call}`, headers: { [RELAY_SECRET_HEADER]: relaySecret } }),
        refuse: [() => ({ path: `/relay/call/${call}`, headers: { [RELAY_SECRET_HEADER]: 'wrong' } }), () => ({ path: '/relay/nothing', headers: { [RELAY_SECRET_HEADER]: relaySecret } })],
      },
      {
        name: 'SIP over WebSocket',
        port: sipWs,
        kind: 'http',
        path: '/',
        accept: () => ({ path: '/', headers: { Origin: own, 'Sec-WebSocket-Protocol': 'sip' } }),
        refuse: [() => ({ path: '/', headers: { Origin: FOREIGN, 'Sec-WebSocket-Protocol': 'sip' } }), () => ({ path: '/', headers: { Origin: own } })],
      },
      { name: 'SIP over TCP', port: sip, kind: 'tcp', path: '' },
      { name: 'drachtio', port: drachtio, kind: 'tcp', path: '' },
      { name: "control-api's /metrics", port: apiMetrics, kind: 'http', path: '/metrics' },
      { name: "sip-server's /metrics", port: sipMetrics, kind: 'http', path: '/metrics' },
      { name: "media-app's /metrics", port: mediaMetrics, kind: 'http', path: '/metrics' },
    ];
  });

  after(async () => {
    await p?.close();
  });

  /** Every process up, no unhandled error in any output. */
  function expectAllAlive(): void {
    expect(p.dead(), `processes that exited:\n${p.obituaries()}`).to.deep.equal([]);
    expect(p.unhandled(), 'unhandled errors in the processes’ output').to.deep.equal([]);
  }

  it('a reset after a refused upgrade ends no process (the finding)', async () => {
    for (const l of listeners.filter((x) => x.refuse)) {
      for (const u of l.refuse!) {
        for (let i = 0; i < 5; i++) {
          const s = await connect(l.port);
          s?.write(head(u().path, upgradeHeaders(l.port, u().headers)));
          reset(s);
        }
      }
    }
    await sleep(1000);
    expectAllAlive();
  });

  it('every listener survives every stage; each process still answers afterwards', async () => {
    const keep: net.Socket[] = [];
    const started = Date.now();
    // slow clients (a byte a second, 5 s) on every listener at once, while the stages run
    const slowOnes = Promise.all(listeners.map((l) => slow(l, 5000)));
    const ran: string[] = [];
    await Promise.all(
      listeners.map(async (l) => {
        for (const st of stagesOf(l)) {
          await st.run(l, keep);
          ran.push(`${l.name}: ${st.name}`);
        }
      }),
    );
    await slowOnes;
    for (const s of keep) reset(s);
    await sleep(1000);
    expect(ran.length, 'stages run').to.be.above(230);
    expect(Date.now() - started, 'battery time').to.be.below(60_000);
    expectAllAlive();
    // and each answers its protocol
    expect((await fetch(`http://127.0.0.1:${p.ports.http}/healthz`)).status).to.equal(200);
    for (const port of [p.ports.apiMetrics, p.ports.sipMetrics, p.ports.mediaMetrics]) expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status, `metrics ${port}`).to.equal(200);
    for (const l of listeners.filter((x) => x.accept)) expect(await upgradeStatus(l), l.name).to.match(/^HTTP\/1\.1 101/);
    expect(await sipOptionsOverTcp(p.ports.sip)).to.match(/^SIP\/2\.0 \d{3}/);
    expectAllAlive();
  });
});
