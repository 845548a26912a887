// The fixture of the TwiML suites: a platform stack, a customer with a trunk, and a TwimlServer that
// signs with that customer's AuthToken, started before the suite's tests and stopped after them.
import type { Fixture } from '../api';
import { killAllSipp } from '../media-app/harness';
import { customerWithTrunk, placeCall, startStack, type PlacedCall, type Stack } from '../streams/support';
import { serveApp, twilioClient, type ServedApp, type TwilioClient } from '../twilio';
import { accountSid } from '../../core/twilio/sids';
import { TwimlServer } from './server';
import { twilioAuthToken } from '../../core/twilio/auth-token';

export interface TwimlStack {
  stack: Stack;
  app: TwimlServer;
  f: Fixture;
}

/** Which media backend the stack's media-app runs on (startPlatform's `mediaServer`; the embedded engine unless said). */
export interface TwimlStackOptions {
  mediaServer?: 'embedded' | 'fsmrf';
}

/** Registers the suite's before/after hooks; `set` receives the fixture once it is up; `env` (a function: read when the stack starts) adds to the platform's. */
export function useTwimlStack(set: (s: TwimlStack) => void, env: () => Record<string, string> = () => ({}), opts: TwimlStackOptions = {}): void {
  let s: TwimlStack | null = null;
  before(async () => {
    const stack = await startStack(env(), opts);
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

export interface TwimlCallers extends TwimlStack {
  /** calls the suite placed: their RTP peers are closed after it */
  placed: PlacedCall[];
  /** sipp calls a new number whose flow answers and runs the app's TwiML at `path`; kept in `placed` */
  caller(path: string, opts?: Parameters<typeof placeCall>[3]): Promise<PlacedCall>;
  /** hangs a placed call up from the platform's side */
  hangup(c: PlacedCall): Promise<void> | undefined;
}

/** useTwimlStack plus the sipp callers a suite places into its app's TwiML (their peers closed after it). */
export function useTwimlCallers(set: (s: TwimlCallers) => void, env: () => Record<string, string> = () => ({}), opts: TwimlStackOptions = {}): void {
  const placed: PlacedCall[] = [];
  useTwimlStack(
    (b) => {
      const caller = async (path: string, opts: Parameters<typeof placeCall>[3] = {}): Promise<PlacedCall> => {
        const c = await placeCall(b.stack, b.f.customer.id, [{ type: 'answer' }, { type: 'twiml', option: { url: b.app.url(path) } }], opts);
        placed.push(c);
        return c;
      };
      const hangup = (c: PlacedCall) => b.stack.platform.app.calls.get(c.callId)?.hangup('normal');
      set({ ...b, placed, caller, hangup });
    },
    env,
    opts,
  );
  after(() => placed.forEach((c) => c.peer.close()));
}

export interface TwilioRestStack extends TwimlCallers {
  /** control-api served on loopback for the official `twilio` client */
  api: ServedApp;
  /** the official client, as the fixture's customer (AccountSid and AuthToken) */
  client: TwilioClient;
  /** the customer's AccountSid and AuthToken, which `client` uses */
  sid: string;
  token: string;
}

/** useTwimlCallers plus control-api served for the official `twilio` REST client; `set` receives it all once up. */
export function useTwilioRestStack(set: (s: TwilioRestStack) => void, env: () => Record<string, string> = () => ({}), opts: TwimlStackOptions = {}): void {
  let s: TwilioRestStack | null = null;
  let base: TwimlCallers | null = null;
  useTwimlCallers((b) => (base = b), env, opts);
  before(async () => {
    const b = base!;
    const api = await serveApp(b.stack.api.app);
    const sid = accountSid(b.f.customer.id);
    const token = twilioAuthToken(b.stack.api.ctx.config.jwtSecret, b.f.customer.id, 0);
    s = { ...b, api, client: twilioClient(api.baseUrl, sid, token), sid, token };
    set(s);
  });
  after(async () => {
    await s?.api.close();
  });
}
