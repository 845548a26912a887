// The event-socket connect's limit (media-app/media-server/fsmrf/connect.ts SWITCH_CONNECT_MS, the default
// of MEDIA_SERVER_CONNECT_TIMEOUT_MS) on virtual time: armed on the timers it is given (the link's), it
// fires at the limit and not before, longer than a leg's end (leg-end.ts LEG_END_MS): the two bound
// different phases (a leg is never made on a connect in flight; a lost link's legs end on their own
// deadline, fsmrf-server-lost.test.ts). Past the limit the connection is closed and nothing is left armed.
import { expect } from 'chai';
import { once } from 'node:events';
import net from 'node:net';
import { connectSwitch, SwitchConnectError, SWITCH_CONNECT_MS } from '../../../media-app/media-server/fsmrf/connect';
import { LEG_END_MS } from '../../../media-app/media-server/fsmrf/leg-end';
import { loadMediaAppConfig } from '../../../media-app/kit/config';
import { watchedTimers } from '../../support/virtual-timers';
import { bounded, boundedOnce } from '../../../testkit/bounded';

describe("media-app fsmrf backend: the event-socket connect's limit on virtual time", function () {
  this.timeout(10_000);
  let server: net.Server | null = null;
  const accepted: net.Socket[] = [];

  afterEach(async () => {
    for (const s of accepted.splice(0)) s.destroy();
    if (server) await new Promise((r) => server!.close(r));
    server = null;
  });

  it('MEDIA_SERVER_CONNECT_TIMEOUT_MS defaults to it, and it is longer than the leg end', () => {
    expect(loadMediaAppConfig({}).mediaServerConnectTimeoutMs).to.equal(SWITCH_CONNECT_MS);
    expect(SWITCH_CONNECT_MS).to.be.greaterThan(LEG_END_MS);
  });

  it('a switch that accepts and never speaks: not settled before the limit, a SwitchConnectError at it, the socket closed, nothing armed', async () => {
    // it reads what it is sent (so it sees the client's FIN) and writes nothing
    server = net.createServer((s) => {
      s.on('error', () => undefined);
      accepted.push(s);
      s.resume();
    });
    server.on('error', () => undefined);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as net.AddressInfo).port;
    const w = watchedTimers();
    const armed = boundedOnce(w.armings, 'set', 2000, "the connect's deadline armed");
    const connected = boundedOnce(server, 'connection', 5000, 'the TCP connection');
    let outcome: unknown = null;
    const done = connectSwitch({}, { host: '127.0.0.1', port, password: 'ClueCon' }, { timeoutMs: SWITCH_CONNECT_MS, listenAddress: '127.0.0.1', timers: w.timers }).then(
      () => (outcome = 'connected'),
      (e: unknown) => (outcome = e),
    );
    expect((await armed)[0]).to.equal(SWITCH_CONNECT_MS);
    const [sock] = (await connected) as [net.Socket];
    // past the leg end's deadline, still within the connect's
    w.clock.advance(LEG_END_MS);
    w.clock.advance(SWITCH_CONNECT_MS - LEG_END_MS - 1);
    await new Promise((r) => setImmediate(r));
    expect(outcome, 'not before the limit').to.equal(null);
    expect(sock.closed).to.equal(false);
    w.clock.advance(1);
    await bounded(done, 1000, 'the connect settled at its limit');
    expect(outcome).to.be.instanceOf(SwitchConnectError);
    expect((outcome as Error).message).to.equal(`event socket 127.0.0.1:${port}: no ready answer within ${SWITCH_CONNECT_MS} ms`);
    expect(w.clock.pending(), 'nothing left armed').to.equal(0);
    // the client side is gone: the server's socket closes (no half-open socket left behind)
    if (!sock.closed) await boundedOnce(sock, 'close', 2000, "the switch's side closed");
  });

  it('a connection that cannot be made at all (a local address Node refuses): a SwitchConnectError at once, no deadline armed', async () => {
    // review: the deadline was armed before the connection was made; a constructor that threw left it
    // armed, and at the limit its callback read the connection in its temporal dead zone (uncaught)
    const w = watchedTimers();
    const err = await connectSwitch(
      {},
      { host: '127.0.0.1', port: 9, password: 'ClueCon' },
      { timeoutMs: SWITCH_CONNECT_MS, listenAddress: '127.0.0.1', localAddress: 'not-an-address', timers: w.timers },
    ).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(SwitchConnectError);
    expect((err as Error).message).to.match(/^event socket 127\.0\.0\.1:9: /);
    expect(w.clock.pending(), 'nothing armed').to.equal(0);
  });
});
