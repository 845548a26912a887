// Issue 13 item 4, second fault: Redis restarts under the platform (our own redis-server with
// appendonly yes, SIGTERM then started again on the same dir). Registrations and queued commands
// survive; a queued command dials once, and enqueueing it again under its id queues nothing.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { testDb } from '../../testkit/db';
import { killAllSipp } from '../../testkit/media-app/harness';
import { AOF, runRedisFault, startRedis } from '../../testkit/reliability/redis-fault';

describe('reliability: Redis restart with AOF', function () {
  this.timeout(120_000);
  after(() => killAllSipp());

  it('keeps the registration and the queued originates; each dials exactly once', async () => {
    const r = await runRedisFault({ db: await testDb(), calls: 3 });
    expect(r.bindingsBefore).to.equal(1);
    expect(r.bindingsAfter, 'registration after the restart').to.equal(1);
    expect(r.waitingBefore).to.equal(3);
    expect(r.waitingAfter, 'queued commands after the restart').to.equal(3);
    expect(r.jobsAfterDuplicate, 'same command ids enqueued again').to.equal(3);
    expect(r.heartbeatBack).to.equal(true);
    expect(r.jobs.map((j) => [j.state, j.attempts])).to.deep.equal([
      ['completed', 1],
      ['completed', 1],
      ['completed', 1],
    ]);
    for (const row of r.rows) {
      expect(row.status).to.equal('hangup');
      expect(row.tm_progressing, 'the phone answered').to.be.instanceOf(Date);
    }
    expect(r.invitesAtPhone, r.phone.errors).to.equal(3);
    expect(r.phone.code, r.phone.errors + r.phone.messages.slice(0, 3000)).to.equal(0);
  });

  for (const [name, persistence, survives] of [
    ['RDB every 60 s (the embedded settings before this battery)', ['--appendonly', 'no', '--save', '60 1'], false],
    ['AOF, fsync every second', AOF, true],
  ] as const) {
    it(`kill -9 of Redis 1.5 s after a write: ${name} ${survives ? 'keeps' : 'loses'} it`, async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'redis-kill-'));
      const server = await startRedis(dir, { persistence: [...persistence] });
      try {
        const c = new Redis(server.url);
        await c.set('queued-command', '1');
        c.disconnect();
        await new Promise((r) => setTimeout(r, 1500));
        await server.stop('SIGKILL');
        const again = await startRedis(dir, { port: server.port, persistence: [...persistence] });
        try {
          const fresh = new Redis(again.url);
          const v = await fresh.get('queued-command');
          fresh.disconnect();
          expect(v).to.equal(survives ? '1' : null);
        } finally {
          await again.stop();
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
