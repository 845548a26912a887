// The sip-server process entry: starts from the environment, accepts an srf application, answers
// a call, and exits 0 on SIGTERM; a bad setting exits 2 with the variable named.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../../../testkit/ports';
import { connectSrf, disconnectSrf, killAllSipp, SDP, SECRET, sipp } from './harness';

const ROOT = path.resolve(__dirname, '../../..');

function startMain(env: Record<string, string>) {
  const proc = spawn(process.execPath, ['-r', 'tsx/cjs', path.join(ROOT, 'sip-server/main.ts')], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', SIP_SERVER_READY_LINE: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d) => {
    out += d;
  });
  proc.stderr.on('data', (d) => {
    out += d;
  });
  const ready = new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`not ready: ${out}`)), 15000);
    proc.stdout.on('data', () => {
      if (out.includes('READY ')) {
        clearTimeout(t);
        resolve();
      }
    });
    proc.once('exit', () => {
      clearTimeout(t);
      reject(new Error(`exited: ${out}`));
    });
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, ready, exited, output: () => out };
}

describe('sip-server main.ts process', function () {
  this.timeout(30000);
  afterEach(() => killAllSipp());

  it('serves an srf application and shuts down cleanly on SIGTERM', async () => {
    const sipPort = await freePort();
    const drachtioPort = await freePort();
    const m = startMain({
      SIP_LISTEN_HOST: '127.0.0.1',
      SIP_PORT: String(sipPort),
      DRACHTIO_HOST: '127.0.0.1',
      DRACHTIO_PORT: String(drachtioPort),
      DRACHTIO_SECRET: SECRET,
    });
    try {
      await m.ready;
      const srf = await connectSrf(drachtioPort);
      let answered = 0;
      srf.invite(async (req: any, res: any) => {
        answered++;
        await srf.createUAS(req, res, { localSdp: SDP });
      });
      const r = await sipp(['-sn', 'uac', `127.0.0.1:${sipPort}`, '-i', '127.0.0.1', '-p', String(await freePort()), '-m', '2', '-r', '10', '-d', '100', '-timeout', '10s']).done;
      expect(r.code, r.errors).to.equal(0);
      expect(answered).to.equal(2);
      const closed = new Promise<void>((resolve) => srf.once('close', () => resolve()));
      m.proc.kill('SIGTERM');
      expect(await m.exited).to.equal(0);
      await closed;
      disconnectSrf(srf);
    } finally {
      m.proc.kill('SIGKILL');
    }
  });

  it('a bad setting stops it with exit code 2 and the variable named', async () => {
    const m = startMain({ SIP_PORT: 'not-a-port', DRACHTIO_PORT: String(await freePort()) });
    m.ready.catch(() => undefined);
    expect(await m.exited).to.equal(2);
    expect(m.output()).to.include('SIP_PORT');
  });
});
