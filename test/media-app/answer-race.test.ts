// The SIP leg's moves are guarded like the status (media-app/call/session.ts): a close that lands while
// our 200 OK is in flight (sent, its dialog not yet made) must not leave the far end up. Real SIP on
// loopback: sipp as a trunk calls a virtual number whose flow has not answered yet; the session is
// answered and, before the event loop turns (the 200 OK is sent, drachtio has not yet given the
// dialog), hung up as a command from the API would. The far end must get a BYE and the call end in hangup.
import { usePlatform } from '../../testkit/media-app/platform-hooks';
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { repos } from '../../core/repos';
import { testDb } from '../../testkit/db';
import { RtpSink, sipp, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';

describe('media-app: a close while the 200 OK is in flight', function () {
  this.timeout(90_000);
  let p: Platform;

  usePlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }, (x) => (p = x));

  it('an inbound call hung up while its 200 OK is in flight: the late dialog gets a BYE, the call ends in hangup', async () => {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `race${Date.now()}@example.test`, status: 'active', name: 'race' })).id;
    await trunksRepo(db).create(cid, `trr${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    // the flow waits without answering: the call stays offered until the test answers it
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'sleep', option: { duration: 30_000 } }]) } as never);
    await numbersRepo(db).create({ customer_id: cid, number: '+899100000077', type: 'virtual', call_flow_id: flow.id });
    const sink = await RtpSink.open();
    try {
      // sipp answers the 200 with an ACK, then waits (at most 8 s) for our BYE: without it sipp fails
      const x = sipp(uacWaitsForBye(`+899100000077@127.0.0.1:${p.sipPort}`, '+15551239999', sink.port, { byeTimeoutMs: 8000 }), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], {
        killAfterMs: 30_000,
      });
      const row = await until(async () => (await db('calls').where({ customer_id: cid }).first()) as { id: string } | undefined, 10_000, 'call row');
      const session = await until(() => p.app.factory.get(row.id), 10_000, 'live session');
      await until(() => session.status === 'ringing', 10_000, 'ringing');
      expect(session.answered).to.equal(false);

      const answering = session.answer().then(
        () => 'answered',
        (err: Error) => `refused: ${err.message}`,
      );
      // The 200 OK leaves a few microtasks later (drachtio-srf builds it, then sends it to sip-server);
      // its dialog comes back only with sip-server's reply, which needs an I/O turn of the event loop.
      // Microtasks alone never give one: the close lands after the 200 was sent, before the dialog.
      for (let i = 0; i < 50; i++) await Promise.resolve();
      const closed = session.hangup('normal');
      const [outcome] = await Promise.all([answering, closed]);

      const r = await x.done;
      expect(r.code, `the far end got no BYE\n${r.errors}${r.messages.slice(-3000)}`).to.equal(0);
      expect(outcome, 'a close before the dialog is made refuses the answer').to.match(/^refused/);
      const end = await until(
        async () => {
          const c = await db('calls').where({ id: row.id }).first();
          return c?.status === 'hangup' ? c : null;
        },
        10_000,
        'call in hangup',
      );
      expect(end.hangup_by).to.equal('local');
      expect(session.answered, 'the session never holds the late dialog').to.equal(false);
    } finally {
      sink.close();
    }
  });
});
