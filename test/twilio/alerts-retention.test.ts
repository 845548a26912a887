// Issue 54 review: Twilio keeps its debugger records (Alerts, Notifications) 30 days; ours were never
// deleted. The retention pass (control-api/jobs/alerts-retention.ts) deletes those older than
// TWILIO_ALERTS_RETENTION_DAYS, read off the injected clock (core/clock), and runs as a BullMQ repeatable
// job like the account lifecycle pass; close() leaves no worker taking its runs. Rows are backdated; real
// Postgres and Redis.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import Redis from 'ioredis';
import { Queue, Worker } from 'bullmq';
import { clock } from '../../core/clock';
import { loadConfig } from '../../core/config';
import { customersRepo } from '../../core/repos/customers';
import { twilioAlertsRepo } from '../../core/repos/twilio-alerts';
import { ALERTS_RETENTION_QUEUE, runAlertsRetention, startAlertsRetention } from '../../control-api/jobs/alerts-retention';
import { bullConnection } from '../../control-api/bull-connection';
import { testDb } from '../../testkit/db';

const DAY = 86_400_000;

describe('Twilio alerts retention: older than TWILIO_ALERTS_RETENTION_DAYS deleted by a periodic pass', function () {
  this.timeout(30_000);
  let customerId: string;
  const redisUrl = () => {
    const u = process.env.TEST_REDIS_URL;
    if (!u) throw new Error('TEST_REDIS_URL is not set: run `source .data/env`');
    return u;
  };

  before(async () => {
    const db = await testDb();
    customerId = (await customersRepo(db).create({ email: `ret${Date.now()}@example.com`, name: 'ret', status: 'active' } as never)).id;
  });
  afterEach(() => clock.reset());

  /** An alert created `ageMs` before the clock's now. */
  async function aged(ageMs: number, text: string): Promise<string> {
    const db = await testDb();
    clock.setNow(Date.now() - ageMs);
    const row = await twilioAlertsRepo(db).add({ customer_id: customerId, call_id: null, error_code: 11200, log_level: 'error', alert_text: text });
    clock.reset();
    return row.id;
  }
  const ids = async () => (await twilioAlertsRepo(await testDb()).list(customerId, {}, 0, 1000)).map((r) => r.id);

  it('TWILIO_ALERTS_RETENTION_DAYS is 30 unless set; 0 and non-integers are refused', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cfg-'));
    try {
      const days = (v: string) => loadConfig({ DATA_DIR: dir, TWILIO_ALERTS_RETENTION_DAYS: v }).twilioAlertsRetentionDays;
      expect(days('')).to.equal(30);
      expect(days('7')).to.equal(7);
      for (const bad of ['0', '1.5', 'month']) expect(() => days(bad), bad).to.throw(/TWILIO_ALERTS_RETENTION_DAYS/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a pass deletes what is older than the retention by the clock, to the millisecond, and keeps the rest', async () => {
    const old = await aged(31 * DAY, 'old');
    const edge = await aged(30 * DAY - 60_000, 'a minute inside 30 days');
    const fresh = await aged(DAY, 'yesterday');
    expect(await ids()).to.include.members([old, edge, fresh]);
    expect(await runAlertsRetention(await testDb(), 30)).to.be.at.least(1);
    expect(await ids())
      .to.include.members([edge, fresh])
      .and.not.include(old);
    // two minutes later by the injected clock, the edge row is past 30 days
    clock.setNow(Date.now() + 120_000);
    expect(await runAlertsRetention(await testDb(), 30)).to.equal(1);
    expect(await ids())
      .to.include(fresh)
      .and.not.include(edge);
    // a shorter retention takes yesterday's too
    clock.reset();
    expect(await runAlertsRetention(await testDb(), 1)).to.be.at.least(1);
    expect(await ids()).to.not.include(fresh);
  });

  it('the BullMQ repeatable job runs the pass on its own; close() stops it', async () => {
    const old = await aged(40 * DAY, 'old, for the job');
    const prefix = `alerts-retention-${crypto.randomBytes(3).toString('hex')}`;
    const passes: number[] = [];
    let firstPass!: () => void;
    const ran = new Promise<void>((r) => (firstPass = r));
    const job = await startAlertsRetention({ db: await testDb(), redisUrl: redisUrl(), prefix, days: 30, everyMs: 200, onPass: (n) => (passes.push(n), firstPass()) });
    const redis = new Redis(redisUrl());
    // the schedule's queue as another control-api copy sees it
    const queue = new Queue(ALERTS_RETENTION_QUEUE, { connection: bullConnection(redisUrl()), prefix });
    let probe: Worker | null = null;
    let closed = false;
    try {
      await ran;
      expect(await ids()).to.not.include(old);
      expect(await queue.getWorkersCount()).to.equal(1);
      await job.close();
      closed = true;
      const passesAtClose = passes.length;
      expect(passes.length).to.be.at.least(1);
      expect(await queue.getWorkersCount(), 'no worker left after close()').to.equal(0);
      // the schedule stays (other copies share it): its next runs fall due and go to whichever worker
      // is there. A probe worker takes three of them; the closed job runs none, so an aged row added
      // after close() survives them.
      const late = await aged(40 * DAY, 'old, added after close()');
      let took = 0;
      let threeTaken!: () => void;
      const three = new Promise<void>((r) => (threeTaken = r));
      probe = new Worker(ALERTS_RETENTION_QUEUE, async () => void (++took === 3 && threeTaken()), { connection: bullConnection(redisUrl()), prefix });
      await three;
      expect(passes.length, 'passes after close()').to.equal(passesAtClose);
      expect(await ids()).to.include(late);
    } finally {
      if (!closed) await job.close();
      await probe?.close();
      await queue.close();
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
  });
});
