// Outbound registration against a real registrar (Kamailio 5.6 from Debian, testkit/kamailio.ts):
// a trunk's registration is registered within 2 s, refreshed before the granted expiry (10 s), a
// carrier's INVITE through it (Kamailio lookup("location") → t_relay to our Contact) runs the called
// number's flow for the trunk's customer, the registrar going away and coming back is survived, and
// a wrong password ends in `failed` with the SIP status and retries with growing backoff.
import { sipProvider } from '../../testkit/providers';
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { outboundRegistrationsRepo, type OutboundRegistrationRow } from '../../core/repos/outbound-registrations';
import { repos } from '../../core/repos';
import { testDb, truncateAll } from '../../testkit/db';
import { Kamailio } from '../../testkit/kamailio';
import pino from 'pino';
import { startOutboundRegistrations } from '../../media-app/outreg';
import { eventStreamKey, EventPublisher } from '../../core/events/bus';
import { eventsFor, killAllSipp, RtpSink, sipp, sleep, startPlatform, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';
import { onlyCallHungUp } from '../../testkit/call-ends';

const USER = 'acme-reg';
const PASSWORD = 'reg-secret-77';

describe('outbound registration (Kamailio registrar)', function () {
  this.timeout(90_000);
  let p: Platform;
  let kam: Kamailio;

  before(async () => {
    await truncateAll();
    kam = await Kamailio.create({ user: USER, password: PASSWORD, maxExpires: 10 });
    p = await startPlatform({
      EGRESS_ALLOW_CIDRS: '127.0.0.0/8',
      OUTREG_SYNC_MS: '200',
      OUTREG_RETRY_MIN_MS: '400',
      OUTREG_RETRY_MAX_MS: '1600',
      OUTREG_TIMEOUT_MS: '1000',
    });
  });
  after(async () => {
    if (process.env.KAM_LOG) console.log(kam?.log, await (await testDb())('outbound_registrations'));
    killAllSipp();
    await p?.close();
    await kam?.close();
  });

  async function customer() {
    return (await repos(await testDb()).customers.create({ email: `or${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'or' })).id;
  }
  const row = async (id: string) => (await outboundRegistrationsRepo(await testDb()).byId(id))!;

  let trunkReg: OutboundRegistrationRow;
  let cid: string;

  /** The trunk's outbound registration at the Kamailio registrar, as USER, asking for an hour. */
  const atKamailio = async (trunkId: string) =>
    (await outboundRegistrationsRepo(await testDb()).put('trunk', trunkId, cid, {
      registrar: `127.0.0.1:${kam.port}`,
      domain: '',
      username: USER,
      password: PASSWORD,
      expires: 3600,
      transport: 'udp',
    }))!;

  it('registers a trunk within 2 s of its settings appearing; the registrar holds our contact', async () => {
    const db = await testDb();
    cid = await customer();
    const trunk = await trunksRepo(db).create(cid, 'carrier-a', { name: 't', detail: '', auth_types: ['basic'], username: 'pbx', password: 'not-used-here', allowed_ips: [] });
    const t0 = Date.now();
    trunkReg = await atKamailio(trunk.id);
    const r = await until(async () => ((await row(trunkReg.id)).state === 'registered' ? row(trunkReg.id) : null), 2000, 'registered');
    expect(Date.now() - t0).to.be.below(2000);
    expect(r.last_error).to.equal('');
    // the registrar granted 10 s, not the 3600 asked for
    const left = r.expires_at!.getTime() - Date.now();
    expect(left).to.be.within(5000, 10_500);
    const dump = await kam.locations();
    expect(dump).to.contain(trunkReg.contact_user);
    expect(dump).to.contain(USER);
    const events = (await eventsFor(p.redis, trunk.id)).filter((e) => e.event_type === 'trunk_registration_updated');
    expect(events.map((e) => (e.data.registration as { state: string }).state)).to.include.members(['registering', 'registered']);
    expect(JSON.stringify(events)).to.not.contain(PASSWORD);
  });

  it('refreshes before the granted expiry', async () => {
    const first = (await row(trunkReg.id)).expires_at!.getTime();
    const refreshed = await until(
      async () => {
        const r = await row(trunkReg.id);
        return r.expires_at && r.expires_at.getTime() > first + 1000 ? r : null;
      },
      9000,
      'a refresh',
    );
    expect(refreshed.state).to.equal('registered');
    expect(Date.now()).to.be.below(first); // before the first binding expired
    expect(await kam.locations()).to.contain(trunkReg.contact_user);
  });

  it("a carrier's INVITE to the registered AOR reaches our contact and runs the number's flow for the trunk's customer", async () => {
    const db = await testDb();
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'answer' }, { type: 'talk', option: { text: 'Hello from the registration.', language: 'en-US' } }, { type: 'hangup' }]),
    } as never);
    await numbersRepo(db).create({ customer_id: cid, number: '+899100000771', type: 'virtual', call_flow_id: flow.id });
    const sink = await RtpSink.open();
    try {
      // Request-URI: the AOR at the registrar (Kamailio rewrites it to our Contact); To: the called number
      const scenario = uacWaitsForBye(`+899100000771@127.0.0.1:${kam.port}`, '+15557770000', sink.port).replace(
        `INVITE sip:+899100000771@127.0.0.1:${kam.port} SIP/2.0`,
        `INVITE sip:${USER}@127.0.0.1:${kam.port} SIP/2.0`,
      );
      const r = await sipp(scenario, [`127.0.0.1:${kam.port}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 40_000 }).done;
      expect(r.code, r.errors + r.messages + kam.log.slice(-1500)).to.equal(0);
      expect(sink.packets).to.be.greaterThan(20);
    } finally {
      sink.close();
    }
    const call = await onlyCallHungUp(cid).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(await db('calls').where({ customer_id: cid }))}`);
    });
    expect(call.direction).to.equal('incoming');
    expect(call.destination).to.deep.include({ type: 'tel', target: '+899100000771' });
    expect(call.flow_id).to.equal(flow.id);
    expect((await eventsFor(p.redis, call.id)).map((e) => e.event_type)).to.include.members(['call_created', 'call_progressing', 'call_hangup']);
  });

  it('an INVITE to an unknown registration contact is refused (404) and writes no call', async () => {
    const db = await testDb();
    const sink = await RtpSink.open();
    try {
      const r = await sipp(uacWaitsForBye(`reg-${'0'.repeat(32)}@127.0.0.1:${p.sipPort}`, 'guesser', sink.port, { expectStatus: 404 }), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1']).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      sink.close();
    }
    expect(await db('calls').where({ customer_id: cid })).to.have.length(1);
  });

  it('survives the registrar going away and coming back (failed → registered within the backoff bound)', async () => {
    await kam.stop();
    const failed = await until(async () => ((await row(trunkReg.id)).state === 'failed' ? row(trunkReg.id) : null), 15_000, 'failed');
    expect(failed.last_error).to.match(/^SIP 408/);
    await kam.start(); // same port, empty location table
    const back = Date.now();
    await until(async () => ((await row(trunkReg.id)).state === 'registered' ? true : null), 1600 + 1000 + 1500, 'registered again');
    expect(Date.now() - back).to.be.below(4100);
    expect(await kam.locations()).to.contain(trunkReg.contact_user);
  });

  it('a second node does not register what the first holds (Redis lock per registration)', async () => {
    const other = startOutboundRegistrations({
      srf: p.app.srf,
      db: await testDb(),
      redis: p.redis,
      events: new EventPublisher(p.redis, eventStreamKey(p.config.redisKeyPrefix)),
      config: p.config,
      app: { ...p.app.factory.deps.app, nodeId: 'second-node' },
      logger: pino({ level: 'silent' }),
    });
    try {
      await sleep(1500);
      expect(await p.redis.get(`${p.config.redisKeyPrefix}outreg:lock:${trunkReg.id}`)).to.equal(p.app.nodeId);
    } finally {
      await other.stop();
    }
    // every REGISTER the registrar accepted for this contact came from one registration (one Call-ID)
    const callIds = new Set([...kam.log.matchAll(/REGISTER ok \S+ call-id (\S+) contact <sip:(reg-[0-9a-f]+)@/g)].filter((m) => m[2] === trunkReg.contact_user).map((m) => m[1]));
    expect(callIds.size).to.equal(1);
    expect((await row(trunkReg.id)).state).to.equal('registered');
  });

  it("a trunk's registrar the egress policy refuses is never sent a REGISTER (failed, retried)", async () => {
    const db = await testDb();
    const trunk = await trunksRepo(db).create(cid, 'carrier-strict', { name: 't', detail: '', auth_types: ['basic'], username: 'pbx2', password: 'not-used-here', allowed_ips: [] });
    const strictNode = 'strict-node';
    const reg = await atKamailio(trunk.id);
    // held for the strict node before the platform's own node (which allows loopback here) can take it
    await p.redis.set(`${p.config.redisKeyPrefix}outreg:lock:${reg.id}`, strictNode, 'PX', 60_000);
    const strict = startOutboundRegistrations({
      srf: p.app.srf,
      db,
      redis: p.redis,
      events: new EventPublisher(p.redis, eventStreamKey(p.config.redisKeyPrefix)),
      config: { ...p.config, egress: { ...p.config.egress, allowCidrs: [] } },
      app: { ...p.app.factory.deps.app, nodeId: strictNode },
      logger: pino({ level: 'silent' }),
    });
    try {
      const failed = await until(async () => ((await row(reg.id)).state === 'failed' ? row(reg.id) : null), 3000, 'failed');
      expect(failed.last_error).to.equal('registrar address not allowed');
      await sleep(1000);
      expect(kam.log).to.not.contain(reg.contact_user);
      expect(await kam.locations()).to.not.contain(reg.contact_user);
    } finally {
      await outboundRegistrationsRepo(db).put('trunk', trunk.id, cid, null);
      await strict.stop();
    }
  });

  it('digest with SHA-256 (a registrar that challenges with algorithm=SHA-256)', async () => {
    const sha = await Kamailio.create({ user: 'sha-user', password: 'sha-secret-1', maxExpires: 60, algorithm: 'SHA-256' });
    try {
      const db = await testDb();
      const provider = await sipProvider(db, `127.0.0.1:${sha.port}`, 'sha');
      const reg = (await outboundRegistrationsRepo(db).put('provider', provider.id, null, {
        registrar: `127.0.0.1:${sha.port}`,
        domain: 'carrier.test',
        username: 'sha-user',
        password: 'sha-secret-1',
        expires: 120,
        transport: 'tcp',
      }))!;
      await until(async () => ((await row(reg.id)).state === 'registered' ? true : null), 3000, 'registered with SHA-256');
      expect(sha.log).to.match(/REGISTER ok sip:sha-user@carrier.test .* auth Digest .*algorithm=SHA-256/);
      expect(await sha.locations()).to.contain(reg.contact_user);
      // removing the settings unregisters (expiry 0): the binding is gone
      await outboundRegistrationsRepo(db).put('provider', provider.id, null, null);
      await until(async () => (!(await sha.locations()).includes(reg.contact_user) ? true : null), 3000, 'unregistered');
    } finally {
      await sha.close();
    }
  });

  it('a wrong password: failed with the SIP status, retried with growing backoff', async () => {
    const db = await testDb();
    const provider = await sipProvider(db, `127.0.0.1:${kam.port}`, 'carrier');
    const reg = (await outboundRegistrationsRepo(db).put('provider', provider.id, null, {
      registrar: `127.0.0.1:${kam.port}`,
      domain: '',
      username: USER,
      password: 'wrong-password',
      expires: 120,
      transport: 'udp',
    }))!;
    const failed = await until(async () => ((await row(reg.id)).state === 'failed' ? row(reg.id) : null), 3000, 'failed');
    expect(failed.last_error).to.equal('SIP 401');
    await sleep(3500);
    const fails = (await eventsFor(p.redis, provider.id)).filter((e) => e.event_type === 'provider_registration_updated' && (e.data.registration as { state: string }).state === 'failed');
    // retries at about 0.4, 0.8, 1.6, 1.6 s: a few, not a flood
    expect(fails.length).to.be.within(2, 6);
    expect(await kam.locations()).to.not.contain(reg.contact_user);
    await outboundRegistrationsRepo(db).put('provider', provider.id, null, null);
  });
});
