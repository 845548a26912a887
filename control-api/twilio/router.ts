/**
 * The Twilio-compatible REST API, mounted at /2010-04-01 (control-api/app.ts): per-IP limit (every
 * request, wrong credentials included, in the v1_ip bucket /v1.0 uses) → form body → basic auth for
 * /Accounts/:AccountSid (auth.ts) → per-account limit (the `customer` bucket of /v1.0's access keys)
 * → the resources → Twilio's error shape for everything (a limit: 20429 with Retry-After), unknown
 * paths included.
 */
import express, { Router, type RequestHandler } from 'express';
import type { AppContext } from '../context';
import type { Limiter } from '../../core/ratelimit';
import { rateLimited } from '../../core/errors';
import { accountSid } from '../../core/twilio/sids';
import { rfc2822 } from './params';
import { authOf, twilioAuth } from './auth';
import { callsRouter } from './calls';
import { recordingsRouter } from './recordings';
import { transcriptionsRouter } from './transcriptions';
import { numbersRouter } from './numbers';
import { conferencesRouter } from './conferences';
import { conferenceRecordingsRouter } from './conference-recordings';
import { participantsRouter } from './participants';
import { queuesRouter } from './queues';
import { notificationsRouter } from './alerts';
import { twilioErrorHandler, twilioRouteNotFound } from './errors';
import { API_VERSION } from './call-json';

/** The per-account limit after basic auth: the customer's bucket, as an access key on /v1.0 takes it. */
export function accountLimit(l: Limiter): RequestHandler {
  return (_req, res, next) => {
    l.consume(authOf(res.locals).customerId).then((r) => next(r.allowed ? undefined : rateLimited(r.limitedBy, r.retryAfterSec)), next);
  };
}

export function createTwilioRouter(ctx: AppContext, opts: { ipLimit?: RequestHandler[]; accountLimit?: Limiter | null } = {}): Router {
  const r = Router();
  for (const l of opts.ipLimit ?? []) r.use(l);
  r.use(express.urlencoded({ extended: false, limit: ctx.config.bodyLimitBytes, parameterLimit: 1000 }));
  const account = Router({ mergeParams: true });
  account.use(twilioAuth(ctx));
  if (opts.accountLimit) account.use(accountLimit(opts.accountLimit));
  account.get('/', (_req, res) => {
    const a = authOf(res.locals);
    res.json({
      sid: a.accountSid,
      owner_account_sid: a.accountSid,
      friendly_name: a.accountSid,
      status: 'active',
      type: 'Full',
      auth_token: null,
      date_created: rfc2822(null),
      date_updated: rfc2822(null),
      uri: `/${API_VERSION}/Accounts/${accountSid(a.customerId)}.json`,
      subresource_uris: {
        calls: `/${API_VERSION}/Accounts/${a.accountSid}/Calls.json`,
        recordings: `/${API_VERSION}/Accounts/${a.accountSid}/Recordings.json`,
        transcriptions: `/${API_VERSION}/Accounts/${a.accountSid}/Transcriptions.json`,
        incoming_phone_numbers: `/${API_VERSION}/Accounts/${a.accountSid}/IncomingPhoneNumbers.json`,
        conferences: `/${API_VERSION}/Accounts/${a.accountSid}/Conferences.json`,
        queues: `/${API_VERSION}/Accounts/${a.accountSid}/Queues.json`,
        notifications: `/${API_VERSION}/Accounts/${a.accountSid}/Notifications.json`,
      },
    });
  });
  account.use(notificationsRouter(ctx));
  account.use(callsRouter(ctx));
  account.use(recordingsRouter(ctx));
  account.use(transcriptionsRouter(ctx));
  account.use(numbersRouter(ctx));
  account.use(conferencesRouter(ctx));
  account.use(conferenceRecordingsRouter(ctx));
  account.use(participantsRouter(ctx));
  account.use(queuesRouter(ctx));
  r.use('/Accounts/:AccountSid', account);
  r.use(twilioRouteNotFound);
  r.use(twilioErrorHandler);
  return r;
}
