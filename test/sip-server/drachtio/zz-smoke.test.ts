import { expect } from 'chai';
import { startServer, connectSrf, sipp, SDP, killAllSipp, disconnectSrf } from './harness';
import { freePort } from '../../support/ports';
describe('smoke', function () {
  this.timeout(30000);
  it('uas answer', async () => {
    const s = await startServer();
    const srf = await connectSrf(s.drachtioPort);
    let destroyed = false;
    srf.invite(async (req: any, res: any) => {
      const d = await srf.createUAS(req, res, { localSdp: SDP });
      d.on('destroy', () => { destroyed = true; });
    });
    const p = await freePort();
    const r = await sipp.call(null, ['-sn', 'uac', `127.0.0.1:${s.sipPort}`, '-i', '127.0.0.1', '-p', String(p), '-m', '3', '-r', '10', '-timeout', '15s'], { trace: true }).done;
    console.log(r.code, r.errors.slice(0, 3000), r.messages.slice(0, 4000));
    disconnectSrf(srf); killAllSipp(); await s.close();
    expect(r.code).to.equal(0);
    expect(destroyed).to.equal(true);
  });
});
