/**
 * The per-call CDR webhook: real calls made and hung up through the REST API (POST /calls, then
 * POST /calls/{id}/hangup before any node took them: control-api ends them itself and publishes
 * call_hangup on the real event stream), the webhook service reading that stream, and real HTTP
 * receivers on loopback. Opted out: no call_cdr; opted in: exactly one per call, signed.
 */
import { listenHook } from '../../testkit/hook-receiver';
import http from 'node:http';
import { expect } from 'chai';
import { buildTestApp, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { api } from '../control-api/flows/support';
import { closeCommandBus } from '../../control-api/calls/bus';
import { startWebhooks, type WebhookService } from '../../control-api/webhooks';
import { verify, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../control-api/webhooks/sign';
import { eventStreamKey, type PlatformEvent } from '../../core/events/bus';
import { callJson, callsRepo } from '../../core/repos/calls';
import { newId } from '../../core/ids';
import type { CallQuality } from '../../core/quality/leg';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

async function receiver(): Promise<{ url: string; got: Received[]; close(): Promise<void> }> {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      res.end('ok');
    });
  });
  return listenHook(server, got);
}

async function until(cond: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const types = (r: Received[]) => r.map((g) => (JSON.parse(g.body) as { event_type: string }).event_type);

describe('CDR webhook at hangup (REST calls, real event stream, BullMQ, loopback receivers)', function () {
  this.timeout(60_000);
  let t: TestApp;
  let hooks: WebhookService;
  // a consumer group of our own on the shared stream: other suites' readers are not disturbed
  const group = `cdr-test-${newId()}`;

  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', EGRESS_ALLOW_CIDRS: '127.0.0.0/8' } });
    hooks = await startWebhooks(t.ctx, { group, baseDelayMs: 100, queue: `webhooks-${group}` });
  });
  after(async () => {
    await hooks.close();
    await t.ctx.redis.xgroup('DESTROY', eventStreamKey(t.ctx.config.redisKeyPrefix), group).catch(() => undefined);
    await closeCommandBus(t.ctx);
    await t.close();
  });

  async function customerWith(url: string, cdr: boolean | null): Promise<Fixture> {
    const f = await createFixture(t.ctx);
    const put = await api(t, f).put('/customer', { webhook_uri: url, webhook_method: 'POST' });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    if (cdr !== null) {
      const m = await api(t, f).put('/customer/metadata', { cdr_webhook: cdr });
      expect(m.status, JSON.stringify(m.body)).to.equal(200);
      expect(m.body.metadata.cdr_webhook).to.equal(cdr);
    }
    return f;
  }

  /** A call made through the API and hung up before any node took it; `quality` written first, as media-app does at the end of the media. */
  async function callAndHangup(f: Fixture, quality?: CallQuality): Promise<string> {
    const r = await api(t, f).post('/calls', {
      source: { type: 'sip', target: 'alice@example.test' },
      destinations: [{ type: 'sip', target: 'sip:bob@example.test:5090' }],
      actions: [{ type: 'answer' }],
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const id = (r.body.calls[0] as { id: string }).id;
    if (quality) await callsRepo(t.ctx.db).setQuality(id, quality);
    const h = await api(t, f).post(`/calls/${id}/hangup`);
    expect(h.status, JSON.stringify(h.body)).to.equal(200);
    expect(h.body.status).to.equal('hangup');
    return id;
  }

  it('refuses a flag that is not a boolean and keeps the setting', async () => {
    const f = await customerWith('http://127.0.0.1:9/none', true);
    const bad = await api(t, f).put('/customer/metadata', { cdr_webhook: 'yes' });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.reason).to.equal('INVALID_ARGUMENT');
    expect(JSON.stringify(bad.body.error.details)).to.contain('cdr_webhook');
    const now = await api(t, f).get('/customer');
    expect(now.body.metadata.cdr_webhook).to.equal(true);
  });

  it('sends an opted-in customer one signed call_cdr per call, an opted-out one none', async () => {
    const rIn = await receiver();
    const rOut = await receiver();
    const rOff = await receiver();
    try {
      const fin = await customerWith(rIn.url, true);
      const fout = await customerWith(rOut.url, null); // never set: the default is off
      const foff = await customerWith(rOff.url, false);
      const quality: CallQuality = {
        codec: 'PCMU',
        in: { mos_min: 3.31, mos_avg: 4.02, loss_pct: 1.5, jitter_ms: 22.5, rtt_ms: null },
        out: { mos_min: 4.2, mos_avg: 4.3, loss_pct: 0, jitter_ms: 3.1, rtt_ms: 35 },
      };
      const calls = [await callAndHangup(fin), await callAndHangup(fin, quality)];
      await callAndHangup(fout);
      await callAndHangup(foff);

      await until(() => types(rIn.got).filter((x) => x === 'call_cdr').length >= 2);
      await until(() => types(rOut.got).includes('call_hangup') && types(rOff.got).includes('call_hangup'));
      // the same hangup seen again (a redelivered stream entry, a second publisher) adds nothing
      const again = (await callsRepo(t.ctx.db).get(calls[0]!))!;
      await hooks.handle({
        id: newId(),
        event_type: 'call_hangup',
        customer_id: fin.customer.id,
        resource: 'call',
        resource_id: again.id,
        timestamp: new Date().toISOString(),
        data: callJson(again),
      } as PlatformEvent);
      await new Promise((r) => setTimeout(r, 1500));

      expect(types(rOut.got)).to.not.include('call_cdr');
      expect(types(rOff.got)).to.not.include('call_cdr');
      const cdrs = rIn.got.filter((g) => (JSON.parse(g.body) as { event_type: string }).event_type === 'call_cdr');
      expect(cdrs).to.have.length(2);
      const exported = await api(t, fin)
        .get('/calls/export')
        .query({ start: new Date(Date.now() - 3_600_000).toISOString(), end: new Date(Date.now() + 60_000).toISOString(), format: 'jsonl' })
        .buffer(true)
        .parse((r, cb) => {
          let s = '';
          r.on('data', (d: Buffer) => (s += d.toString()));
          r.on('end', () => cb(null, s));
        });
      const rows = new Map(
        (exported.body as string)
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .map((x) => [x.id as string, x]),
      );
      const seen: string[] = [];
      for (const g of cdrs) {
        const sig = g.headers[SIGNATURE_HEADER.toLowerCase()] as string;
        const ts = g.headers[TIMESTAMP_HEADER.toLowerCase()] as string;
        expect(verify(fin.customer.webhook_secret, sig, ts, g.body)).to.equal(true);
        expect(verify(fout.customer.webhook_secret, sig, ts, g.body)).to.equal(false);
        const msg = JSON.parse(g.body) as { topic: string; data: Record<string, unknown> };
        const id = msg.data.id as string;
        seen.push(id);
        expect(msg.topic).to.equal(`customer_id:${fin.customer.id}:call:${id}`);
        // the same fields as the call's export row
        expect(msg.data).to.deep.equal(rows.get(id));
        expect(msg.data).to.include({ status: 'hangup', customer_id: fin.customer.id, billing_amount_credit: 0 });
        // the quality summary columns: the call's values, or null for a call without media
        const q = id === calls[1] ? quality : null;
        expect(msg.data).to.include({
          quality_codec: q?.codec ?? null,
          quality_in_mos_min: q?.in?.mos_min ?? null,
          quality_in_mos_avg: q?.in?.mos_avg ?? null,
          quality_in_loss_pct: q?.in?.loss_pct ?? null,
          quality_in_jitter_ms: q?.in?.jitter_ms ?? null,
          quality_in_rtt_ms: null,
          quality_out_mos_min: q?.out?.mos_min ?? null,
          quality_out_mos_avg: q?.out?.mos_avg ?? null,
          quality_out_loss_pct: q?.out?.loss_pct ?? null,
          quality_out_jitter_ms: q?.out?.jitter_ms ?? null,
          quality_out_rtt_ms: q?.out?.rtt_ms ?? null,
        });
      }
      expect(seen.sort()).to.deep.equal([...calls].sort());
      // and the delivery log lists them like any other event
      const log = await api(t, fin).get('/webhook_deliveries');
      expect(log.body.result.filter((d: { event_type: string; status: string }) => d.event_type === 'call_cdr' && d.status === 'delivered')).to.have.length(2);
    } finally {
      await Promise.all([rIn.close(), rOut.close(), rOff.close()]);
    }
  });
});
