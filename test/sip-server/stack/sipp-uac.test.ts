import { expect } from 'chai';
import { SipStack } from '../../../sip-server/stack';
import { freePort } from '../../../testkit/ports';
import { startSipp, startStack, sleep } from './support';
import { buildInvite, call, finalOf, inDialog } from './test-uac';

describe('sip-server stack as UAC against sipp -sn uas', function () {
  this.timeout(60_000);
  let stack: SipStack;
  beforeEach(async () => {
    stack = await startStack({ timers: { t1: 500, t2: 4000, t4: 5000 } });
  });
  afterEach(async () => {
    await stack.stop();
  });

  for (const transport of ['udp', 'tcp'] as const) {
    it(`places 5 calls INVITE/ACK/BYE over ${transport.toUpperCase()} (sipp exit 0)`, async () => {
      const sp = await freePort();
      const sipp = startSipp(['-sn', 'uas', '-i', '127.0.0.1', '-p', String(sp), '-m', '5', '-timeout', '30s', ...(transport === 'tcp' ? ['-t', 't1'] : [])]);
      try {
        await sleep(300); // let sipp bind
        const target = `sip:service@127.0.0.1:${sp}${transport === 'tcp' ? ';transport=tcp' : ''}`;
        for (let i = 0; i < 5; i++) {
          const invite = buildInvite(stack, target, transport);
          const { result } = call(stack, invite);
          const res = await result;
          expect(res.status).to.equal(200);
          expect(res.toTag).to.be.a('string');
          const bye = stack.request(inDialog(invite, res, 'BYE', 2), { target });
          expect((await finalOf(bye)).status).to.equal(200);
        }
        const r = await sipp.done;
        expect(r.code, r.errors + r.stderr).to.equal(0);
      } finally {
        sipp.stop();
      }
    });
  }
});
