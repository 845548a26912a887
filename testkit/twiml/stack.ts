// The fixture of the TwiML suites: a platform stack, a customer with a trunk, and a TwimlServer that
// signs with that customer's AuthToken, started before the suite's tests and stopped after them.
import type { Fixture } from '../api';
import { killAllSipp } from '../media-app/harness';
import { customerWithTrunk, startStack, type PlacedCall, type Stack } from '../streams/support';
import { serveApp, twilioClient, type ServedApp, type TwilioClient } from '../twilio';
import { accountSid } from '../../core/twilio/sids';
import { TwimlServer } from './server';
import { twilioAuthToken } from '../../core/twilio/auth-token';

export interface TwimlStack {
  stack: Stack;
  app: TwimlServer;
  f: Fixture;
}

/** Registers the suite's before/after hooks; `set` receives the fixture once it is up; `env` (a function: read when the stack starts) adds to the platform's. */
export function useTwimlStack(set: (s: TwimlStack) => void, env: () => Record<string, string> = () => ({})): void {
  let s: TwimlStack | null = null;
  before(async () => {
    const stack = await startStack(env());
    const f = await customerWithTrunk(stack.api);
    const app = await TwimlServer.start(twilioAuthToken(stack.platform.config.jwtSecret, f.customer.id, 0));
    s = { stack, app, f };
    set(s);
  });
  after(async () => {
    killAllSipp();
    await s?.app.close();
    await s?.stack.close();
  });
}

export interface TwilioRestStack extends TwimlStack {
  /** control-api served on loopback for the official `twilio` client */
  api: ServedApp;
  /** the official client, as the fixture's customer (AccountSid and AuthToken) */
  client: TwilioClient;
  /** calls the suite placed: their RTP peers are closed after it */
  placed: PlacedCall[];
}

/** useTwimlStack plus control-api served for the official `twilio` REST client; `set` receives it all once up. */
export function useTwilioRestStack(set: (s: TwilioRestStack) => void, env: () => Record<string, string> = () => ({})): void {
  let s: TwilioRestStack | null = null;
  let base: TwimlStack | null = null;
  useTwimlStack((b) => (base = b), env);
  before(async () => {
    const b = base!;
    const api = await serveApp(b.stack.api.app);
    const client = twilioClient(api.baseUrl, accountSid(b.f.customer.id), twilioAuthToken(b.stack.api.ctx.config.jwtSecret, b.f.customer.id, 0));
    s = { ...b, api, client, placed: [] };
    set(s);
  });
  after(async () => {
    s?.placed.forEach((c) => c.peer.close());
    await s?.api.close();
  });
}
