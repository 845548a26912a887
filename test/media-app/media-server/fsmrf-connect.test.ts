// Connecting the fsmrf backend to a switch (media-app/media-server/fsmrf/connect.ts), against our event
// socket (esl/) and plain loopback TCP servers: a wrong password, a refused port and a switch that
// accepts and never speaks each end in a SwitchConnectError within the deadline, with the connection
// closed (no reconnect loop left behind), and the password appears neither in the error nor in anything
// the process prints, DEBUG=drachtio:* included.
import { runTsChild } from '../../../testkit/child-process';
import { expect } from 'chai';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import { FsmrfBackend } from '../../../media-app/media-server/fsmrf/backend';
import { SwitchConnectError } from '../../../media-app/media-server/fsmrf/connect';
import { freePort } from '../../../testkit/ports';
import { startServer } from '../../../testkit/esl/client';
import type { EslServer } from '../../../esl/server';

const ROOT = path.resolve(__dirname, '../../..');
const GOOD = 'esl+Good#Secret&42';
const BAD = 'esl+Bad#Secret&99';

/** The connect's outcome: the error it rejected with and how long it took. */
async function connectOutcome(port: number, password: string, connectTimeoutMs = 3000): Promise<{ err: Error | null; ms: number }> {
  const started = Date.now();
  const err = await FsmrfBackend.connect({}, { host: '127.0.0.1', port, password }, { connectTimeoutMs }).then(
    (b) => (b.close(), null),
    (e: unknown) => e as Error,
  );
  return { err, ms: Date.now() - started };
}

/** A loopback TCP server whose accepted sockets are handed to `onSocket` (each with its error handler). */
async function tcpServer(port: number, onSocket: (s: net.Socket) => void): Promise<net.Server> {
  const server = net.createServer((s) => {
    s.on('error', () => undefined);
    onSocket(s);
  });
  server.on('error', () => undefined);
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

describe('media-app fsmrf backend: connecting to the switch', function () {
  this.timeout(20_000);
  let esl: EslServer | undefined;
  const servers: net.Server[] = [];
  const sockets: net.Socket[] = [];

  afterEach(async () => {
    await esl?.close();
    esl = undefined;
    for (const s of sockets.splice(0)) s.destroy();
    for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  });

  it('a wrong password: rejects at once, naming the refusal, never the password; the connection is closed', async () => {
    const started = await startServer({ password: GOOD });
    esl = started.server;
    let connections = 0;
    esl.on('rejected', () => connections++);
    const { err, ms } = await connectOutcome(started.port, BAD);
    expect(err).to.be.instanceOf(SwitchConnectError);
    expect(err!.message).to.equal(`event socket 127.0.0.1:${started.port}: the switch refused the password`);
    expect(ms).to.be.below(2000);
    expect(`${err!.message} ${err!.stack}`).not.to.include(BAD);
    expect(connections, 'one attempt').to.equal(1);
    // and the right one still connects (the refusal did not lock this address out)
    expect((await connectOutcome(started.port, GOOD)).err).to.equal(null);
  });

  // fsmrf's MediaServer throws inside modesl's reply callback when the profile is missing: an uncaught
  // exception that ended the process on a misconfigured switch's answer
  it('a switch with no drachtio_mrf profile: rejects naming it; nothing thrown past the connect', async () => {
    const started = await startServer({ password: GOOD, profile: { name: 'other_profile', address: '127.0.0.1:5080' } });
    esl = started.server;
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    const listeners = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    process.on('uncaughtException', onUncaught);
    try {
      const { err } = await connectOutcome(started.port, GOOD);
      expect(err).to.be.instanceOf(SwitchConnectError);
      expect(err!.message).to.equal(`event socket 127.0.0.1:${started.port}: the switch has no drachtio_mrf SIP profile with an IPv4 address (sofia status)`);
      // a reply still in flight would throw now
      await new Promise((r) => setImmediate(r));
      expect(uncaught).to.deep.equal([]);
    } finally {
      process.off('uncaughtException', onUncaught);
      for (const l of listeners) process.on('uncaughtException', l);
    }
  });

  it('a refused port: rejects at once with ECONNREFUSED, and modesl does not retry behind it', async () => {
    const port = await freePort();
    const { err, ms } = await connectOutcome(port, GOOD);
    expect(err).to.be.instanceOf(SwitchConnectError);
    expect(err!.message).to.match(new RegExp(`^event socket 127\\.0\\.0\\.1:${port}: ECONNREFUSED`));
    expect(ms).to.be.below(2000);
    // drachtio-modesl reconnects after 255 ms, 433 ms, 737 ms... unless the connection was closed:
    // a server opened on the port now must see no one within the first three retries
    let reconnects = 0;
    servers.push(await tcpServer(port, (s) => (reconnects++, sockets.push(s))));
    await new Promise((r) => setTimeout(r, 1500));
    expect(reconnects, 'reconnect attempts after the failure').to.equal(0);
  });

  it('a switch that accepts and never speaks: the deadline fires, the socket is closed', async () => {
    const port = await freePort();
    const accepted: net.Socket[] = [];
    // it reads what it is sent (so it sees the client's FIN) and writes nothing
    servers.push(await tcpServer(port, (s) => (accepted.push(s), sockets.push(s), s.resume())));
    const { err, ms } = await connectOutcome(port, GOOD, 300);
    expect(err).to.be.instanceOf(SwitchConnectError);
    expect(err!.message).to.equal(`event socket 127.0.0.1:${port}: no ready answer within 300 ms`);
    expect(ms).to.be.within(250, 1500);
    expect(accepted).to.have.length(1);
    // the client side is gone: the blackhole's socket closes (no half-open socket left behind)
    if (!accepted[0]!.closed) await once(accepted[0]!, 'close');
  });

  it('with DEBUG=drachtio:* neither password appears in anything the process prints', async function () {
    this.timeout(30_000);
    const started = await startServer({ password: GOOD });
    esl = started.server;
    // bounded: a connect that never settles fails here, with what was printed so far
    const { out, code } = await runTsChild(ROOT, 'test/media-app/media-server/connect-child.ts', {
      DEBUG: 'drachtio:*',
      DEBUG_COLORS: 'no',
      ESL_PORT: String(started.port),
      ESL_GOOD_PASSWORD: GOOD,
      ESL_BAD_PASSWORD: BAD,
    });
    expect(out, 'fsmrf debug output was on').to.include('drachtio:fsmrf');
    expect(out).not.to.include(GOOD);
    expect(out).not.to.include(BAD);
    expect(out).to.include('connected');
    expect(out).to.include('wrong password: SwitchConnectError: event socket 127.0.0.1:');
    expect(code, out).to.equal(0);
  });
});
