// Several applications on one sip-server: shared INVITE routing, an application leaving mid-call,
// and the outbound-connection mode (srf.listen(), the server dials the application).
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { answeringUas } from '../../../testkit/media-app/harness';
import { freePort } from '../../../testkit/ports';
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
    // the orphaned dialog: the server hangs it up (BYE to the caller), as nobody runs its media any more
    // (drachtio-server would keep it; see sip-server/drachtio/README.md)
    const r1 = await caller(['-sf', path.join(SCENARIOS, 'uac-wait-bye.xml'), '-m', '1', '-timeout', '10s']);
    expect(r1.code, r1.errors).to.equal(0);
    expect(s.drachtio.server.connections.size).to.equal(0);

    const next = await connectSrf(s.drachtioPort);
    apps.push(next);
    let answered = 0;
    next.invite(async (req: any, res: any) => {
      answered++;
      await next.createUAS(req, res, { localSdp: SDP });
    });
    await sleep(100);
    const r2 = await caller(['-sn', 'uac', '-m', '2', '-r', '10', '-d', '100', '-timeout', '10s']);
    expect(r2.code, r2.errors).to.equal(0);
    expect(answered).to.equal(2);
  });

  it("with keepOrphanedDialogs (drachtio-server's behaviour) the dialog outlives its application: the caller's BYE gets 481", async () => {
    s = await startServer({ keepOrphanedDialogs: true });
    const leaver = await connectSrf(s.drachtioPort);
    leaver.invite(async (req: any, res: any) => {
      await srf_createUAS(leaver, req, res);
      leaver.disconnect();
    });
    const r = await caller(['-sf', path.join(SCENARIOS, 'uac-bye-481.xml'), '-m', '1', '-timeout', '10s']);
    expect(r.code, r.errors).to.equal(0);
  });

  it('an application that disconnects with its outgoing calls up or ringing: the answered callee gets a BYE, the ringing one a CANCEL', async () => {
    s = await startServer();
    const leaver = await connectSrf(s.drachtioPort);
    const upPort = await freePort();
    const up = sipp(['-sn', 'uas', '-i', '127.0.0.1', '-p', String(upPort), '-m', '1', '-timeout', '10s']);
    const ringingPort = await freePort();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orphan-cancel-'));
    fs.writeFileSync(path.join(dir, 'uas-cancel.xml'), answeringUas({ cancel: true, inviteTimeoutMs: 10_000 }));
    const ringing = sipp(['-sf', path.join(dir, 'uas-cancel.xml'), '-i', '127.0.0.1', '-p', String(ringingPort), '-m', '1', '-timeout', '10s']);
    await sleep(300);
    await leaver.createUAC(`sip:bob@127.0.0.1:${upPort}`, { localSdp: SDP });
    leaver.createUAC(`sip:carol@127.0.0.1:${ringingPort}`, { localSdp: SDP }).catch(() => undefined);
    await sleep(300); // carol is ringing
    leaver.disconnect();
    const [ru, rr] = await Promise.all([up.done, ringing.done]);
    fs.rmSync(dir, { recursive: true, force: true });
    expect(ru.code, 'answered callee: ' + ru.errors).to.equal(0);
    expect(rr.code, 'ringing callee: ' + rr.errors).to.equal(0);
    expect(s.drachtio.engine.stats().dialogs).to.equal(0);
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
