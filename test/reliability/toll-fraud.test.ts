// Toll fraud (issue 13, item 3): a tel destination outside the whitelist or under a premium-rate
// prefix, and a customer over its concurrency cap, are refused before any INVITE leaves — on every
// path that dials a number: POST /calls and /groupcalls (control-api), the flow's call and connect
// actions, originate commands and a SIP extension calling a number (media-app). A sipp gateway on
// loopback stands for the provider; what it received is the verdict.
import { sipProvider } from '../../testkit/providers';
import { expect } from 'chai';
import request from 'supertest';
import { Redis } from 'ioredis';
import { buildTestApp, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { envelopeProblem } from './api/envelope';
import { routesRepo } from '../../core/repos/routes';
import { numbersRepo } from '../../core/repos/numbers';
import { callsRepo } from '../../core/repos/calls';
import { addBalance, ensureBillingAccount } from '../../core/billing';
import { CommandBus } from '../../core/commands/bus';
import { blockedPrefixes, DEFAULT_BLOCKED_PREFIXES, telRefusal } from '../../core/calls/dial-policy';
import { sippMediaPort, freePort } from '../../testkit/ports';
import { answeringUas, createExtension, killAllSipp, sipp, sleep, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { phoneCallRefused } from '../xfer/support';

/** The distinct INVITEs (by Call-ID) a sipp trace shows as received, by Request-URI user. */
function invitesIn(messages: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const block of messages.split(/-{20,}/)) {
    if (!/message received/.test(block)) continue;
    const m = /^INVITE sip:([^@;\s]+)@/m.exec(block);
    const id = /^Call-ID:\s*(\S+)/im.exec(block);
    if (!m || !id) continue;
    if (!out.has(m[1]!)) out.set(m[1]!, new Set());
    out.get(m[1]!)!.add(id[1]!);
  }
  return out;
}
const count = (inv: Map<string, Set<string>>, user: string) => inv.get(user)?.size ?? 0;
const total = (inv: Map<string, Set<string>>) => [...inv.values()].reduce((n, s) => n + s.size, 0);

describe('reliability: toll fraud', function () {
  this.timeout(120_000);

  describe('the policy (pure)', () => {
    it('default prefixes block premium and satellite ranges; DIAL_BLOCKED_PREFIXES replaces them', () => {
      const us = ['us', 'gb'];
      for (const n of ['+19005550123', '+19765550123', '+449012345678', '+449812345678', '+881631234567', '+8821234567', '+88312345678', '+870123456789', '+97912345678']) {
        expect(telRefusal(n, us), n).to.deep.include({ reason: 'premium_rate_prefix' });
      }
      expect(telRefusal('+12125550100', us)).to.equal(null);
      expect(telRefusal('+447700900123', us)).to.equal(null);
      expect(telRefusal('+33612345678', us)).to.deep.equal({ reason: 'destination_not_whitelisted', country: 'fr' });
      expect(telRefusal('+899100000001', [])).to.equal(null); // virtual: internal
      expect(telRefusal('12125550100', us)).to.deep.equal({ reason: 'invalid_number' });
      const saved = process.env.DIAL_BLOCKED_PREFIXES;
      try {
        process.env.DIAL_BLOCKED_PREFIXES = ' +1212, 44 20 ,junk';
        expect(blockedPrefixes()).to.deep.equal(['+1212', '+4420']);
        expect(telRefusal('+12125550100', us)).to.deep.include({ reason: 'premium_rate_prefix', prefix: '+1212' });
        expect(telRefusal('+19005550123', us)).to.equal(null);
        process.env.DIAL_BLOCKED_PREFIXES = '';
        expect(blockedPrefixes()).to.deep.equal([]);
      } finally {
        if (saved === undefined) delete process.env.DIAL_BLOCKED_PREFIXES;
        else process.env.DIAL_BLOCKED_PREFIXES = saved;
      }
      expect(blockedPrefixes()).to.have.length(DEFAULT_BLOCKED_PREFIXES.length);
    });
  });

  describe('control-api whitelist (no platform)', () => {
    let t: TestApp;
    let f: Fixture;
    before(async () => {
      t = await buildTestApp({ env: { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RATE_LIMIT_SCALE: '0' } });
      f = await createFixture(t.ctx);
    });
    after(async () => t.close());

    const calls = async () => (await request(t.app).get('/v1.0/calls').query({ accesskey: f.accesskey })).body.result as unknown[];
    const dial = (target: string) =>
      request(t.app)
        .post('/v1.0/calls')
        .query({ accesskey: f.accesskey })
        .send({ source: { type: 'tel', target: '+15550100000' }, destinations: [{ type: 'tel', target }], actions: [{ type: 'hangup' }] });

    it('destinations outside the whitelist (empty, then us only) are refused with 403 and leave no call', async () => {
      for (const target of ['+442071234567', '+882355512345', '+9005551234', '+2472345']) {
        const res = await dial(target);
        expect(res.status, `${target}: ${JSON.stringify(res.body)}`).to.equal(403);
        expect(envelopeProblem(res)).to.equal(undefined);
      }
      await request(t.app)
        .put(`/v1.0/outbound_configs/${f.outboundConfig.id}`)
        .query({ accesskey: f.accesskey })
        .send({ destination_whitelist: ['us'] })
        .expect(200);
      const gb = await dial('+442071234567');
      expect(gb.status).to.equal(403);
      expect(gb.body.error.details[0]).to.include({ reason: 'destination_not_whitelisted', country: 'gb' });
      // a mixed list is refused whole: the whitelisted destination is not dialled either
      const mixed = await request(t.app)
        .post('/v1.0/calls')
        .query({ accesskey: f.accesskey })
        .send({
          source: { type: 'tel', target: '+15550100000' },
          destinations: [
            { type: 'tel', target: '+12125550100' },
            { type: 'tel', target: '+442071234567' },
          ],
          actions: [{ type: 'hangup' }],
        });
      expect(mixed.status, JSON.stringify(mixed.body)).to.be.oneOf([400, 403]); // 400 here: no route to +1 either
      expect(await calls()).to.have.length(0);
    });
  });

  describe('end to end: a sipp gateway behind the customer’s route', () => {
    let p: Platform;
    let t: TestApp;
    let f: Fixture;
    let gwPort: number;
    let source: string;
    let bus: CommandBus;
    let busRedis: Redis;

    before(async () => {
      p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256' });
      t = await buildTestApp({ env: { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix, DATA_DIR: p.config.dataDir } });
      busRedis = new Redis(process.env.TEST_REDIS_URL!, { maxRetriesPerRequest: 2 });
      bus = new CommandBus({ redis: busRedis, keyPrefix: p.config.redisKeyPrefix });
      f = await createFixture(t.ctx);
      await t.ctx.repos.outboundConfigs.update(f.outboundConfig.id, { destination_whitelist: ['us', 'gb'] }, { customerId: f.customer.id });
      source = `+1415${String(Date.now()).slice(-7)}`;
      await numbersRepo(t.ctx.db).create({ customer_id: f.customer.id, number: source, type: 'normal' });
      const acc = await ensureBillingAccount(t.ctx.db, f.customer.id);
      await addBalance(t.ctx.db, acc.id, 1_000_000_000, `tf:${acc.id}`);
      gwPort = await freePort();
      const provider = await sipProvider(t.ctx.db, `127.0.0.1:${gwPort}`, 'gateway');
      await routesRepo(t.ctx.db).create({ customer_id: f.customer.id, name: 'all', detail: '', provider_id: provider.id, priority: 1, target: 'all' });
    });
    after(async () => {
      delete process.env.DIAL_MAX_CONCURRENT_PSTN_CALLS;
      killAllSipp();
      await bus?.close();
      busRedis?.disconnect();
      await t?.close();
      await p?.close();
    });

    const api = () => ({
      post: (path: string, body: object) => request(t.app).post(`/v1.0${path}`).query({ accesskey: f.accesskey }).send(body),
    });
    const tel = (target: string) => ({ type: 'tel', target });

    /** Runs `fn` with the gateway up (answering after `pauseMs`), then stops it: the INVITEs it received. */
    async function withGateway(fn: () => Promise<void>, pauseMs = 300): Promise<Map<string, Set<string>>> {
      const gw = sipp(answeringUas({ pauseMs }), ['-i', '127.0.0.1', '-p', String(gwPort), '-m', '50', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 90_000 });
      await sleep(300);
      await fn();
      killAllSipp();
      return invitesIn((await gw.done).messages);
    }
    const allHungUp = () =>
      until(async () => (await t.ctx.db('calls').where({ customer_id: f.customer.id }).whereNot({ status: 'hangup' })).length === 0, 30_000, 'every call of the customer hung up');

    it('POST /calls, POST /groupcalls and the flow’s call and connect actions: blocked numbers get no INVITE, the allowed one exactly one', async () => {
      const inv = await withGateway(async () => {
        for (const n of ['+19005550123', '+449012345678', '+881631234567', '+97912345678']) {
          const r = await api().post('/calls', { source: tel(source), destinations: [tel(n)], actions: [{ type: 'hangup' }] });
          expect(r.status, `${n}: ${JSON.stringify(r.body)}`).to.equal(403);
          expect(envelopeProblem(r)).to.equal(undefined);
          expect(r.body.error).to.include({ reason: 'PERMISSION_DENIED' });
          expect(r.body.error.details[0]).to.include({ reason: 'premium_rate_prefix', index: 0 });
          const g = await api().post('/groupcalls', { source: tel(source), destinations: [tel(n)], actions: [{ type: 'hangup' }], ring_method: 'ring_all', answer_method: 'hangup_others' });
          expect(g.status, `groupcall ${n}: ${JSON.stringify(g.body)}`).to.equal(403);
          expect(envelopeProblem(g)).to.equal(undefined);
        }
        // the allowed call's flow tries a premium number (call action) and a satellite one (connect)
        const ok = await api().post('/calls', {
          source: tel(source),
          destinations: [tel('+12125550101')],
          actions: [
            { type: 'call', option: { destinations: [tel('+19765550111')], actions: [{ type: 'hangup' }] } },
            { type: 'connect', option: { destinations: [tel('+8816312345')] } },
            { type: 'connect', option: { destinations: [tel('+33612345678')] } }, // not whitelisted
            { type: 'hangup' },
          ],
        });
        expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
        await allHungUp();
      });
      expect(count(inv, '+12125550101')).to.equal(1);
      expect(total(inv), JSON.stringify([...inv.keys()])).to.equal(1);
      const refused = await t.ctx.db('calls').where({ customer_id: f.customer.id }).whereRaw(`(data->>'dial_refused') is not null`);
      const byTarget = Object.fromEntries(refused.map((r) => [r.destination.target, r.data.dial_refused]));
      expect(byTarget).to.deep.equal({ '+19765550111': 'premium_rate_prefix', '+8816312345': 'premium_rate_prefix', '+33612345678': 'destination_not_whitelisted' });
    });

    it('a SIP extension calling a premium or non-whitelisted number gets 404 and no INVITE leaves', async () => {
      const a = await createExtension(f.customer.id);
      const inv = await withGateway(async () => {
        for (const n of ['+19005550177', '+33612345678']) {
          const scenario = phoneCallRefused(a.ext.username, a.domain, n, 404);
          const r = await sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', a.ext.username, '-ap', a.password]).done;
          expect(r.code, `${n}: ${r.errors}${r.messages}`).to.equal(0);
        }
      });
      expect(total(inv)).to.equal(0);
    });

    it('a cap of 2: of 3 concurrent POST /calls two are dialled and one gets 429; of 3 concurrent originates two INVITEs leave', async () => {
      await allHungUp();
      await t.ctx.db('customers').where({ id: f.customer.id }).update({ max_concurrent_pstn_calls: 2 });
      let refusedRow = '';
      const inv = await withGateway(async () => {
        const rs = await Promise.all(['+12125550201', '+12125550202', '+12125550203'].map((n) => api().post('/calls', { source: tel(source), destinations: [tel(n)], actions: [{ type: 'hangup' }] })));
        const statuses = rs.map((r) => r.status).sort();
        expect(statuses, JSON.stringify(rs.map((r) => r.body))).to.deep.equal([200, 200, 429]);
        const over = rs.find((r) => r.status === 429)!;
        expect(envelopeProblem(over)).to.equal(undefined);
        expect(over.body.error).to.include({ status: 'RESOURCE_EXHAUSTED', reason: 'RATE_LIMIT_EXCEEDED' });
        expect(over.body.error.details[0]).to.include({ limited_by: 'customer', limit: 'concurrent_pstn_calls', max: 2, live: 2 });
        expect(Number(over.headers['retry-after'])).to.be.at.least(1);
        await allHungUp();
        // media-app's own admission (rows written without control-api, as a flow or groupcall writes
        // them): three originates at once, the platform default cap (2) applies
        await t.ctx.db('customers').where({ id: f.customer.id }).update({ max_concurrent_pstn_calls: null });
        process.env.DIAL_MAX_CONCURRENT_PSTN_CALLS = '2';
        const flow = await api().post('/flows', { actions: [{ type: 'hangup' }] });
        const rows = await Promise.all(
          ['+12125550301', '+12125550302', '+12125550303'].map((n) =>
            callsRepo(t.ctx.db).create({ customer_id: f.customer.id, flow_id: flow.body.id, source: tel(source), destination: tel(n), direction: 'outgoing', status: 'dialing' }),
          ),
        );
        await Promise.all(rows.map((r) => bus.originate([r.id], f.customer.id)));
        await until(
          async () =>
            (
              await t.ctx
                .db('calls')
                .whereIn(
                  'id',
                  rows.map((r) => r.id),
                )
                .where({ status: 'hangup' })
            ).length === 3,
          30_000,
          'three originates ended',
        );
        const done = await t.ctx.db('calls').whereIn(
          'id',
          rows.map((r) => r.id),
        );
        const refused = done.filter((r) => r.data.dial_refused);
        expect(refused.map((r) => r.data.dial_refused)).to.deep.equal(['concurrency_cap']);
        refusedRow = refused[0].destination.target;
      }, 1500);
      delete process.env.DIAL_MAX_CONCURRENT_PSTN_CALLS;
      expect(total(inv), JSON.stringify([...inv.entries()].map(([k, v]) => [k, v.size]))).to.equal(4);
      expect(count(inv, refusedRow)).to.equal(0);
      expect(['+12125550201', '+12125550202', '+12125550203'].filter((n) => count(inv, n) === 1)).to.have.length(2);
    });
  });
});
