// Issue 52's chaos bench found it: a sip-server restart stranded every call. kill -9 of sip-server takes
// the SIP dialogs with it; media-app reconnects to the new sip-server by itself and used to run on with
// calls nobody could end (row `progressing`, flow `running`, RTP to a caller who had hung up). The
// platform's three processes run as children (testkit/reliability/processes.ts); sipp calls a number
// whose flow answers and talks. sip-server is killed and started again: media-app ends the call itself
// (media-app/call/sip-gone.ts: hangup written, flow ended, endpoint freed) within 10 s of the kill,
// and takes a new call once reconnected; the caller gets the BYE of its lost dialog then.
import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { buildTestApp, createFixture, TEST_JWT_SECRET } from '../../testkit/api';
import { testDb } from '../../testkit/db';
import { ProcessPlatform } from '../../testkit/reliability/processes';
import { killAllSipp, RtpSink, sipp, sleep, UdpSip, uacWaitsForBye, until } from '../../testkit/media-app/harness';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';

/** An out-of-dialog OPTIONS: sip-server answers 503 while no application is connected, media-app 200. */
function options(sipPort: number, localPort: number): string {
  return [
    `OPTIONS sip:probe@127.0.0.1:${sipPort} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${localPort};branch=z9hG4bK${randomUUID().slice(0, 12)};rport`,
    `From: <sip:probe@127.0.0.1>;tag=${randomUUID().slice(0, 8)}`,
    'To: <sip:probe@127.0.0.1>',
    `Call-ID: probe-${randomUUID()}`,
    'CSeq: 1 OPTIONS',
    'Max-Forwards: 70',
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}

describe('reliability: kill -9 of sip-server with a call up', function () {
  this.timeout(180_000);
  let p: ProcessPlatform | null = null;
  const sinks: RtpSink[] = [];
  let probe: UdpSip | null = null;
  after(async () => {
    killAllSipp();
    for (const s of sinks) s.close();
    probe?.close();
    await p?.close();
  });

  it('media-app ends the call (hangup, flow ended, RTP stopped) within 10 s and takes new calls after the restart', async () => {
    const t = await buildTestApp();
    const f = await createFixture(t.ctx);
    await t.close();
    const db = await testDb();
    const cid = f.customer.id;
    await trunksRepo(db).create(cid, `ks${randomBytes(4).toString('hex')}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.0/8'] });
    const talk = { type: 'talk', option: { text: 'This is a long announcement that keeps the line busy. '.repeat(30), language: 'en-US' } };
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'answer' }, talk]) } as never);
    const number = `+8996${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });

    p = await ProcessPlatform.start({ jwtSecret: TEST_JWT_SECRET });
    const sink = await RtpSink.open();
    sinks.push(sink);
    const sipPort = p.ports.sip;
    // the caller's dialog died with sip-server: it gets its BYE, with the Reason, once media-app is
    // connected to the restarted one (media-app/call/sip-gone-bye.ts); sipp fails on any other Reason
    const byeWithReason = `<recv request="BYE" timeout="150000">
  <action><ereg regexp="Q\\.850;cause=41" search_in="hdr" header="Reason:" check_it="true" assign_to="reason"/></action>
</recv>
<Reference variables="reason"/>`;
    const scenario = uacWaitsForBye(`${number}@127.0.0.1:${sipPort}`, 'pbx', sink.port, { byeTimeoutMs: 150_000 }).replace('<recv request="BYE" timeout="150000"/>', byeWithReason);
    expect(scenario).to.contain('cause=41');
    const first = sipp(scenario, [`127.0.0.1:${sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '160s'], { killAfterMs: 170_000 });
    const callId = await until(async () => (await db('calls').where({ customer_id: cid, status: 'progressing' }).first())?.id as string | undefined, 30_000, 'the call up');
    await until(() => sink.packets > 25, 15_000, 'RTP from the platform');
    const af = await until(async () => (await db('activeflows').where({ reference_id: callId }).first()) as { id: string; status: string } | undefined, 10_000, 'the activeflow');
    expect(af.status).to.equal('running');

    const sip = p.proc('sip-server');
    sip.kill('SIGKILL');
    expect((await sip.exited).signal).to.equal('SIGKILL');
    const killedAt = Date.now();
    const restarted = p.launch('sip-server');
    restarted.catch(() => undefined); // awaited below

    const row = await until(
      async () => {
        const r = (await db('calls').where({ id: callId }).first()) as { status: string; hangup_by: string; tm_hangup: unknown } | undefined;
        return r?.status === 'hangup' ? r : null;
      },
      10_000,
      'the call row hung up within 10 s of the kill',
    );
    expect(Date.now() - killedAt, 'kill to hangup').to.be.below(10_000);
    expect(row.hangup_by).to.equal('local');
    expect(row.tm_hangup).to.not.equal(null);
    // the log line is written before the close, but reaches the pipe when pino flushes
    const named = new RegExp(`sip_server_gone[^\\n]*${callId}|${callId}[^\\n]*sip_server_gone`);
    await until(() => named.test(p!.proc('media-app').out()), 5000, "media-app's log naming the call and why it ended");
    const flowAfter = await until(async () => ((await db('activeflows').where({ id: af.id }).first()) as { status: string }).status === 'ended', 5000, 'the flow ended');
    expect(flowAfter).to.equal(true);
    // the endpoint is freed before the hangup row is written: what was in flight has arrived within 500 ms
    await sleep(500);
    const settled = sink.packets;
    await sleep(2000);
    expect(sink.packets - settled, 'RTP packets to the caller 0.5-2.5 s after the hangup').to.equal(0);

    // the restarted sip-server, media-app connected to it again (OPTIONS: 503 without an application), a new call answered
    await restarted;
    probe = await UdpSip.open();
    const u = probe;
    await until(async () => (await u.request(options(sipPort, u.port), sipPort).catch(() => null))?.status === 200, 30_000, 'media-app connected to the new sip-server');
    // the first caller got the BYE of its lost dialog and answered it: sipp ends with success
    let bound: NodeJS.Timeout | undefined;
    const firstDone = await Promise.race([first.done, new Promise<null>((r) => (bound = setTimeout(() => r(null), 10_000)))]);
    clearTimeout(bound);
    expect(firstDone, 'the first caller got its BYE within 10 s of the reconnection').to.not.equal(null);
    expect(firstDone!.code, firstDone!.errors.slice(0, 2000)).to.equal(0);
    const sink2 = await RtpSink.open();
    sinks.push(sink2);
    const second = await sipp(uacWaitsForBye(`${number}@127.0.0.1:${sipPort}`, 'pbx', sink2.port, { hangUpAfterMs: 1500 }), [`127.0.0.1:${sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '30s'], {
      killAfterMs: 40_000,
    }).done;
    expect(second.code, second.errors.slice(0, 2000)).to.equal(0); // answered, then our BYE got its 200
    expect(sink2.packets, 'RTP on the new call').to.be.above(0);
    await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }).select('id')).length === 2, 10_000, 'the second call hung up');
    expect(p.dead()).to.deep.equal([]);
    expect(p.unhandled()).to.deep.equal([]);
  });
});
