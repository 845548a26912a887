// The fixture of the Twilio REST suites that watch status callbacks: a media-app platform, control-api
// served on loopback for the official `twilio` client (as the fixture's customer), the callback sender
// (control-api/twilio/callbacks.ts) and an HTTP receiver on loopback that keeps every callback it gets.
import http from 'node:http';
import { startTwilioCallbacks, type CallbackService } from '../control-api/twilio/callbacks';
import { accountSid } from '../core/twilio/sids';
import { twilioAuthToken } from '../core/twilio/auth-token';
import { buildTestApp, createFixture, type Fixture, type TestApp } from './api';
import { killAllSipp, startPlatform, type Platform } from './media-app/harness';
import { freePort } from './ports';
import { serveApp, twilioClient, type ServedApp, type TwilioClient } from './twilio';

/** A callback as the receiver got it: its full URL, its X-Twilio-Signature and its form parameters. */
export interface ReceivedCallback {
  method: string;
  url: string;
  signature: string;
  params: Record<string, string>;
}

export interface TwilioCallbackStack {
  p: Platform;
  t: TestApp;
  api: ServedApp;
  f: Fixture;
  /** the customer's AccountSid and AuthToken, which `client` uses */
  sid: string;
  token: string;
  client: TwilioClient;
  callbacks: CallbackService;
  /** the receiver's base URL (http://127.0.0.1:<port>) */
  receiverUrl: string;
}

/**
 * Registers the suite's before/after hooks; `set` receives the stack once it is up (the callback sender's
 * consumer group is `group` and this process). Returns the list the receiver appends every callback to.
 */
export function useTwilioCallbackStack(group: string, set: (s: TwilioCallbackStack) => void): ReceivedCallback[] {
  const received: ReceivedCallback[] = [];
  let s: TwilioCallbackStack | undefined;
  let receiver: http.Server | undefined;
  before(async () => {
    const p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
    const t = await buildTestApp({ env: { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix, DATA_DIR: p.config.dataDir } });
    const api = await serveApp(t.app);
    const f = await createFixture(t.ctx);
    const sid = accountSid(f.customer.id);
    const token = twilioAuthToken(t.ctx.config.jwtSecret, f.customer.id, 0);
    const callbacks = await startTwilioCallbacks(t.ctx, { group: `${group}-${process.pid}`, baseDelayMs: 100 });
    const port = await freePort();
    const receiverUrl = `http://127.0.0.1:${port}`;
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        received.push({
          method: req.method ?? '',
          url: `${receiverUrl}${req.url ?? ''}`,
          signature: String(req.headers['x-twilio-signature'] ?? ''),
          params: Object.fromEntries(new URLSearchParams(body)),
        });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver!.listen(port, '127.0.0.1', () => r()));
    s = { p, t, api, f, sid, token, client: twilioClient(api.baseUrl, sid, token), callbacks, receiverUrl };
    set(s);
  });
  after(async () => {
    killAllSipp();
    await s?.callbacks.close();
    receiver?.closeAllConnections();
    await new Promise((r) => receiver?.close(r));
    await s?.api.close();
    await s?.t.close();
    await s?.p.close();
  });
  return received;
}
