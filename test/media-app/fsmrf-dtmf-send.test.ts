// digits_send on the fsmrf backend (FsmrfCallEndpoint.sendDtmf: the switch's uuid_send_dtmf): a real
// call, sipp (a trunk) calls a number whose flow answers and sends `1#`; the caller's RTP port (its
// SDP offers telephone-event 101) is a capture that receives the switch's RFC 2833 events.
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { testDb } from '../../testkit/db';
import { trunkCustomer } from '../../testkit/trunks';
import { sipp, uacWaitsForBye, type Platform } from '../../testkit/media-app/harness';
import { usePlatform } from '../../testkit/media-app/platform-hooks';
import { eventGroups, RtpCapture } from '../edge/dtmf-support';

describe('media-app on the fsmrf backend: digits_send reaches the caller as RFC 2833', function () {
  this.timeout(60_000);
  let p: Platform;
  usePlatform({}, (x) => (p = x), { truncate: false, mediaServer: 'fsmrf' });

  it("the caller's RTP port gets telephone-events 1 and # (events 1 and 11), 120 ms each", async () => {
    const db = await testDb();
    const { customerId: cid, trunk } = await trunkCustomer(db, 'fsdtmf');
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([
        { type: 'answer' },
        { type: 'sleep', option: { duration: 300 } },
        { type: 'digits_send', option: { digits: '1#', duration: 120, interval: 100 } },
        { type: 'sleep', option: { duration: 800 } },
        { type: 'hangup' },
      ]),
    } as never);
    const number = '+8991000027';
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    const cap = await RtpCapture.open();
    try {
      const r = await sipp(uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, 'trunk', cap.port), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 40_000 }).done;
      expect(r.code, r.errors + r.messages.slice(-4000)).to.equal(0);
      const groups = eventGroups(cap, 101);
      expect(groups.map((g) => g[0]!.event)).to.deep.equal([1, 11]);
      for (const g of groups) {
        const last = g[g.length - 1]!;
        expect(last.end, 'an end packet').to.equal(true);
        expect(last.duration, 'the duration in 8 kHz samples').to.be.within(900, 1100);
      }
    } finally {
      cap.close();
      await trunksRepo(db).softDelete(trunk.id);
    }
  });
});
