// Issue 55's "Done when" script (scripts/fsmrf/e2e.ts) run as a user runs it, against real processes on
// loopback: the script's own sip-server (sip-server/main.ts), and the switch as the start command runs it
// with ESL_LISTEN set (scripts/processes.ts's switch-sip and esl/main.ts). The script drives unmodified
// drachtio-srf and drachtio-fsmrf and a baresip phone; the test fails when any step does.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { platformProcesses } from '../../scripts/processes';
import { STEPS } from '../../scripts/fsmrf/steps';
import { portRange } from '../../testkit/media-engine/support';
import { freePort, sipPortPair } from '../../testkit/ports';
import { until } from '../../testkit/media-app/harness';

const ROOT = path.resolve(__dirname, '../..');
const PASSWORD = 'esl-e2e-secret';
const HAVE_BARESIP = fs.existsSync('/usr/bin/baresip');

interface Child {
  proc: ChildProcess;
  out: string;
}

function start(entry: string, env: NodeJS.ProcessEnv, args: string[] = []): Child {
  const proc = spawn(process.execPath, ['--require', 'tsx/cjs', path.join(ROOT, entry), ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const c: Child = { proc, out: '' };
  proc.stdout!.on('data', (d: Buffer) => (c.out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (c.out += d.toString()));
  return c;
}

async function ready(c: Child, what: string): Promise<void> {
  await until(() => /^READY /m.test(c.out) || c.proc.exitCode !== null, 60_000, `${what} ready`).catch(() => undefined);
  if (!/^READY /m.test(c.out)) throw new Error(`${what} did not start:\n${c.out.slice(-3000)}`);
}

async function stop(c: Child | undefined): Promise<void> {
  if (!c || c.proc.exitCode !== null || c.proc.signalCode !== null) return;
  const gone = once(c.proc, 'exit');
  c.proc.kill('SIGTERM');
  const killer = setTimeout(() => c.proc.kill('SIGKILL'), 10_000);
  await gone;
  clearTimeout(killer);
}

(HAVE_BARESIP ? describe : describe.skip)('esl: the fsmrf end-to-end script against real processes', function () {
  this.timeout(180_000);
  const children: Child[] = [];
  let args: string[];

  before(async () => {
    const appSip = await sipPortPair();
    const appDrachtio = await freePort();
    const eslPort = await freePort();
    const rtp = portRange();
    const base: NodeJS.ProcessEnv = {
      ...process.env,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
      REDIS_URL: process.env.TEST_REDIS_URL,
      REDIS_KEY_PREFIX: `esle2e${process.pid}:`,
      SIP_SERVER_READY_LINE: '1',
    };
    const env: NodeJS.ProcessEnv = {
      ...base,
      ESL_LISTEN: `127.0.0.1:${eslPort}`,
      ESL_PASSWORD: PASSWORD,
      ESL_SIP_ADDRESS: `127.0.0.1:${await sipPortPair()}`,
      ESL_DRACHTIO_PORT: String(await freePort()),
      ESL_DRACHTIO_SECRET: 'switch-sip-secret',
      ESL_RTP_PORT_MIN: String(rtp.min),
      ESL_RTP_PORT_MAX: String(rtp.max),
      ESL_MEDIA_WORKERS: '1',
      ESL_READY_LINE: '1',
      // the script's WebSocket server for forkAudioStart is on loopback, which the egress policy refuses unless listed
      EGRESS_ALLOW_CIDRS: '127.0.0.1/32',
    };
    const procs = platformProcesses(env);
    const sw = procs.find((p) => p.name === 'switch-sip')!;
    // the script's sip-server: the switch's shape (SIP on one address, no TLS/WS/metrics/capture) on its own ports
    const appEnv = { ...base, ...sw.env, SIP_LISTEN_HOST: '127.0.0.1', SIP_PORT: String(appSip), SIP_ADVERTISED_HOST: '127.0.0.1', DRACHTIO_PORT: String(appDrachtio), DRACHTIO_SECRET: 'app-secret' };
    const app = start('sip-server/main.ts', appEnv);
    children.push(app);
    const switchSip = start(sw.entry, { ...env, ...sw.env });
    children.push(switchSip);
    const esl = start('esl/main.ts', env);
    children.push(esl);
    await ready(app, "the script's sip-server");
    await ready(switchSip, "the switch's sip-server");
    await ready(esl, 'esl/main.ts');
    args = ['--drachtio', `127.0.0.1:${appDrachtio}`, '--drachtio-secret', 'app-secret', '--sip', `127.0.0.1:${appSip}`, '--esl', `127.0.0.1:${eslPort}`];
  });

  after(async () => {
    for (const c of children.reverse()) await stop(c);
  });

  it('every step passes: connect, connectCaller, play, playCollect, record, bridge, conference with a mute, forkAudioStart, destroy', async () => {
    // the password in the environment, as esl/README.md runs it (a flag shows in ps)
    const script = start('scripts/fsmrf/e2e.ts', { ...process.env, LOG_LEVEL: 'silent', ESL_PASSWORD: PASSWORD }, args);
    children.push(script);
    const [code] = (await once(script.proc, 'exit')) as [number | null];
    const lines = script.out.split('\n').filter((l) => /^(PASS|FAIL|SKIP) /.test(l));
    const diag = `${script.out}\n--- switch ---\n${children[2]!.out.slice(-3000)}`;
    expect(
      lines.map((l) => l.split(':')[0]),
      diag,
    ).to.deep.equal([...STEPS.map(([name]) => `PASS ${name}`), 'PASS fsmrf end to end in ' + lines.at(-1)!.slice('PASS fsmrf end to end in '.length)]);
    expect(code, diag).to.equal(0);
  });
});
