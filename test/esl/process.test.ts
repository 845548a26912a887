// The switch as the start command runs it when ESL_LISTEN is set: scripts/processes.ts's two extra
// processes (the switch's sip-server and esl/main.ts) as real children under scripts/supervise.ts's
// SupervisorGroup. Unmodified drachtio-fsmrf, on a drachtio-srf application of another (in-process)
// sip-server, connects to the event socket and creates an endpoint whose INVITE crosses both
// sip-servers; killing esl/main.ts gets it restarted; SIGTERM with a live channel sends the BYE and the
// process ends by itself (exit 0: no timer or socket left open).
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import Mrf, { type MediaServer as FsMediaServer } from 'drachtio-fsmrf';
import { platformProcesses } from '../../scripts/processes';
import { SupervisorGroup } from '../../scripts/supervise';
import { portRange } from '../../testkit/media-engine/support';
import { freePort, sipPortPair } from '../../testkit/ports';
import { until } from '../../testkit/media-app/harness';
import { connectSrf, disconnectSrf, startServer as startSipServer, type Server as SipServer } from '../sip-server/drachtio/harness';

const ROOT = path.resolve(__dirname, '../..');
const PASSWORD = 'esl-process-secret';

describe('esl/main.ts as a process: media engine, SIP face and event socket, supervised', function () {
  this.timeout(90_000);
  let appSip: SipServer;
  let appSrf: any; // drachtio-srf driven untyped, as the drachtio tests do
  let group: SupervisorGroup;
  let eslPort: number;
  let rtp: { min: number; max: number };
  let sipAddress: string;
  /** each member's output, per life */
  const lives = new Map<string, string[]>();
  const out = (name: string) => lives.get(name)?.at(-1) ?? '';
  const allOut = () => [...lives].map(([n, l]) => `[${n}]\n${l.join('\n--- restarted ---\n')}`).join('\n');
  const connect = (): Promise<FsMediaServer> => new Mrf(appSrf).connect({ address: '127.0.0.1', port: eslPort, secret: PASSWORD, listenAddress: '127.0.0.1', listenPort: 0 });

  before(async function () {
    appSip = await startSipServer();
    appSrf = await connectSrf(appSip.drachtioPort);
    eslPort = await freePort();
    sipAddress = `127.0.0.1:${await sipPortPair()}`;
    const drachtioPort = await freePort();
    rtp = portRange();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'info',
      REDIS_URL: process.env.TEST_REDIS_URL,
      REDIS_KEY_PREFIX: `eslproc${process.pid}:`,
      ESL_LISTEN: `127.0.0.1:${eslPort}`,
      ESL_PASSWORD: PASSWORD,
      ESL_SIP_ADDRESS: sipAddress,
      ESL_DRACHTIO_HOST: '127.0.0.1',
      ESL_DRACHTIO_PORT: String(drachtioPort),
      ESL_DRACHTIO_SECRET: 'switch-sip-secret',
      ESL_RTP_PORT_MIN: String(rtp.min),
      ESL_RTP_PORT_MAX: String(rtp.max),
      ESL_MEDIA_WORKERS: '1',
      // a HEARTBEAT timer running, for the shutdown to close
      ESL_HEARTBEAT_MS: '1000',
      ESL_STOP_TIMEOUT_MS: '5000',
      ESL_READY_LINE: '1',
      SIP_SERVER_READY_LINE: '1',
    };
    const procs = platformProcesses(env);
    expect(procs.map((p) => p.name)).to.deep.equal(['sip-server', 'switch-sip', 'esl', 'media-app', 'evals', 'control-api']);
    group = new SupervisorGroup({
      settings: { initialMs: 100, maxMs: 1000, stableMs: 60_000, loopExits: 5, loopWindowMs: 60_000 },
      log: () => undefined,
      onLife: (name, child: ChildProcess) => {
        const list = lives.get(name) ?? [];
        lives.set(name, list);
        const i = list.push('') - 1;
        const add = (d: Buffer) => (list[i] = (list[i]! + d.toString()).slice(-100_000));
        child.stdout!.on('data', add);
        child.stderr!.on('data', add);
      },
      onGiveUp: (name) => lives.get(name)?.push('GAVE UP'),
    });
    // only the switch's two: the platform's own three are the in-process sip-server's business here
    for (const p of procs.filter((x) => x.name === 'switch-sip' || x.name === 'esl')) {
      group.add(p.name, () => spawn(process.execPath, [...p.nodeArgs, '--require', 'tsx/cjs', path.join(ROOT, p.entry)], { cwd: ROOT, env: { ...env, ...p.env }, stdio: ['ignore', 'pipe', 'pipe'] }));
    }
    await until(() => /^READY /m.test(out('esl')) || !group.members.get('esl')!.running, 60_000, 'esl/main.ts ready').catch(() => undefined);
    if (!/^READY /m.test(out('esl'))) throw new Error(`the switch did not start:\n${allOut().slice(-4000)}`);
  });

  after(async () => {
    await group?.stop({ graceMs: 5000 });
    if (appSrf) disconnectSrf(appSrf);
    await appSip?.close();
  });

  it('Mrf.connect reads the profile address; createEndpoint answers with an engine SDP from ESL_RTP_PORT_*; destroy hangs up', async () => {
    const ms = await connect();
    try {
      expect(ms.sip.ipv4.udp.address).to.equal(sipAddress);
      const ep = await ms.createEndpoint();
      expect(ep.uuid).to.match(/^[0-9a-f-]{36}$/);
      const port = Number(ep.local.mediaPort);
      expect(port).to.be.within(rtp.min, rtp.max);
      expect(ep.local.sdp).to.match(/^m=audio \d+ RTP\/AVP /m);
      // resolves when the switch's BYE ended the dialog (fsmrf's destroy)
      await ep.destroy();
    } finally {
      ms.disconnect();
    }
  });

  it('killed (SIGKILL), the supervisor starts it again and fsmrf connects and creates an endpoint anew', async () => {
    const member = group.members.get('esl')!;
    const first = member.child!;
    const exited = once(first, 'exit');
    first.kill('SIGKILL');
    await exited;
    await until(() => member.lives === 2 && /^READY /m.test(out('esl')), 60_000, 'esl/main.ts restarted and ready');
    expect(member.child!.pid).to.not.equal(first.pid);
    const ms = await connect();
    try {
      const ep = await ms.createEndpoint();
      expect(Number(ep.local.mediaPort)).to.be.within(rtp.min, rtp.max);
      await ep.destroy();
    } finally {
      ms.disconnect();
    }
  });

  it('SIGINT with nobody connected: exit 0 by itself (the HEARTBEAT timer, the face, the workers closed), then restarted', async () => {
    const member = group.members.get('esl')!;
    const child = member.child!;
    const lives = member.lives;
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    child.kill('SIGINT');
    const [code, signal] = await exited;
    const ended = out('esl');
    expect({ code, signal }, ended.slice(-3000)).to.deep.equal({ code: 0, signal: null });
    expect(ended).to.include('"signal":"SIGINT"').and.include('"msg":"stopped"');
    await until(() => member.lives === lives + 1 && /^READY /m.test(out('esl')), 60_000, 'esl/main.ts restarted after SIGINT');
  });

  it('SIGTERM with a live channel: the channel gets its BYE, fsmrf its goodbye, and the process ends by itself (exit 0)', async () => {
    const ms = await connect();
    const ep = await ms.createEndpoint();
    const byeSeen = new Promise<void>((resolve) => ep.once('destroy', () => resolve()));
    const member = group.members.get('esl')!;
    const child = member.child!;
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    const stopped = member.stop('SIGTERM', 15_000);
    await byeSeen;
    const [code, signal] = await exited;
    await stopped;
    ms.disconnect();
    expect({ code, signal }, out('esl').slice(-3000)).to.deep.equal({ code: 0, signal: null });
    expect(out('esl')).to.include('"msg":"stopped"');
    expect(out('esl')).to.not.include('not closed within');
    expect(out('esl')).to.not.match(/uncaughtException|unhandledRejection|Unhandled 'error' event/);
  });
});
