// The outbound WebSockets added for the STT vendors (media-engine/stt/cloud.ts: Deepgram, Cartesia,
// ElevenLabs), ConversationRelay's app socket (media-app/twiml/relay-socket.ts) and the Twilio Media Streams
// socket (media-app/streams/twilio-stream.ts) pass the egress
// policy: loopback, private and link-local destinations are refused before any connection, and a
// loopback server is reached only once the operator's allowlist (EGRESS_ALLOW_CIDRS) opens it.
import { expect } from 'chai';
import { WebSocketServer } from 'ws';
import type { AddressInfo } from 'node:net';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';
import { CloudSttStream, type CloudWire } from '../../media-engine/stt/cloud';
import { openRelaySocket, RelayConnectError } from '../../media-app/twiml/relay-socket';
import pino from 'pino';
import { TwilioStream, TwilioStreamError } from '../../media-app/streams/twilio-stream';
import { testDb } from '../../testkit/db';
import { repos } from '../../core/repos';

const HOSTS = ['127.0.0.1', '10.0.0.1', '169.254.169.254'];
const policy = (allow = '') => new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: allow }));

function wire(url: string): CloudWire {
  return { vendor: 'testvendor', url: new URL(url), headers: {}, encode: (pcm) => pcm, endMessage: null, endTimeoutMs: 500, onMessage: () => undefined, isLast: () => false };
}

/** The stream's first error, or null once it closed without one. */
function outcome(s: CloudSttStream): Promise<string | null> {
  return new Promise((resolve) => {
    s.once('error', (e: Error) => resolve(e.message));
    s.once('close', () => resolve(null));
  });
}

describe('security: the new vendor and relay sockets pass the egress policy', function () {
  this.timeout(20_000);
  let server: WebSocketServer;
  let port = 0;
  let upgrades = 0;
  before(async () => {
    server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    server.on('connection', () => upgrades++);
    await new Promise<void>((r) => server.once('listening', () => r()));
    port = (server.address() as AddressInfo).port;
  });
  after(() => server.close());

  it('STT vendor stream: loopback, private and link-local refused before connecting; loopback allowed by the allowlist', async () => {
    const before = upgrades;
    for (const host of HOSTS) {
      const s = new CloudSttStream(wire(`ws://${host}:${port}/v1/listen`), policy(), 1 << 16);
      expect(await outcome(s), host).to.match(/^testvendor: the egress policy refused the vendor URL/);
    }
    expect(upgrades, 'no connection made').to.equal(before);
    const open = new CloudSttStream(wire(`ws://127.0.0.1:${port}/v1/listen`), policy('127.0.0.0/8'), 1 << 16);
    await new Promise<void>((r, j) => {
      const t = setInterval(() => upgrades > before && (clearInterval(t), r()), 20);
      open.once('error', (e: Error) => (clearInterval(t), j(e)));
    });
    open.abort();
  });

  it('ConversationRelay app socket: loopback, private and link-local refused; loopback allowed by the allowlist', async () => {
    const before = upgrades;
    for (const host of HOSTS) {
      const err = await openRelaySocket(policy(), `ws://${host}:${port}/relay`, 'token', 2000).then(
        () => null,
        (e: Error) => e,
      );
      expect(err, host).to.be.instanceOf(RelayConnectError);
      expect(err!.message, host).to.match(/refused by the egress policy/);
    }
    expect(upgrades, 'no connection made').to.equal(before);
    const ws = await openRelaySocket(policy('127.0.0.0/8'), `ws://127.0.0.1:${port}/relay`, 'token', 2000);
    expect(upgrades).to.equal(before + 1);
    ws.close();
  });

  it('Twilio Media Streams socket: loopback, private and link-local refused before connecting; loopback allowed by the allowlist', async () => {
    // the refusal comes before the call is looked up: no live call is needed (an empty registry); the
    // handshake is signed with the account's AuthToken, read from its customer row
    const db = await testDb();
    const customer = await repos(db).customers.create({ email: `egress${Date.now()}@example.test`, status: 'active', name: 'egress' });
    const deps = { egress: null as unknown as EgressPolicy, calls: new Map(), db, config: { jwtSecret: 'vendor-sockets-egress-secret' } };
    const stream = (allow: string, host: string) =>
      new TwilioStream({ ...deps, egress: policy(allow) } as unknown as ConstructorParameters<typeof TwilioStream>[0], pino({ level: 'silent' }), {
        callId: '00000000-0000-4000-8000-000000000001',
        customerId: customer.id,
        url: `ws://${host}:${port}/stream`,
        track: 'inbound_track',
        bidirectional: true,
        parameters: {},
      });
    const before = upgrades;
    for (const host of HOSTS) {
      const err = await stream('', host)
        .start()
        .then(
          () => null,
          (e: Error) => e,
        );
      expect(err, host).to.be.instanceOf(TwilioStreamError);
      expect(err!.message, host).to.match(/^url refused/);
    }
    expect(upgrades, 'no connection made').to.equal(before);
    // allowed: it connects, then stops because no such call is live on this node
    const err = await stream('127.0.0.0/8', '127.0.0.1')
      .start()
      .then(
        () => null,
        (e: Error) => e,
      );
    expect(err?.message).to.equal('the call is not live on this node');
    expect(upgrades).to.equal(before + 1);
  });
});
