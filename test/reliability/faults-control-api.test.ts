// Issue 52, "a crash is one process, not the platform": kill -9 of control-api with a call up. The
// platform's three processes run as children (testkit/reliability/processes.ts, as start.sh runs them);
// sipp calls a number whose flow answers and talks. control-api is killed: the call stays up (no BYE,
// RTP keeps flowing, the row stays progressing); control-api started again answers /healthz within
// 20 s, and the call is hung up through its API (the caller gets the BYE).
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { buildTestApp, createFixture, TEST_JWT_SECRET } from '../../testkit/api';
import { testDb } from '../../testkit/db';
import { ProcessPlatform } from '../../testkit/reliability/processes';
import { killAllSipp, RtpSink, sipp, sleep, uacWaitsForBye, until } from '../../testkit/media-app/harness';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';

describe('reliability: kill -9 of control-api with a call up', function () {
  this.timeout(150_000);
  let p: ProcessPlatform | null = null;
  let sink: RtpSink | null = null;
  after(async () => {
    killAllSipp();
    sink?.close();
    await p?.close();
  });

  it('the call stays up, control-api comes back within 20 s and hangs the call up', async () => {
    const t = await buildTestApp();
    const f = await createFixture(t.ctx);
    await t.close();
    const db = await testDb();
    const cid = f.customer.id;
    await trunksRepo(db).create(cid, `kc${randomBytes(4).toString('hex')}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.0/8'] });
    const talk = { type: 'talk', option: { text: 'This is a long announcement that keeps the line busy. '.repeat(30), language: 'en-US' } };
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'answer' }, talk]) } as never);
    const number = `+8996${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });

    p = await ProcessPlatform.start({ jwtSecret: TEST_JWT_SECRET });
    sink = await RtpSink.open();
    const sipPort = p.ports.sip;
    let callerDone = false;
    const caller = sipp(uacWaitsForBye(`${number}@127.0.0.1:${sipPort}`, 'pbx', sink.port, { byeTimeoutMs: 100_000 }), [`127.0.0.1:${sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '110s'], {
      killAfterMs: 120_000,
    }).done.then((r) => ((callerDone = true), r));
    const callId = await until(async () => (await db('calls').where({ customer_id: cid, status: 'progressing' }).first())?.id as string | undefined, 30_000, 'the call up');
    await until(() => sink!.packets > 25, 15_000, 'RTP from the platform');

    const api = p.proc('control-api');
    api.kill('SIGKILL');
    expect((await api.exited).signal).to.equal('SIGKILL');
    const before = sink.packets;
    await sleep(3000);
    // 3 s of 20 ms packets is 150: the call's media did not wait for control-api
    expect(sink.packets - before, 'RTP packets in the 3 s after the kill').to.be.above(100);
    expect(callerDone, 'the caller got no BYE').to.equal(false);
    expect((await db('calls').where({ id: callId }).first())?.status).to.equal('progressing');

    const t0 = Date.now();
    await p.launch('control-api');
    const base = `http://127.0.0.1:${p.ports.http}`;
    await until(async () => (await fetch(`${base}/healthz`).catch(() => null))?.status === 200, 20_000, '/healthz after the restart');
    expect(Date.now() - t0, 'restart to /healthz').to.be.below(20_000);
    expect(callerDone, 'the caller got no BYE').to.equal(false);

    const res = await fetch(`${base}/v1.0/calls/${callId}/hangup?accesskey=${f.accesskey}`, { method: 'POST' });
    expect(res.status, await res.clone().text()).to.equal(200);
    const r = await caller;
    expect(r.code, r.errors.slice(0, 2000)).to.equal(0); // sipp exits 0 once it got (and answered) the BYE
    await until(async () => (await db('calls').where({ id: callId }).first())?.status === 'hangup', 10_000, 'the row hung up');
    expect(p.dead()).to.deep.equal([]);
    expect(p.unhandled()).to.deep.equal([]);
  });
});
