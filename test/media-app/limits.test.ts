// Call limits and execution modes: maximum duration (hangup_reason timeout), early execution (the flow
// starts while the callee still rings), and a provider calling a number (source by address).
import { sipProvider } from '../../testkit/providers';
import { hungUpCall } from '../../testkit/call-ends';
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { callsRepo } from '../../core/repos/calls';
import { numbersRepo } from '../../core/repos/numbers';
import { repos } from '../../core/repos';
import type { CommandBus } from '../../core/commands/bus';
import { testDb } from '../../testkit/db';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { answeringUas, RtpSink, sipp, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';
import { useOriginating } from './originating';

/** UAS: 180, a pause, 200, then waits for the platform's BYE. */
const slowUas = (pauseMs: number) => answeringUas({ tag: '[pid]slow[call_number]', contact: '<sip:[local_ip]:[local_port]>', pauseMs });

describe('media-app call limits and modes', function () {
  this.timeout(90_000);
  let p: Platform;
  let bus: CommandBus;
  useOriginating({ CALL_MAX_DURATION_MS: '2000' }, (o) => ({ p, bus } = o));

  async function outgoing(text: string, data: Record<string, unknown> = {}) {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `lim${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'l' })).id;
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'talk', option: { text, language: 'en-US' } }]) } as never);
    const port = await freePort();
    const row = await callsRepo(db).create({
      customer_id: cid,
      flow_id: flow.id,
      direction: 'outgoing',
      status: 'dialing',
      data,
      source: { type: 'tel', target: '+15550002222' },
      destination: { type: 'sip', target: `x@127.0.0.1:${port}` },
    });
    return { db, row, port };
  }

  it('the maximum call duration ends an answered call with hangup_reason timeout', async () => {
    const { row, port } = await outgoing('This announcement is far longer than the maximum duration of the call. '.repeat(5));
    const callee = sipp(slowUas(0), ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 30_000 });
    await bus.originate([row.id], row.customer_id);
    expect((await callee.done).code).to.equal(0);
    const done = await hungUpCall(row.id);
    expect(done.hangup_reason).to.equal('timeout');
    const talked = done.tm_hangup!.getTime() - done.tm_progressing!.getTime();
    expect(talked).to.be.within(1800, 6000);
  });

  it('early execution starts the activeflow while the callee is still ringing', async () => {
    const { db, row, port } = await outgoing('Hello early.', { early_execution: true });
    const callee = sipp(slowUas(1500), ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 30_000 });
    await bus.originate([row.id], row.customer_id);
    const ringing = await until(
      async () => {
        const c = await callsRepo(db).get(row.id);
        return c?.status === 'ringing' ? c : null;
      },
      10_000,
      'ringing',
    );
    expect(ringing.activeflow_id).to.not.equal('00000000-0000-0000-0000-000000000000');
    const af = await db('activeflows').where({ id: ringing.activeflow_id }).first();
    expect(af).to.include({ status: 'running', reference_id: row.id });
    expect((await callee.done).code).to.equal(0);
    const done = await hungUpCall(row.id);
    expect(done).to.include({ hangup_reason: 'normal', hangup_by: 'local' });
  });

  it('a provider (known by its address) calling a number runs the number flow', async () => {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `prov${Date.now()}@example.test`, status: 'active', name: 'p' })).id;
    await sipProvider(db, '127.0.0.1', 'carrier');
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'answer' }, { type: 'hangup' }]) } as never);
    await numbersRepo(db).create({ customer_id: cid, number: '+15559990000', type: 'normal', call_flow_id: flow.id });
    const sink = await RtpSink.open();
    try {
      const r = await sipp(uacWaitsForBye(`+15559990000@127.0.0.1:${p.sipPort}`, '+4930123', sink.port), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1']).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
      // the provider may reach numbers only, never extensions or routes
      const r2 = await sipp(uacWaitsForBye(`+15559990001@127.0.0.1:${p.sipPort}`, '+4930123', sink.port, { expectStatus: 404 }), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1']).done;
      expect(r2.code, r2.errors + r2.messages).to.equal(0);
    } finally {
      sink.close();
    }
    const rows = await until(
      async () => {
        const x = await db('calls').where({ customer_id: cid });
        return x.length === 1 && x[0].status === 'hangup' ? x : null;
      },
      10_000,
      'call done',
    );
    expect(rows[0].source).to.deep.include({ type: 'tel', target: '+4930123' });
  });
});
