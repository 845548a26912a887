// media-app's sip-server connection dropping with a call up, on the fsmrf backend (review s42 #1; the
// embedded backend's case is test/reliability/faults-sip-server.test.ts). media-app closes every call as
// sip_server_gone (media-app/call/sip-gone.ts); the call's endpoint is destroyed on the switch, whose BYE
// can no longer reach media-app's dialog: the close must not wait for it. The call row reaches hangup
// (by local) within a bound, the leg is hung up on the switch. Real loopback SIP and RTP: sipp, media-app,
// our switch, sip-server's drachtio layer, real Postgres and Redis.
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { testDb } from '../../testkit/db';
import { sippMediaPort } from '../../testkit/ports';
import { sipp, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';
import { usePlatform } from '../../testkit/media-app/platform-hooks';
import { trunkCustomer } from '../../testkit/trunks';

describe('fsmrf backend: the sip-server connection lost with a call up', function () {
  this.timeout(60_000);
  let p: Platform;
  usePlatform({}, (x) => (p = x), { truncate: false, mediaServer: 'fsmrf' });

  it('the call is hung up (row, by local) within 10 s, its leg ended on the switch', async () => {
    const db = await testDb();
    const { customerId: cid } = await trunkCustomer(db, 'fsgone');
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'answer' }, { type: 'sleep', option: { duration: 60_000 } }]) } as never);
    const num = `+8993002${String(Math.floor(Math.random() * 1e5)).padStart(5, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number: num, type: 'virtual', call_flow_id: flow.id });
    const mp = await sippMediaPort();
    // the caller's dialog dies with the connection: it is never sent a BYE in this test (killed after)
    sipp(
      uacWaitsForBye(`${num}@127.0.0.1:${p.sipPort}`, '+15551230000', mp, { byeTimeoutMs: 50_000 }),
      [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mi', '127.0.0.1', '-mp', String(mp)],
      {
        killAfterMs: 55_000,
      },
    );
    const callId = await until(async () => (await db('calls').where({ customer_id: cid, status: 'progressing' }).first())?.id as string | undefined, 20_000, 'the call up');
    const esl = p.switch!.sw.esl;
    await until(() => esl.channels.size > 0, 5000, "the call's leg on the switch");

    // sip-server goes as a kill -9 takes it: its SIP transports first (no BYE of its orphaned dialogs goes
    // out: a running sip-server would end the switch's channel that way), then media-app's drachtio connection
    await p.stack.stop();
    await p.drachtio.close();
    const lost = Date.now();
    const row = await until(
      async () => {
        const r = (await db('calls').where({ id: callId }).first()) as { status: string; hangup_by: string } | undefined;
        return r?.status === 'hangup' ? r : null;
      },
      10_000,
      'the call row hung up within 10 s of the loss',
    );
    expect(Date.now() - lost).to.be.below(10_000);
    expect(row.hangup_by).to.equal('local');
    await until(() => esl.channels.size === 0, 5000, 'the leg hung up on the switch');
  });
});
