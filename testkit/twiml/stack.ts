// The fixture of the TwiML suites: a platform stack, a customer with a trunk, and a TwimlServer that
// signs with that customer's AuthToken, started before the suite's tests and stopped after them.
import type { Fixture } from '../api';
import { killAllSipp } from '../media-app/harness';
import { customerWithTrunk, startStack, type Stack } from '../streams/support';
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
