// The answer and a talk's first audio (issue 36's TwiML fetch → first audio): the prompt's audio starts
// once the 200 OK has left, not after the call's status write (progressing) that the answer also
// makes. The write is held back here by a real row lock in Postgres: the caller (sipp) must hear the
// prompt while the row still says ringing, and the status must follow once the lock goes.
import { expect } from 'chai';
import { testDb } from '../../testkit/db';
import { sleep, until } from '../../testkit/media-app/harness';
import { placeCall, type Stack } from '../../testkit/streams/support';
import { useTwimlStack } from '../../testkit/twiml/stack';
import type { Fixture } from '../../testkit/api';

describe('a talk answers the call and speaks without waiting for the status write', function () {
  this.timeout(90_000);
  let stack: Stack;
  let f: Fixture;

  useTwimlStack((s) => ({ stack, f } = s));

  /** The call's row once it is hung up. */
  const hungUp = async (id: string) => {
    const db = await testDb();
    return until(
      async () => {
        const r = await db('calls').where({ id }).first();
        return r?.status === 'hangup' ? r : null;
      },
      30_000,
      'call hung up',
    );
  };

  it('the caller hears the prompt while the call row is locked; progressing is written after the lock', async () => {
    const db = await testDb();
    const text = 'Hello, this prompt plays while the call row is still locked by somebody else.';
    // the sleep leaves time to lock the row before the talk answers
    const call = await placeCall(stack, f.customer.id, [{ type: 'sleep', option: { duration: 1500 } }, { type: 'talk', option: { text } }, { type: 'hangup' }], {
      talk: false,
      live: false,
    });
    const trx = await db.transaction();
    try {
      const locked = await trx('calls').where({ id: call.callId }).forUpdate().first();
      expect(locked?.status).to.be.oneOf(['dialing', 'ringing']);
      const heard = await until(async () => (call.peer.voiced() >= 10 ? true : null), 15_000, 'the prompt heard while the row is locked').catch(() => false);
      const meanwhile = await db('calls').where({ id: call.callId }).first();
      expect(heard, 'voiced packets heard while the status write waits').to.equal(true);
      expect(meanwhile?.status, 'the row still waits for the lock').to.be.oneOf(['dialing', 'ringing']);
    } finally {
      await trx.rollback();
    }
    const moves = await hungUp(call.callId);
    expect(moves.hangup_by).to.equal('local');
    // the answer was written once the lock went: the call was answered (progressing) before its hangup
    expect(moves.tm_progressing, 'answered time recorded').to.not.equal(null);
    const r = await call.sipp;
    expect(r.code, r.errors).to.equal(0);
    await sleep(50);
    call.peer.close();
  });

  it('the row locked from the moment it is written (still dialing): the flow starts and the caller hears it; ringing and progressing follow the lock', async () => {
    const db = await testDb();
    const text = 'This prompt plays while the new call row is locked by somebody else.';
    // a transaction that takes the new row's lock as soon as it exists, before the node's next write (ringing)
    const trx = await db.transaction();
    const locking = (async () => {
      const end = Date.now() + 20_000;
      while (Date.now() < end) {
        const r = (await trx.raw(`select id, status from calls where customer_id = ? and status = 'dialing' for update skip locked`, [f.customer.id])) as { rows: { id: string; status: string }[] };
        if (r.rows.length) return r.rows[0]!.status;
      }
      return null;
    })();
    let call: Awaited<ReturnType<typeof placeCall>> | null = null;
    let lockedStatus: string | null = null;
    try {
      call = await placeCall(stack, f.customer.id, [{ type: 'talk', option: { text } }, { type: 'hangup' }], { talk: false, live: false });
      lockedStatus = await locking;
      expect(lockedStatus, 'the row was locked while dialing').to.equal('dialing');
      const c = call;
      const heard = await until(async () => (c.peer.voiced() >= 10 ? true : null), 15_000, 'the prompt heard while the row is locked').catch(() => false);
      const meanwhile = await db('calls').where({ id: c.callId }).first();
      expect(heard, 'voiced packets heard while the row is locked').to.equal(true);
      expect(meanwhile?.status, 'the row still waits for the lock').to.equal('dialing');
    } finally {
      await locking.catch(() => null);
      await trx.rollback();
    }
    const ended = await hungUp(call.callId);
    expect(ended.tm_ringing, 'ringing recorded').to.not.equal(null);
    expect(ended.tm_progressing, 'answered time recorded').to.not.equal(null);
    expect(lockedStatus).to.equal('dialing');
    const r = await call.sipp;
    expect(r.code, r.errors).to.equal(0);
    await sleep(50);
    call.peer.close();
  });

  // the flow's own write of its id on the call (after the flow started) failing for good: the flow runs on,
  // the call's status writes carry the id
  it("the write of the call's activeflow failing for good: the flow runs on and the ended row names it", async () => {
    const db = await testDb();
    const fn = `refuse_af_${process.pid}`;
    // only that write: the row's status unchanged, its activeflow changed
    await db.raw(`create or replace function ${fn}() returns trigger language plpgsql as $$ begin raise exception 'refused by the test'; end $$`);
    await db.raw(
      `create trigger ${fn} before update on calls for each row when (new.customer_id = '${f.customer.id}' and new.status = old.status and new.activeflow_id <> old.activeflow_id) execute function ${fn}()`,
    );
    try {
      const call = await placeCall(stack, f.customer.id, [{ type: 'talk', option: { text: 'The flow goes on without its write.' } }, { type: 'hangup' }], { talk: false, live: false });
      const heard = await until(async () => (call.peer.voiced() >= 10 ? true : null), 15_000, 'the prompt heard').catch(() => false);
      expect(heard, 'the prompt heard').to.equal(true);
      const ended = await hungUp(call.callId);
      expect(ended.hangup_by).to.equal('local');
      expect(ended.hangup_reason).to.equal('normal');
      const af = await db('activeflows').where({ reference_id: call.callId }).first();
      expect(ended.activeflow_id, 'the ended row names the flow').to.equal(af?.id);
      const r = await call.sipp;
      expect(r.code, r.errors).to.equal(0);
      await sleep(50);
      call.peer.close();
    } finally {
      await db.raw(`drop trigger if exists ${fn} on calls`);
      await db.raw(`drop function if exists ${fn}()`);
    }
  });
});
