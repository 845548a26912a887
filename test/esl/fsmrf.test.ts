// The unmodified drachtio-fsmrf from npm against our event socket: Mrf.connect() authenticates,
// subscribes to HEARTBEAT, asks `sofia status` and resolves to a MediaServer whose properties are
// what the switch reports. Mrf.connect never uses its Srf (only createEndpoint / connectCaller send
// SIP through it), so the Srf here is not connected to anything.
import { expect } from 'chai';
import { once } from 'node:events';
import os from 'node:os';
import Mrf, { type MediaServer } from 'drachtio-fsmrf';
import Srf from 'drachtio-srf';
import { ESL_VERSION, type EslServer } from '../../esl/server';
import { PASSWORD, startServer } from '../../testkit/esl/client';

describe('esl: drachtio-fsmrf connects to the event socket', () => {
  let server: EslServer;
  let port: number;
  let ms: MediaServer | undefined;

  beforeEach(async () => {
    ({ server, port } = await startServer({ profile: { name: 'drachtio_mrf', address: '127.0.0.1:5080' }, maxSessions: 250 }));
  });
  afterEach(async () => {
    ms?.disconnect();
    ms = undefined;
    await server.close();
  });

  it('Mrf.connect resolves to a MediaServer with the drachtio_mrf SIP address from sofia status', async () => {
    ms = await new Mrf(new Srf()).connect({ address: '127.0.0.1', port, secret: PASSWORD, listenAddress: '127.0.0.1', listenPort: 0 });
    expect(ms.connected()).to.equal(true);
    expect(ms.address).to.match(/127\.0\.0\.1$/);
    expect(ms.sip.ipv4.udp.address).to.equal('127.0.0.1:5080');
    expect(ms.hasCapability(['ipv4', 'udp'])).to.equal(true);
    expect(ms.hasCapability(['ipv4', 'dtls'])).to.equal(false);
    expect(ms.hasCapability(['ipv6', 'udp'])).to.equal(false);
    expect(server.connections.size).to.equal(1);
  });

  it('reads HEARTBEAT (it subscribed in json) into maxSessions, currentSessions, hostname, version and idle CPU', async () => {
    ms = await new Mrf(new Srf()).connect({ address: '127.0.0.1', port, secret: PASSWORD, listenAddress: '127.0.0.1', listenPort: 0 });
    const beat = new Promise<void>((resolve) => ms!.conn.on('esl::event::HEARTBEAT::**', () => resolve()));
    server.heartbeat();
    await beat;
    expect(ms.maxSessions).to.equal(250);
    expect(ms.currentSessions).to.equal(0);
    expect(ms.cps).to.equal(0);
    expect(ms.hostname).to.equal(os.hostname());
    expect(ms.fsVersion).to.equal(ESL_VERSION);
    expect(ms.cpuIdle).to.be.within(0, 100);
  });

  it('api through fsmrf: status, and -ERR for a command the switch does not have', async () => {
    ms = await new Mrf(new Srf()).connect({ address: '127.0.0.1', port, secret: PASSWORD, listenAddress: '127.0.0.1', listenPort: 0 });
    expect(await ms.api('status')).to.match(/^UP 0 years/);
    expect(await ms.api('originate sofia/x &park')).to.equal('-ERR originate Command not found!\n');
    expect(await ms.api('uuid_dump 00000000-0000-0000-0000-000000000000')).to.equal('-ERR No such channel!\n');
  });

  it('disconnect: fsmrf sends exit and the server drops the connection', async () => {
    ms = await new Mrf(new Srf()).connect({ address: '127.0.0.1', port, secret: PASSWORD, listenAddress: '127.0.0.1', listenPort: 0 });
    const gone = once(server, 'disconnected');
    ms.disconnect();
    ms = undefined;
    await gone;
    expect(server.connections.size).to.equal(0);
  });
});
