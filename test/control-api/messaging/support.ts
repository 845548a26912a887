/**
 * A local HTTP server speaking Twilio's Messages API (what our adapter talks to), and the
 * control-api with the SMS callback router mounted at /hooks/sms on a real port whose address is
 * PUBLIC_URL (so the provider's callbacks reach it and signatures cover the right URL).
 */
import http from 'node:http';
import express from 'express';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { freePort } from '../../../testkit/ports';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../../testkit/api';
import { twilioSignature, TwilioProvider } from '../../../core/messaging/twilio';
import { configureMessaging } from '../../../control-api/messaging/deps';
import { createMessagingCallbackRouter, SMS_HOOKS_MOUNT } from '../../../control-api/messaging/router';
import { EventPublisher } from '../../../core/events/bus';
import { numbersRepo, type NumberRow } from '../../../core/repos/numbers';
import { addBalance, ensureBillingAccount } from '../../../core/billing';

export interface TwilioRequest {
  path: string;
  authorization: string;
  form: Record<string, string>;
  /** The MessageSid answered, when the send was accepted. */
  sid?: string;
}

/** Destinations ending in 0000 are refused (Twilio 21211, invalid 'To'); ending in 9999 get a 503. */
export class FakeTwilio {
  readonly requests: TwilioRequest[] = [];
  private server!: http.Server;
  port = 0;
  /** how long each send's answer waits (a test that awaits the deliveries must not depend on their speed) */
  answerDelayMs = 0;
  constructor(
    readonly accountSid: string,
    readonly authToken: string,
  ) {}

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const form = Object.fromEntries(new URLSearchParams(body));
        const rec: TwilioRequest = { path: req.url ?? '', authorization: String(req.headers.authorization ?? ''), form };
        this.requests.push(rec);
        const send = (status: number, json: object) =>
          void setTimeout(() => {
            res.writeHead(status, { 'content-type': 'application/json' });
            res.end(JSON.stringify(json));
          }, this.answerDelayMs);
        const expectedAuth = 'Basic ' + Buffer.from(`${this.accountSid}:${this.authToken}`).toString('base64');
        if (req.method !== 'POST' || req.url !== `/2010-04-01/Accounts/${this.accountSid}/Messages.json`) return send(404, { code: 20404, message: 'not found', status: 404 });
        if (req.headers.authorization !== expectedAuth) return send(401, { code: 20003, message: 'Authenticate', status: 401 });
        if (!form.To || !form.From || !form.Body) return send(400, { code: 21604, message: 'A To, From and Body are required', status: 400 });
        if (form.To.endsWith('0000')) return send(400, { code: 21211, message: `The 'To' number ${form.To} is not a valid phone number.`, status: 400 });
        if (form.To.endsWith('9999')) return send(503, { code: 20503, message: 'Service unavailable', status: 503 });
        const sid = 'SM' + randomBytes(16).toString('hex');
        rec.sid = sid;
        send(201, { sid, account_sid: this.accountSid, to: form.To, from: form.From, body: form.Body, status: 'queued', num_segments: '1', direction: 'outbound-api' });
      });
    });
    this.port = await freePort();
    await new Promise<void>((resolve) => this.server.listen(this.port, '127.0.0.1', resolve));
  }

  /** The accepted send to `to`. */
  sent(to: string): TwilioRequest & { sid: string } {
    const r = this.requests.find((x) => x.form.To === to && x.sid);
    if (!r) throw new Error(`no accepted send to ${to}`);
    return r as TwilioRequest & { sid: string };
  }

  /** A status callback for an accepted send, as Twilio posts it. */
  report(to: string, status: string, extra: Record<string, string> = {}) {
    const r = this.sent(to);
    return this.post(r.form.StatusCallback!, { AccountSid: this.accountSid, MessageSid: r.sid, SmsSid: r.sid, MessageStatus: status, SmsStatus: status, From: r.form.From!, To: to, ...extra });
  }

  /** Posts a signed form to url, as Twilio does; `token` lets a test sign with the wrong key. */
  async post(url: string, form: Record<string, string>, token = this.authToken): Promise<{ status: number; body: string; type: string }> {
    const sig = twilioSignature(token, url, form);
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': sig },
      body: new URLSearchParams(form).toString(),
    });
    return { status: res.status, body: await res.text(), type: res.headers.get('content-type') ?? '' };
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export interface Harness {
  t: TestApp;
  base: string;
  server: http.Server;
  twilio: FakeTwilio;
  stream: string;
  deliveries: Promise<void>[];
  close(): Promise<void>;
}

export async function startHarness(opts: { provider?: boolean } = {}): Promise<Harness> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t = await buildTestApp({ env: { PUBLIC_URL: base, RATE_LIMIT_SCALE: '0' } });
  const twilio = new FakeTwilio('AC' + randomBytes(16).toString('hex'), randomBytes(16).toString('hex'));
  await twilio.start();
  const stream = `test-events-${randomBytes(4).toString('hex')}`;
  const deliveries: Promise<void>[] = [];
  configureMessaging(t.ctx, {
    provider: opts.provider === false ? null : new TwilioProvider({ accountSid: twilio.accountSid, authToken: twilio.authToken, baseUrl: twilio.baseUrl, timeoutMs: 3000 }),
    events: new EventPublisher(t.ctx.redis, stream),
    onDelivered: (p) => deliveries.push(p),
  });
  const outer = express();
  outer.use(SMS_HOOKS_MOUNT, createMessagingCallbackRouter(t.ctx));
  outer.use(t.app);
  const server = http.createServer(outer);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    t,
    base,
    server,
    twilio,
    stream,
    deliveries,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await twilio.stop();
      await t.ctx.redis.del(stream);
      await t.close();
    },
  };
}

let numberSeq = 0;
export function randomNumber(): string {
  return `+1555${String(process.pid % 1000).padStart(3, '0')}${String(++numberSeq % 10000).padStart(4, '0')}`;
}

export async function ownedNumber(h: Harness, f: Fixture, patch: Partial<Pick<NumberRow, 'type' | 'message_flow_id'>> = {}): Promise<NumberRow> {
  return numbersRepo(h.t.ctx.db).create({
    customer_id: f.customer.id,
    number: patch.type === 'virtual' ? `+899555${String(++numberSeq).padStart(6, '0')}` : randomNumber(),
    type: patch.type ?? 'normal',
    ...(patch.message_flow_id ? { message_flow_id: patch.message_flow_id } : {}),
  });
}

export async function fund(h: Harness, f: Fixture, micros: number): Promise<void> {
  const account = await ensureBillingAccount(h.t.ctx.db, f.customer.id);
  await addBalance(h.t.ctx.db, account.id, micros, `test-topup-${randomBytes(6).toString('hex')}`);
}

export async function fixture(h: Harness): Promise<Fixture> {
  return createFixture(h.t.ctx);
}

/** Event types published to the harness stream, in order. */
export async function eventTypes(h: Harness): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const entries = (await h.t.ctx.redis.xrange(h.stream, '-', '+')) as [string, string[]][];
  return entries.map(([, fields]) => {
    const e = JSON.parse(fields[1]!) as { event_type: string; data: Record<string, unknown> };
    return { type: e.event_type, data: e.data };
  });
}

export async function settle(h: Harness): Promise<void> {
  while (h.deliveries.length) await Promise.all(h.deliveries.splice(0));
}

export { request };
