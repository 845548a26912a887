// media-app's drachtio connection at shutdown when sip-server has already gone (both stop at once on
// SIGINT): the closer must not throw, and drachtio-srf must stop trying to reconnect.
import { expect } from 'chai';
import { connectSrf, disconnectSrf, type Srf } from '../../media-app/kit/srf';
import { SECRET, startServer, sleep } from '../sip-server/drachtio/harness';

describe('media-app: disconnecting from a sip-server that has gone', function () {
  this.timeout(20_000);

  async function connectedThenServerGone(): Promise<{ srf: Srf; reconnects: () => number }> {
    const s = await startServer();
    const srf = await connectSrf({ host: '127.0.0.1', port: s.drachtioPort, secret: SECRET, retryMs: 200 });
    let n = 0;
    (srf as unknown as { on(e: string, f: () => void): void }).on('reconnecting', () => {
      n++;
    });
    (srf as unknown as { on(e: string, f: () => void): void }).on('error', () => undefined);
    await s.close();
    await sleep(300);
    expect(n, 'drachtio-srf started reconnecting').to.be.greaterThan(0);
    return { srf, reconnects: () => n };
  }

  it('drachtio-srf alone: disconnect() throws and the reconnect attempts go on (why disconnectSrf exists)', async () => {
    const { srf, reconnects } = await connectedThenServerGone();
    expect(() => srf.disconnect()).to.throw();
    const before = reconnects();
    await sleep(1000);
    expect(reconnects()).to.be.greaterThan(before);
    disconnectSrf(srf); // stop it for the rest of the suite
  });

  it('disconnectSrf: no throw, and no reconnect attempt afterwards', async () => {
    const { srf, reconnects } = await connectedThenServerGone();
    expect(() => disconnectSrf(srf)).to.not.throw();
    const before = reconnects();
    await sleep(1200);
    expect(reconnects()).to.equal(before);
  });

  it('disconnectSrf on a live connection closes it', async () => {
    const s = await startServer();
    try {
      const srf = await connectSrf({ host: '127.0.0.1', port: s.drachtioPort, secret: SECRET });
      expect(s.drachtio.server.connections.size).to.equal(1);
      disconnectSrf(srf);
      await sleep(300);
      expect(s.drachtio.server.connections.size).to.equal(0);
    } finally {
      await s.close();
    }
  });
});
