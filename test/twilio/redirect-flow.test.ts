// Issue 54: a Calls redirect (Url/Twiml) right after the answer, while the call is in progress but its
// flow has not started yet (media-app writes progressing, then starts the flow: the activeflow's record,
// activeflow_created, the row's activeflow_id). The window is held open for real, not left to timing: a
// trigger on the activeflows table makes media-app's write of the flow's record wait for an advisory lock
// this test holds. Twilio never refuses a redirect of an in-progress call: the request waits for the flow
// (control-api/twilio/flow-wait.ts: woken by the call's events, flow-starts.ts) and the redirect reaches it
// once it runs; a call answered too long ago with no flow is refused, after a bounded wait. The waits are
// bounded in number (429, 20429) and leave nothing behind: no waiter, no listener, no reader connection.

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
import { eventPublisher } from '../../core/events/bus';
import { flowStarts, flowStartsReaderName } from '../../control-api/twilio/flow-starts';

/** The advisory lock the trigger waits for (any key of this test's own database). */
const HOLD_KEY = 54;
/** TWILIO_REDIRECT_WAIT_MS of this test's API: far longer than the window is held. */
const WAIT_MS = 20_000;

async function redirectsWaiting(): Promise<number> {
  const m = /^twilio_redirects_waiting (\S+)$/m.exec(await platformRegistry.metrics());
  return m ? Number(m[1]) : NaN;
}

/** Nothing of the waits is left: no waiter, no listener, no reader, its Redis connection closed. */
async function nothingLeft(t: TestApp): Promise<void> {
  expect(flowStarts(t.ctx).stats()).to.deep.equal({ waiters: 0, calls: 0, reading: false, listeners: 0 });
  expect(await redirectsWaiting()).to.equal(0);
  const name = `name=${flowStartsReaderName()} `;
  await until(async () => (!String(await t.ctx.redis.client('LIST')).includes(name) ? true : null), 5_000, 'the reader connection closed');
}

/** A call row of the customer answered `answeredMsAgo` ago, with no flow (none is coming: no media-app has it). */
async function answeredRow(customerId: string, answeredMsAgo: number): Promise<{ id: string; sid: string; answeredAt: number }> {
  const db = await testDb();
  const c = await callsRepo(db).create({
    customer_id: customerId,
    source: { type: 'tel', target: '+15550100000' },
    destination: { type: 'tel', target: '+15550100001' },
    direction: 'outgoing',
  });
  const answeredAt = Date.now() - answeredMsAgo;
  await db('calls')
    .where({ id: c.id })
    .update({ status: 'progressing', tm_progressing: new Date(answeredAt) });
  return { id: c.id, sid: callSid(c.id), answeredAt };
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
    await db.raw(`drop trigger if exists ${trigger} on activeflows`);
    await db.raw(`drop function if exists ${trigger}()`);
    await api?.close();
    await t?.close();
    await p?.close();
  });

  it('in progress, its flow held back: the redirect waits (no 21220), then reaches the flow once it starts', async () => {
    const db = await testDb();
    // the write of this customer's activeflow records waits for HOLD_KEY (customer_id is our own uuid)
    await db.raw(`create or replace function ${trigger}() returns trigger language plpgsql as $$ begin perform pg_advisory_xact_lock(${HOLD_KEY}); return new; end $$`);
    await db.raw(`create trigger ${trigger} before insert on activeflows for each row when (new.customer_id = '${f.customer.id}') execute function ${trigger}()`);
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
      // media-app is inside the window: the flow's record waits for the lock, the row has no flow
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
      await nothingLeft(t);
      // the redirect reached the flow: <Hangup/> instead of 20 s of <Pause>
      const r = await uas.done;
      expect(r.code, r.errors).to.equal(0);
      expect(r.messages).to.match(/^BYE sip:/m);
      const ended = await until(async () => ((await client.calls(call.sid).fetch()).status === 'completed' ? true : null), 10_000, 'completed');
      expect(ended).to.equal(true);
    } finally {
      await release();
      await db.raw(`drop trigger if exists ${trigger} on activeflows`);
    }
  });

  it('in progress with no flow coming: refused 21220 once the wait after the answer is over, nothing left behind', async () => {
    // answered WAIT_MS - 500 ms ago: the redirect waits for what is left of the bound, then is refused
    const recent = await answeredRow(f.customer.id, WAIT_MS - 500);
    const e = await restRefusal(client.calls(recent.sid).update({ twiml: '<Response><Hangup/></Response>' }));
    expect([e.status, e.code]).to.deep.equal([400, 21220]);
    expect(Date.now() - recent.answeredAt, 'refused once the bound after the answer is over').to.be.at.least(WAIT_MS - 5);
    await nothingLeft(t);
    // answered long ago: no flow is coming, refused
    const old = await answeredRow(f.customer.id, 10 * WAIT_MS);
    const e2 = await restRefusal(client.calls(old.sid).update({ url: 'http://127.0.0.1:9/a.xml' }));
    expect([e2.status, e2.code]).to.deep.equal([400, 21220]);
  });

  it('the client going away ends its wait at once: its watch, listener and reader go with it', async () => {
    const c = await answeredRow(f.customer.id, 0);
    const abort = new AbortController();
    const auth = Buffer.from(`${accountSid(f.customer.id)}:${twilioAuthToken(t.ctx.config.jwtSecret, f.customer.id, 0)}`).toString('base64');
    const sent = fetch(`${api.baseUrl}/2010-04-01/Accounts/${accountSid(f.customer.id)}/Calls/${c.sid}.json`, {
      method: 'POST',
      headers: { Authorization: `Basic ${auth}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ Twiml: '<Response><Hangup/></Response>' }).toString(),
      signal: abort.signal,
    }).catch((err: Error) => err.name);
    await until(async () => (flowStarts(t.ctx).stats().waiters === 1 ? true : null), 10_000, 'the redirect waiting');
    expect(flowStarts(t.ctx).stats()).to.deep.equal({ waiters: 1, calls: 1, reading: true, listeners: 1 });
    const aborted = Date.now();
    abort.abort();
    expect(await sent).to.equal('AbortError');
    await until(async () => (flowStarts(t.ctx).stats().waiters === 0 ? true : null), 5_000, 'the wait ended');
    expect(Date.now() - aborted, 'ended by the client, not by its bound').to.be.below(WAIT_MS / 4);
    await nothingLeft(t);
  });

  it("many waits: each wakes on its own call's event; one beyond TWILIO_REDIRECT_MAX_WAITING is refused 429 (20429)", async () => {
    const MAX = 4;
    const t2 = await buildTestApp({
      env: { RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix, DATA_DIR: p.config.dataDir, TWILIO_REDIRECT_WAIT_MS: String(WAIT_MS), TWILIO_REDIRECT_MAX_WAITING: String(MAX) },
    });
    const api2 = await serveApp(t2.app);
    try {
      const client2 = twilioClient(api2.baseUrl, accountSid(f.customer.id), twilioAuthToken(t2.ctx.config.jwtSecret, f.customer.id, 0));
      for (let round = 0; round < 3; round++) {
        const calls = await Promise.all(Array.from({ length: MAX + 1 }, () => answeredRow(f.customer.id, 0)));
        const waits = calls.slice(0, MAX).map((c) => restRefusal(client2.calls(c.sid).update({ twiml: '<Response><Hangup/></Response>' })));
        await until(async () => (flowStarts(t2.ctx).stats().waiters === MAX ? true : null), 10_000, `${MAX} redirects waiting`);
        expect(flowStarts(t2.ctx).stats()).to.deep.equal({ waiters: MAX, calls: MAX, reading: true, listeners: 1 });
        const over = await restRefusal(client2.calls(calls[MAX]!.sid).update({ twiml: '<Response><Hangup/></Response>' }));
        expect([over.status, over.code]).to.deep.equal([429, 20429]);
        // each call ends as media-app ends one: the row, then call_hangup on the event stream
        const started = Date.now();
        const pub = eventPublisher(t2.ctx);
        const db = await testDb();
        for (const c of calls.slice(0, MAX)) {
          await db('calls').where({ id: c.id }).update({ status: 'hangup', tm_hangup: new Date() });
          await pub.publish('call_hangup', f.customer.id, c.id, { id: c.id, customer_id: f.customer.id, status: 'hangup' });
        }
        for (const e of await Promise.all(waits)) expect([e.status, e.code]).to.deep.equal([400, 21220]);
        expect(Date.now() - started, 'woken by the events, not by the bound').to.be.below(WAIT_MS / 4);
        await nothingLeft(t2);
      }
    } finally {
      await api2.close();
      await t2.close();
    }
  });
});
