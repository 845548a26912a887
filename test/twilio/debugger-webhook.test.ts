// Issue 54 review: the account's Debugger webhook (media-app/twiml/debugger.ts). A burst of alerts opened a
// request each, unbounded; the service's stop left them running; and nothing proved the egress policy checks
// the webhook's address when an alert is delivered, not only when the URL was stored. Real Postgres, real
// HTTP servers on loopback, the real egress policy with a loopback DNS (test/security/spellings.ts).
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';
import { customersRepo } from '../../core/repos/customers';
import { twilioAlertsRepo, type TwilioAlertRow } from '../../core/repos/twilio-alerts';
import { PolicyHttp } from '../../media-app/kit/http';
import { alertRecorder } from '../../media-app/twiml/alerts';
import { DebuggerDeliveries, type DebuggerOutcome } from '../../media-app/twiml/debugger';
import { until } from '../../testkit/media-app/harness';
import { testDb } from '../../testkit/db';
import { startInternalTargets, type InternalTargets } from '../security/spellings';

const TOKEN = 'debugger-test-token';
const logger = pino({ level: 'silent' });

/** A webhook on the allowed address (127.0.0.2) that holds each request until released. */
async function heldHook(): Promise<{ url: string; seen: () => number; aborted: () => number; release(): void; close(): Promise<void> }> {
  const held: http.ServerResponse[] = [];
  let seen = 0;
  let aborted = 0;
  const server = http.createServer((req, res) => {
    seen++;
    req.resume();
    res.on('close', () => res.writableFinished || aborted++);
    held.push(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.2', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.2:${port}/debugger`,
    seen: () => seen,
    aborted: () => aborted,
    release: () => held.splice(0).forEach((res) => res.end('ok')),
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

describe('Twilio Debugger webhook deliveries: a cap per customer, aborted on stop, egress checked at delivery', function () {
  this.timeout(30_000);
  let targets: InternalTargets;
  let policy: EgressPolicy;
  let customerId: string;
  const open: DebuggerDeliveries[] = [];

  before(async () => {
    targets = await startInternalTargets();
    policy = new EgressPolicy(egressSettingsFromEnv({ ...targets.env }));
    const db = await testDb();
    customerId = (await customersRepo(db).create({ email: `dbg${Date.now()}@example.com`, name: 'dbg', status: 'active' } as never)).id;
  });
  after(async () => {
    await Promise.all(open.map((d) => d.stop()));
    await targets?.close();
  });

  async function deliveries(o: { maxInFlight: number; timeoutMs?: number }): Promise<DebuggerDeliveries> {
    const d = new DebuggerDeliveries(await testDb(), logger, { http: new PolicyHttp(policy), authToken: async () => TOKEN, timeoutMs: o.timeoutMs ?? 20_000, maxInFlight: o.maxInFlight });
    open.push(d);
    return d;
  }

  const setHook = async (url: string) => twilioAlertsRepo(await testDb()).setDebuggerWebhook(customerId, url);
  const alert = async (): Promise<TwilioAlertRow> =>
    twilioAlertsRepo(await testDb()).add({ customer_id: customerId, call_id: null, error_code: 11200, log_level: 'error', alert_text: 'Msg=down&ErrorCode=11200' });

  it('a burst over the cap: every alert stored, only maxInFlight requests open, the rest dropped; the cap frees when they end', async () => {
    const hook = await heldHook();
    try {
      await setHook(hook.url);
      const d = await deliveries({ maxInFlight: 2 });
      const db = await testDb();
      const before = (await twilioAlertsRepo(db).list(customerId, {}, 0, 1000)).length;
      // through the recorder, as the twiml action records them: 5 alerts at once
      const record = alertRecorder(db, logger, d);
      for (let i = 0; i < 5; i++) await record(customerId, null, { code: 12200, level: 'error', message: `burst ${i}`, url: '', method: '', params: {} });
      expect((await twilioAlertsRepo(db).list(customerId, {}, 0, 1000)).length - before, 'every alert stored').to.equal(5);
      await until(() => hook.seen() === 2, 10_000, 'two deliveries open');
      expect(d.count(customerId)).to.equal(2);
      const over = await d.deliver(await alert());
      expect(over).to.deep.equal({ kind: 'dropped' });
      expect(hook.seen(), 'no third request was opened').to.equal(2);
      hook.release();
      await until(() => d.count(customerId) === 0, 10_000, 'the open deliveries ended');
      const next = d.deliver(await alert());
      await until(() => hook.seen() === 3, 10_000, 'a delivery after the cap freed');
      hook.release();
      expect(await next).to.deep.equal({ kind: 'sent', status: 200 });
    } finally {
      await hook.close();
    }
  });

  it('stop(): the requests in flight are aborted at once (not at their timeout) and none starts after it', async () => {
    const hook = await heldHook();
    try {
      await setHook(hook.url);
      const d = await deliveries({ maxInFlight: 4, timeoutMs: 20_000 });
      const runs = [d.deliver(await alert()), d.deliver(await alert())];
      await until(() => hook.seen() === 2, 10_000, 'two deliveries open');
      const t0 = Date.now();
      await d.stop();
      expect(Date.now() - t0, 'stop does not wait for the 20 s timeout').to.be.below(5000);
      expect(await Promise.all(runs)).to.deep.equal([{ kind: 'aborted' }, { kind: 'aborted' }]);
      await until(() => hook.aborted() === 2, 5000, 'the webhook saw both requests go away');
      expect(d.count(customerId)).to.equal(0);
      expect(await d.deliver(await alert())).to.deep.equal({ kind: 'aborted' });
      expect(hook.seen(), 'nothing sent after stop').to.equal(2);
    } finally {
      await hook.close();
    }
  });

  it('a stored URL whose name resolves to loopback when the alert comes, and loopback, private, link-local literals: refused, nothing reached', async () => {
    const d = await deliveries({ maxInFlight: 4 });
    const name = 'debugger.egress.test';
    targets.dns.set(name, { a: ['127.0.0.2'] });
    // stored while it resolved to an allowed address: delivered
    const url = `http://${name}:${targets.port}/hook`;
    await setHook(url);
    const allowedBefore = targets.allowedHits();
    expect(await d.deliver(await alert())).to.deep.equal({ kind: 'sent', status: 200 });
    expect(targets.allowedHits() - allowedBefore).to.equal(1);
    // the name now resolves to 127.0.0.1: the delivery resolves again and is refused
    targets.dns.set(name, { a: ['127.0.0.1'] });
    const hits = targets.internalHits();
    const outcomes: [string, DebuggerOutcome][] = [];
    for (const u of [url, `http://127.0.0.1:${targets.port}/hook`, `http://[::1]:${targets.port}/hook`, `http://10.0.0.1:${targets.port}/hook`, 'http://169.254.169.254/latest/meta-data']) {
      await setHook(u);
      outcomes.push([u, await d.deliver(await alert())]);
    }
    for (const [u, o] of outcomes) expect(o.kind, `${u}: ${JSON.stringify(o)}`).to.equal('refused');
    expect(targets.internalHits() - hits, 'the loopback server got no request').to.equal(0);
  });
});
