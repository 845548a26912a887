// Several applications on one sip-server: shared INVITE routing, an application leaving mid-call,
// and the outbound-connection mode (srf.listen(), the server dials the application).
import { expect } from 'chai';
import path from 'node:path';
import { freePort } from '../../support/ports';
import { connectSrf, disconnectSrf, killAllSipp, SCENARIOS, SDP, Srf, SECRET, sipp, sleep, startServer, until, type Server } from './harness';

describe('drachtio: several applications on one sip-server', function () {
  this.timeout(30000);
  let s: Server | undefined;
  const apps: any[] = [];

  afterEach(async () => {
    killAllSipp();
    for (const a of apps.splice(0)) disconnectSrf(a);
    await s?.close();
    s = undefined;
  });

  async function caller(args: string[]) {
    const port = await freePort();
    return sipp([...args, `127.0.0.1:${s!.sipPort}`, '-i', '127.0.0.1', '-p', String(port)]).done;
  }

  it('two applications routed for INVITE share new calls round-robin', async () => {
    s = await startServer();
    const counts = [0, 0];
    for (const i of [0, 1]) {
      const srf = await connectSrf(s.drachtioPort);
      apps.push(srf);
      srf.invite(async (req: any, res: any) => {
        counts[i]++;
        await srf.createUAS(req, res, { localSdp: SDP });
      });
    }
    await until(() => s!.drachtio.server.registry.wants('invite') && s!.drachtio.server.connections.size === 2, 2000, 'routes');
    await sleep(100);
    const r = await caller(['-sn', 'uac', '-m', '6', '-r', '10', '-d', '100', '-timeout', '15s']);
    expect(r.code, r.errors).to.equal(0);
    expect(counts).to.deep.equal([3, 3]);
  });

  it('an application that disconnects mid-call does not take the server down; later calls still work', async () => {
    s = await startServer();
    const leaver = await connectSrf(s.drachtioPort);
    leaver.invite(async (req: any, res: any) => {
      await srf_createUAS(leaver, req, res);
      leaver.disconnect(); // gone with a live dialog
    });
    // the orphaned dialog: the caller's BYE is answered 481 (no application owns the dialog any more)
    const r1 = await caller(['-sf', path.join(SCENARIOS, 'uac-bye-481.xml'), '-m', '1', '-timeout', '10s']);
    expect(r1.code, r1.errors).to.equal(0);
    expect(s.drachtio.server.connections.size).to.equal(0);

    const next = await connectSrf(s.drachtioPort);
    apps.push(next);
    let answered = 0;
    next.invite(async (req: any, res: any) => { answered++; await next.createUAS(req, res, { localSdp: SDP }); });
    await sleep(100);
    const r2 = await caller(['-sn', 'uac', '-m', '2', '-r', '10', '-d', '100', '-timeout', '10s']);
    expect(r2.code, r2.errors).to.equal(0);
    expect(answered).to.equal(2);
  });

  it('an application that disconnects before answering: the caller gets 480', async () => {
    s = await startServer();
    const leaver = await connectSrf(s.drachtioPort);
    leaver.invite(() => leaver.disconnect());
    const r = await caller(['-sn', 'uac', '-m', '1', '-timeout', '8s']);
    expect(r.code).to.equal(1);
    expect(r.errors).to.match(/SIP\/2\.0 480/);
  });

  it('outbound-connection mode: the server dials a srf.listen() application for each new call', async () => {
    const appPort = await freePort();
    const srf = new Srf();
    apps.push(srf);
    let calls = 0;
    srf.invite(async (req: any, res: any) => {
      calls++;
      const d = await srf.createUAS(req, res, { localSdp: SDP });
      d.on('destroy', () => srf.endSession(req));
    });
    const server = srf.listen({ host: '127.0.0.1', port: appPort, secret: SECRET });
    try {
      s = await startServer({ outboundTargets: [{ host: '127.0.0.1', port: appPort }] });
      const r = await caller(['-sn', 'uac', '-m', '2', '-r', '5', '-d', '100', '-timeout', '10s']);
      expect(r.code, r.errors).to.equal(0);
      expect(calls).to.equal(2);
      await until(() => s!.drachtio.server.connections.size === 0, 3000, 'outbound sessions closed by the app');
    } finally {
      server.close();
    }
  });

  it('outbound-connection mode with a wrong secret: the connection is refused and the caller gets 503', async () => {
    const appPort = await freePort();
    const srf = new Srf();
    apps.push(srf);
    srf.invite((req: any, res: any) => res.send(200));
    const server = srf.listen({ host: '127.0.0.1', port: appPort, secret: 'not-the-secret' });
    try {
      s = await startServer({ outboundTargets: [{ host: '127.0.0.1', port: appPort }] });
      const r = await caller(['-sn', 'uac', '-m', '1', '-timeout', '8s']);
      expect(r.code).to.equal(1);
      expect(r.errors).to.match(/SIP\/2\.0 503/);
    } finally {
      server.close();
    }
  });
});

async function srf_createUAS(srf: any, req: any, res: any): Promise<any> {
  return srf.createUAS(req, res, { localSdp: SDP });
}
