// media-app as a process (media-app/main.ts), started before sip-server (sip-server/main.ts): it keeps
// retrying the drachtio connection, becomes ready once sip-server is up, and on SIGTERM with
// DRAIN_TIMEOUT_SEC=0 (no drain: test/scale/drain.test.ts has the drain) hangs up its live calls (the
// caller gets a BYE), removes its heartbeat and exits 0.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { repos } from '../../core/repos';
import { nodeAliveKey } from '../../core/commands/contracts';
import { testDb, testDatabaseUrl, truncateAll } from '../../testkit/db';
import { freePort, portBlock } from '../../testkit/ports';
import { killAllSipp, RtpSink, sipp, SECRET, uacWaitsForBye, until } from '../../testkit/media-app/harness';

const ROOT = path.resolve(__dirname, '../..');

function start(script: string, env: Record<string, string>): { proc: ChildProcess; out: () => string; exited: Promise<number | null> } {
  const proc = spawn(process.execPath, ['--require', 'tsx/cjs', script], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  return { proc, out: () => out, exited };
}

describe('media-app process', function () {
  this.timeout(90_000);
  const procs: ChildProcess[] = [];
  after(() => {
    killAllSipp();
    for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
  });

  it('waits for sip-server, serves a call, and on SIGTERM hangs it up and exits cleanly', async () => {
    await truncateAll();
    const db = await testDb();
    const sipPort = await freePort();
    const drachtioPort = await freePort();
    const prefix = `tmp${process.pid}_${randomBytes(3).toString('hex')}:`;
    const nodeId = `proc-${process.pid}`;
    const rtpMin = portBlock('platformRtp', 200).min;
    const app = start('media-app/main.ts', {
      DATABASE_URL: await testDatabaseUrl(),
      REDIS_URL: process.env.TEST_REDIS_URL!,
      REDIS_KEY_PREFIX: prefix,
      DATA_DIR: path.join(os.tmpdir(), `media-app-proc-${process.pid}`),
      SIP_DOMAIN: 'sip.test',
      JWT_SECRET: 'y'.repeat(40),
      DRACHTIO_HOST: '127.0.0.1',
      DRACHTIO_PORT: String(drachtioPort),
      DRACHTIO_SECRET: SECRET,
      MEDIA_APP_NODE_ID: nodeId,
      RTP_PORT_MIN: String(rtpMin),
      RTP_PORT_MAX: String(rtpMin + 199),
      MEDIA_WORKERS: '1',
      MEDIA_APP_READY_LINE: '1',
      DRAIN_TIMEOUT_SEC: '0',
      LOG_LEVEL: 'warn',
    });
    procs.push(app.proc);
    await new Promise((r) => setTimeout(r, 2000));
    expect(app.out()).to.not.include('READY');
    expect(app.proc.exitCode).to.equal(null);

    const sip = start('sip-server/main.ts', {
      SIP_LISTEN_HOST: '127.0.0.1',
      SIP_PORT: String(sipPort),
      SIP_TRANSPORTS: 'udp,tcp',
      SIP_ALLOWLIST: '127.0.0.1',
      SIP_UA_BLOCKLIST: 'none-such-agent',
      DRACHTIO_HOST: '127.0.0.1',
      DRACHTIO_PORT: String(drachtioPort),
      DRACHTIO_SECRET: SECRET,
      SIP_SERVER_READY_LINE: '1',
      LOG_LEVEL: 'warn',
    });
    procs.push(sip.proc);
    await until(() => app.out().includes('READY'), 20_000, `media-app ready; output: ${app.out()}`);

    const redis = new Redis(process.env.TEST_REDIS_URL!);
    try {
      expect(await redis.exists(prefix + nodeAliveKey(nodeId))).to.equal(1);
      const cid = (await repos(db).customers.create({ email: `proc${Date.now()}@example.test`, status: 'active', name: 'p' })).id;
      await trunksRepo(db).create(cid, `trp${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.0/8'] });
      const flow = await flowsRepo(db).create({
        customer_id: cid,
        actions: parseActions([{ type: 'answer' }, { type: 'talk', option: { text: 'This is a long announcement. '.repeat(20), language: 'en-US' } }]),
      } as never);
      await numbersRepo(db).create({ customer_id: cid, number: '+899100000777', type: 'virtual', call_flow_id: flow.id });
      const sink = await RtpSink.open();
      const caller = sipp(uacWaitsForBye(`+899100000777@127.0.0.1:${sipPort}`, 'pbx', sink.port), [`127.0.0.1:${sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 40_000 });
      const call = await until(async () => (await db('calls').where({ customer_id: cid, status: 'progressing' }))[0], 15_000, 'call up');
      app.proc.kill('SIGTERM');
      const r = await caller.done;
      sink.close();
      expect(r.code, r.errors + r.messages).to.equal(0); // the BYE came
      expect(await app.exited).to.equal(0);
      const row = (await db('calls').where({ id: call.id }))[0];
      expect(row).to.include({ status: 'hangup', hangup_by: 'local', hangup_reason: 'normal' });
      expect(await redis.exists(prefix + nodeAliveKey(nodeId))).to.equal(0);
    } finally {
      redis.disconnect();
      sip.proc.kill('SIGTERM');
      await sip.exited;
    }
  });
});
