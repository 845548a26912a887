// Issue 54: a Calls redirect (Url/Twiml) right after the answer, while the call is in progress but its
// flow has not started yet (media-app writes progressing, then starts the flow and writes the row's
// activeflow_id). The window is held open for real, not left to timing: a trigger on the calls table makes
// media-app's activeflow write wait for an advisory lock this test holds. Twilio never refuses a redirect
// of an in-progress call: the request waits for the flow (control-api/twilio/flow-wait.ts) and the redirect
// reaches it once it runs; a call answered too long ago with no flow is refused, after a bounded wait.
import { expect } from 'chai';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { testDb } from '../../testkit/db';
import { serveApp, twilioClient, type ServedApp, type TwilioClient, restRefusal } from '../../testkit/twilio';
import { answeringUas, killAllSipp, sipp, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { accountSid, callSid, fromSid } from '../../core/twilio/sids';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import { callsRepo } from '../../core/repos/calls';
import { EMPTY_UUID } from '../../core/ids';
import { platformRegistry } from '../../core/metrics';

/** The advisory lock the trigger waits for (any key of this test's own database). */
const HOLD_KEY = 54;
/** TWILIO_REDIRECT_WAIT_MS of this test's API: far longer than the window is held. */
const WAIT_MS = 20_000;

async function redirectsWaiting(): Promise<number> {
  const m = /^twilio_redirects_waiting (\S+)$/m.exec(await platformRegistry.metrics());
  return m ? Number(m[1]) : NaN;
}

describe("twilio: a redirect right after the answer waits for the call's flow (issue 54)", function () {
  this.timeout(90_000);
  let p: Platform;
  let t: TestApp;
  let api: ServedApp;
  let f: Fixture;
  let client: TwilioClient;
  const trigger = `hold_flow_${process.pid}`;

  before(async () => {
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
    t = await buildTestApp({
      env: { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix, DATA_DIR: p.config.dataDir, TWILIO_REDIRECT_WAIT_MS: String(WAIT_MS) },
    });
    api = await serveApp(t.app);
    f = await createFixture(t.ctx);
    const sid = accountSid(f.customer.id);
    client = twilioClient(api.baseUrl, sid, twilioAuthToken(t.ctx.config.jwtSecret, f.customer.id, 0));
  });
  after(async () => {
    killAllSipp();
    const db = await testDb();
    await db.raw(`drop trigger if exists ${trigger} on calls`);
    await db.raw(`drop function if exists ${trigger}()`);
    await api?.close();
    await t?.close();
    await p?.close();
  });

  it('in progress, its flow held back: the redirect waits (no 21220), then reaches the flow once it starts', async () => {
    const db = await testDb();
    // the write of a flow onto this customer's call waits for HOLD_KEY (customer_id is our own uuid)
    await db.raw(`create or replace function ${trigger}() returns trigger language plpgsql as $$ begin perform pg_advisory_xact_lock(${HOLD_KEY}); return new; end $$`);
    await db.raw(
      `create trigger ${trigger} before update on calls for each row when (old.activeflow_id is distinct from new.activeflow_id and new.customer_id = '${f.customer.id}') execute function ${trigger}()`,
    );
    const hold = await db.transaction();
    let held = true;
    const release = async () => {
      if (held) await hold.commit();
      held = false;
    };
    try {
      await hold.raw('select pg_advisory_xact_lock(?)', [HOLD_KEY]);
      const uasPort = await freePort();
      const uas = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(uasPort), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 });
      await uas.port;
      const call = await client.calls.create({ to: `sip:uas@127.0.0.1:${uasPort}`, from: '+15550100000', twiml: '<Response><Pause length="20"/></Response>' });
      await until(async () => (await client.calls(call.sid).fetch()).status === 'in-progress', 15_000, 'in-progress');
      // media-app is inside the window: its activeflow write waits for the lock, the row has no flow
      await until(
        async () => {
          const r = await db.raw(`select 1 from pg_locks where locktype = 'advisory' and objid = ? and not granted and database = (select oid from pg_database where datname = current_database())`, [
            HOLD_KEY,
          ]);
          return (r as { rows: unknown[] }).rows.length > 0;
        },
        10_000,
        'the flow write waiting for the lock',
      );
      const row = await callsRepo(db).get(fromSid('CA', call.sid)!);
      expect([row?.status, row?.activeflow_id]).to.deep.equal(['progressing', EMPTY_UUID]);
      // the redirect: it must wait for the flow, not be refused while the flow is held back
      const before = await redirectsWaiting();
      const redirecting = client
        .calls(call.sid)
        .update({ twiml: '<Response><Hangup/></Response>' })
        .then(
          (c) => ({ status: c.status }),
          (e: Error) => ({ refused: e.message }),
        );
      let settled = false;
      void redirecting.finally(() => (settled = true));
      const first = await until(async () => (settled ? 'answered' : (await redirectsWaiting()) > before ? 'waiting' : null), 10_000, 'the redirect waiting or answered');
      expect(first, `answered while the flow was held back: ${JSON.stringify(settled && (await redirecting))}`).to.equal('waiting');
      await release();
      expect(await redirecting).to.deep.equal({ status: 'in-progress' });
      expect(await redirectsWaiting()).to.equal(before);
      // the redirect reached the flow: <Hangup/> instead of 20 s of <Pause>
      const r = await uas.done;
      expect(r.code, r.errors).to.equal(0);
      expect(r.messages).to.match(/^BYE sip:/m);
      const ended = await until(async () => ((await client.calls(call.sid).fetch()).status === 'completed' ? true : null), 10_000, 'completed');
      expect(ended).to.equal(true);
    } finally {
      await release();
      await db.raw(`drop trigger if exists ${trigger} on calls`);
    }
  });

  it('in progress with no flow coming: refused 21220 once the wait after the answer is over', async () => {
    const db = await testDb();
    const row = async (answeredMsAgo: number) => {
      const c = await callsRepo(db).create({
        customer_id: f.customer.id,
        source: { type: 'tel', target: '+15550100000' },
        destination: { type: 'tel', target: '+15550100001' },
        direction: 'outgoing',
      });
      const answeredAt = Date.now() - answeredMsAgo;
      await db('calls')
        .where({ id: c.id })
        .update({ status: 'progressing', tm_progressing: new Date(answeredAt) });
      return { sid: callSid(c.id), answeredAt };
    };
    // answered WAIT_MS - 500 ms ago: the redirect waits for what is left of the bound, then is refused
    const recent = await row(WAIT_MS - 500);
    const e = await restRefusal(client.calls(recent.sid).update({ twiml: '<Response><Hangup/></Response>' }));
    expect([e.status, e.code]).to.deep.equal([400, 21220]);
    expect(Date.now() - recent.answeredAt, 'refused once the bound after the answer is over').to.be.at.least(WAIT_MS - 5);
    expect(await redirectsWaiting()).to.equal(0);
    // answered long ago: no flow is coming, refused
    const old = await row(10 * WAIT_MS);
    const e2 = await restRefusal(client.calls(old.sid).update({ url: 'http://127.0.0.1:9/a.xml' }));
    expect([e2.status, e2.code]).to.deep.equal([400, 21220]);
  });
});
