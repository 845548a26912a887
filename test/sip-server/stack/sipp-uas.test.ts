import { expect } from 'chai';
import { SipStack } from '../../../sip-server/stack';
import { freePort } from '../../../testkit/ports';
import { attachTestUas } from './test-uas';
import { runSipp, startStack } from './support';

describe('sip-server stack as UAS against sipp -sn uac', function () {
  this.timeout(60_000);
  let stack: SipStack;
  let stats: ReturnType<typeof attachTestUas>;

  beforeEach(async () => {
    stack = await startStack({ timers: { t1: 500, t2: 4000, t4: 5000 } });
    stats = attachTestUas(stack);
  });
  afterEach(async () => {
    await stack.stop();
  });

  it('completes 50 calls over UDP (sipp exit 0)', async () => {
    const port = stack.listening[0].port;
    const sp = await freePort();
    const r = await runSipp(['-sn', 'uac', `127.0.0.1:${port}`, '-i', '127.0.0.1', '-p', String(sp), '-m', '50', '-r', '50', '-l', '20', '-timeout', '30s', '-timeout_error']);
    expect(r.code, r.errors + r.stderr).to.equal(0);
    expect(stats.invites).to.equal(50);
    expect(stats.byes).to.equal(50);
    expect(stats.acks).to.equal(50);
  });

  it('completes 20 calls over TCP (sipp exit 0)', async () => {
    const port = stack.listening.find((l) => l.transport === 'tcp')!.port;
    const sp = await freePort();
    const r = await runSipp(['-sn', 'uac', `127.0.0.1:${port}`, '-t', 't1', '-i', '127.0.0.1', '-p', String(sp), '-m', '20', '-r', '20', '-l', '10', '-timeout', '30s', '-timeout_error']);
    expect(r.code, r.errors + r.stderr).to.equal(0);
    expect(stats.invites).to.equal(20);
    expect(stats.byes).to.equal(20);
  });
});
