/**
 * The express 5 app factory. Order on /v1.0: request id → metrics/log → cookie Origin check → per-IP limit → per route:
 * credentials → per-customer limit → status gate → JSON body → permission → validation → handler.
 *
 * The /auth group (control-api/auth/) is mounted at /auth with no body parser in front; the
 * provisioning URL for desk phones (control-api/provisioning/) at /provisioning, without credentials.
 */
import { useKeySecret } from '../core/secrets/keys';
import express, { Router, type Express } from 'express';
import type { AppContext } from './context';
import { requestId } from './middleware/request-id';
import { traceRequests } from './middleware/trace';
import { jsonBody } from './middleware/body';
import { errorHandler, routeNotFound } from './middleware/errors';
import { createCredentials, type Credentials, type CredentialOptions } from './middleware/credentials';
import { createStatusGate, type StatusGate } from './middleware/status-gate';
import { createLimiters, isPassThrough, type Limiters } from './middleware/rate-limit';
import { groupDispatch, mountRoutes, type AnyRoute, type RouteMiddlewares } from './route';
import { loadRoutes } from './routes';
import { buildOpenApi } from './openapi';
import { createMetrics, opsRouter, type Metrics } from './ops';
import { registerBacklogMetrics } from './backlog-metrics';
import { createMessagingCallbackRouter } from './messaging/router';
import { createAuthRouter } from './auth';
import { createProvisioningRouter } from './provisioning/router';
import { createConsoleRouter } from './console/router';
import { webphoneRouter } from './webphone/serve';
import { signOutCarried } from './middleware/session-revoke';
import { cookieOriginGuard } from './middleware/origin';
import { createTwilioRouter } from './twilio/router';
import { createTwilioMonitorRouter } from './twilio/monitor';

/** What the /auth router gets. */
export interface AuthMount {
  ctx: AppContext;
  credentials: Credentials;
  statusGate: StatusGate;
  limiters: Limiters;
  /** The JSON body parser with the configured size limit. */
  jsonBody: express.RequestHandler;
}

export interface AppOptions {
  /** Defaults to control-api/auth's createAuthRouter (tests mount their own). */
  authRouter?: (m: AuthMount) => Router;
  /** Defaults to control-api/provisioning's createProvisioningRouter. */
  provisioningRouter?: (ctx: AppContext) => Router;
  /** Override the route list (tests). */
  routes?: AnyRoute[];
  /** Cache lifetime of verified credentials and customer status (default 1000 ms; tests use 0). */
  cacheTtlMs?: number;
  checkDirect?: CredentialOptions['checkDirect'];
  /** Node's default process metrics on /metrics (main only: they are process-global). */
  defaultMetrics?: boolean;
}

export interface PlatformApp {
  app: Express;
  credentials: Credentials;
  statusGate: StatusGate;
  limiters: Limiters;
  metrics: Metrics;
  routes: AnyRoute[];
  openapi: Record<string, unknown>;
}

export function createApp(ctx: AppContext, opts: AppOptions = {}): PlatformApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // the key that seals the AI vendor keys at rest (core/secrets/keys.ts)
  useKeySecret(ctx.config.jwtSecret);
  if (ctx.config.trustProxy) app.set('trust proxy', true);

  const metrics = createMetrics({ defaultMetrics: opts.defaultMetrics, logger: ctx.logger });
  registerBacklogMetrics(metrics.registry, ctx.db);
  const credentials = createCredentials(ctx, { cacheTtlMs: opts.cacheTtlMs, checkDirect: opts.checkDirect });
  const statusGate = createStatusGate(ctx, { cacheTtlMs: opts.cacheTtlMs });
  const limiters = createLimiters(ctx.redis, { scale: ctx.config.rateLimitScale, prefix: ctx.config.redisKeyPrefix });
  const body = jsonBody(ctx.config.bodyLimitBytes);
  const routes = opts.routes ?? loadRoutes();
  const openapi = buildOpenApi(routes, { serverUrl: `${ctx.config.publicUrl}/v1.0` });

  // Handlers reach the shared services through req.app.locals (e.g. cache invalidation).
  app.locals.credentials = credentials;
  app.locals.statusGate = statusGate;
  app.locals.limiters = limiters;

  app.use(requestId(ctx.logger, app.request));
  const traced = traceRequests();
  if (traced) app.use(traced);
  app.use(metrics.middleware);
  // a session cookie sent by another site's page changes nothing (POST/PUT/PATCH/DELETE)
  app.use(cookieOriginGuard(ctx.config.publicUrl));

  // The versioned API first: most requests are for it, and no other mount below shares its prefix.
  // Limiters switched off (RATE_LIMIT_SCALE=0) are left out of the chains rather than called per request.
  const limited = (...mws: express.RequestHandler[]) => mws.filter((m) => !isPassThrough(m));
  const v1 = Router();
  if (!isPassThrough(limiters.v1Ip)) v1.use(limiters.v1Ip);
  // The auth group is not versioned: /v1.0/auth/... is an unknown route by definition.
  v1.all('/auth', routeNotFound);
  v1.all('/auth/*rest', routeNotFound);
  v1.get('/openapi.json', (_req, res) => {
    res.json(openapi);
  });
  const mw: RouteMiddlewares = { authenticated: limited(credentials.required, limiters.customer, statusGate.middleware), body };
  const groups = mountRoutes(v1, ctx, routes, mw);
  for (const own of ['auth', 'openapi.json']) groups.delete(own); // v1's own paths, matched ahead of the groups
  app.use('/v1.0', groupDispatch(v1, groups, limited(limiters.v1Ip)));

  // The Twilio-compatible REST API (control-api/twilio/): basic auth, form bodies, Twilio's error shape.
  // Limited as /v1.0 is: per address before auth, per account (the access keys' bucket) after it.
  const accountLimit = isPassThrough(limiters.customer) ? null : limiters.raw.customer;
  app.use('/2010-04-01', createTwilioRouter(ctx, { ipLimit: limited(limiters.v1Ip), accountLimit }));
  // Twilio's Monitor API (monitor.twilio.com/v1): Alerts, the debugger's records.
  app.use('/v1', createTwilioMonitorRouter(ctx, { ipLimit: limited(limiters.v1Ip), accountLimit }));

  app.use(opsRouter(ctx, metrics));
  const authRouter = opts.authRouter ?? createAuthRouter;
  app.use('/auth', authRouter({ ctx, credentials, statusGate, limiters, jsonBody: body }));
  const provisioning = opts.provisioningRouter ?? createProvisioningRouter;
  app.use('/provisioning', provisioning(ctx));
  // The web console: static files; it uses the public API below like any client.
  app.use('/console', createConsoleRouter({ publicUrl: ctx.config.publicUrl, signOut: (req) => signOutCarried(ctx, credentials, req) }));
  // SMS provider callbacks (delivery reports, inbound messages): authenticated by the provider's signature.
  app.use('/hooks/sms', createMessagingCallbackRouter(ctx));
  // The browser phone (web/phone): static files and its config.json.
  app.use('/phone', webphoneRouter(ctx));

  app.use(routeNotFound);
  app.use(errorHandler);
  return { app, credentials, statusGate, limiters, metrics, routes, openapi };
}
