// The start command runs the evals worker with the platform (scripts/processes.ts, scripts/start.ts):
// process `evals` after media-app, dialling the platform's own sip-server unless EVALS_SIP_EDGE names
// another; under scripts/supervise.ts's SupervisorGroup, as start.ts runs it, it starts, is started
// again when killed, and a SIGTERM ends it by itself (exit 0: its timers, database and Redis closed).
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { platformProcesses } from '../../scripts/processes';
import { SupervisorGroup } from '../../scripts/supervise';
import { testDatabaseUrl } from '../../testkit/db';
import { until } from '../../testkit/media-app/harness';

const ROOT = path.resolve(__dirname, '../..');

describe('the start command runs the evals worker', function () {
  this.timeout(60_000);

  it("is one of the platform's processes, its edge the local sip-server unless EVALS_SIP_EDGE is set", () => {
    const evals = (env: NodeJS.ProcessEnv) => platformProcesses(env).find((p) => p.name === 'evals')!;
    expect(evals({})).to.deep.equal({ name: 'evals', entry: 'evals/main.ts', nodeArgs: [], env: { EVALS_SIP_EDGE: '127.0.0.1:5060' } });
    expect(evals({ SIP_LISTEN_HOST: '0.0.0.0', SIP_PORT: '5070' }).env).to.deep.equal({ EVALS_SIP_EDGE: '127.0.0.1:5070' });
    expect(evals({ SIP_LISTEN_HOST: '10.1.2.3' }).env).to.deep.equal({ EVALS_SIP_EDGE: '10.1.2.3:5060' });
    expect(evals({ EVALS_SIP_EDGE: '10.9.9.9:5090', SIP_PORT: '5070' }).env).to.deep.equal({});
  });

  it('supervised as start.ts does: started, started again when killed, and SIGTERM ends it by itself (exit 0)', async () => {
    const proc = platformProcesses({}).find((p) => p.name === 'evals')!;
    const lives: string[] = [];
    const env = { ...process.env, DATABASE_URL: await testDatabaseUrl(), REDIS_URL: process.env.TEST_REDIS_URL, REDIS_KEY_PREFIX: `evalsproc${process.pid}:`, LOG_LEVEL: 'info', ...proc.env };
    const group = new SupervisorGroup({
      settings: { initialMs: 100, maxMs: 1000, stableMs: 60_000, loopExits: 5, loopWindowMs: 60_000 },
      log: () => undefined,
      onLife: (_name, child: ChildProcess) => {
        const i = lives.push('') - 1;
        const add = (d: Buffer) => (lives[i] = (lives[i]! + d.toString()).slice(-50_000));
        child.stdout!.on('data', add);
        child.stderr!.on('data', add);
      },
      onGiveUp: () => lives.push('GAVE UP'),
    });
    const started = (life: number) => until(() => lives[life]?.includes('evals worker started') ?? false, 30_000, `evals life ${life + 1} started`);
    try {
      const member = group.add(proc.name, () =>
        spawn(process.execPath, [...proc.nodeArgs, '--require', 'tsx/cjs', path.join(ROOT, proc.entry)], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] }),
      );
      await started(0).catch(() => expect.fail(lives.join('\n---\n').slice(-3000)));
      expect(lives[0]).to.include('"edge":"127.0.0.1:5060"');
      const first = member.child!;
      const killed = once(first, 'exit');
      first.kill('SIGKILL');
      await killed;
      await started(1);
      const second = member.child!;
      const exited = once(second, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
      second.kill('SIGTERM');
      const [code, signal] = await exited;
      expect({ code, signal }, lives[1]!.slice(-3000)).to.deep.equal({ code: 0, signal: null });
      expect(lives[1]).to.include('"signal":"SIGTERM"');
    } finally {
      await group.stop({ graceMs: 5000 });
    }
  });
});
