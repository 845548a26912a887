/**
 * The official `twilio` client pointed at this platform (issue 36): the REST domain's `baseUrl` set
 * to the platform's HTTP server, which is the SDK's own field for where `api.twilio.com` requests go
 * (lib/base/Domain.ts `absoluteUrl`); nothing in the package is patched. Plus the control-api app
 * served on a loopback port, as the client needs a real HTTP server.
 */
import http from 'node:http';
import type { Express } from 'express';
import twilio, { RestException } from 'twilio';
import { freePort } from './ports';

export type TwilioClient = ReturnType<typeof twilio>;

/** `user` is the AccountSid (password: AuthToken) or an `SK…` API key SID (then `accountSid` names the account). */
export function twilioClient(baseUrl: string, user: string, password: string, accountSid?: string): TwilioClient {
  const client = twilio(user, password, { ...(accountSid ? { accountSid } : {}), autoRetry: false });
  client.api.baseUrl = baseUrl;
  return client;
}

export interface ServedApp {
  baseUrl: string;
  close(): Promise<void>;
}

/** Serves an express app on a loopback port of this test process. */
export async function serveApp(app: Express): Promise<ServedApp> {
  const port = await freePort();
  const server = http.createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The RestException the official client rejects `p` with; throws when `p` resolves. */
export async function restRefusal(p: Promise<unknown>): Promise<RestException> {
  try {
    await p;
  } catch (e) {
    if (e instanceof RestException) return e;
    throw e;
  }
  throw new Error('expected a RestException');
}
