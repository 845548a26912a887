// What the auth group needs besides the shared AppContext: the mailer, and the shared middlewares it
// mounts (rate limits, credentials, account status gate) which control-api/ builds.
import type { RequestHandler } from 'express';
import type { AppContext } from '../context';
import type { Mailer } from '../../core/smtp';
import type { LoginThrottle } from './login-throttle';

export interface AuthDeps {
  ctx: AppContext;
  mailer: Mailer;
  /** Per-IP limiter shared by every /auth/* endpoint except unregister and delegate. */
  publicLimiter: RequestHandler;
  /** Per-IP limiter of /auth/unregister and /auth/delegate (tracked separately). */
  protectedLimiter: RequestHandler;
  /** The shared credential middleware (sets req.auth; envelope on failure). */
  authenticate: RequestHandler;
  /** The shared account status gate (frozen -> ACCOUNT_FROZEN, except on /auth/unregister). */
  statusGate: RequestHandler;
  /** Current direct-token scope version; raising it invalidates every outstanding direct token. */
  directScopeVersion: () => number;
  /** Password-guessing throttle of /auth/login and the unregister password (login-throttle.ts). */
  loginThrottle: LoginThrottle;
  /** Called after a customer's status changed (verify, freeze, recover, delete): drop cached status. */
  onCustomerChanged?: (customerId: string) => void;
}

/** Mail delivery is best effort: the account change is committed already, the user can ask again. */
export async function sendQuietly(deps: AuthDeps, mail: Parameters<Mailer['send']>[0]): Promise<void> {
  try {
    await deps.mailer.send(mail);
  } catch (err) {
    deps.ctx.logger.warn({ err, kind: mail.kind }, 'could not send account mail');
  }
}
