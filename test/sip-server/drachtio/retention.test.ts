// What a finished call leaves behind. The stack keeps each server transaction for 32 s after its
// final response (Timers J and L, to absorb retransmissions); the call's dialog must not ride along
// with it once the ACK has come and the call has ended. At 300 calls/s that was ~9,200 dialogs held.
import { expect } from 'chai';
import v8 from 'node:v8';
import vm from 'node:vm';
import { freePort } from '../../support/ports';
import type { Dialog } from '../../../sip-server/drachtio/dialogs';
import { connectSrf, disconnectSrf, killAllSipp, SDP, sipp, startServer, until, type Server } from './harness';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

async function collect(): Promise<void> {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
}

describe('drachtio: a finished call\'s dialog is not held by its transactions', function () {
  this.timeout(30000);
  let s: Server;
  let srf: any;

  beforeEach(async () => {
    s = await startServer();
    srf = await connectSrf(s.drachtioPort);
  });
  afterEach(async () => {
    killAllSipp();
    disconnectSrf(srf);
    await s.close();
  });

  it('after ACK and BYE the dialog is collectable while the INVITE transaction lives on (Timer L)', async () => {
    const table = s.drachtio.engine.dialogs;
    const made: WeakRef<Dialog>[] = [];
    const add = table.add.bind(table);
    table.add = (d: Dialog) => { made.push(new WeakRef(d)); add(d); };
    let ended = 0;
    srf.invite(async (req: any, res: any) => {
      const d = await srf.createUAS(req, res, { localSdp: SDP });
      d.on('destroy', () => { ended++; });
    });
    const port = await freePort();
    const r = await sipp(['-sn', 'uac', '-m', '3', '-r', '10', '-d', '200', '-timeout', '15s', `127.0.0.1:${s.sipPort}`, '-i', '127.0.0.1', '-p', String(port)]).done;
    expect(r.code, r.errors).to.equal(0);
    await until(() => ended === 3 && s.drachtio.engine.stats().dialogs === 0, 5000, 'the three calls ended');
    expect(made).to.have.length(3);
    // the calls' INVITE transactions are still there, absorbing retransmissions (64 * T1 = 32 s)
    const servers = (s.stack as unknown as { table: { servers: Map<string, { isInvite: boolean; state: string }> } }).table.servers;
    expect([...servers.values()].filter((t) => t.isInvite && t.state === 'Accepted')).to.have.length(3);
    await collect();
    expect(made.filter((w) => w.deref() !== undefined), 'dialogs still held').to.have.length(0);
  });
});
