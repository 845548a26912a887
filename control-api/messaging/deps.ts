/**
 * The messaging/email/conversation services' dependencies for one AppContext, built on first use
 * from the environment (SMS_PROVIDER…, SMTP_URL, MAIL_FROM, DATA_DIR) and the context (db, redis,
 * PUBLIC_URL, the command bus). `configureMessaging` replaces parts (tests point the provider at a
 * local server and SMTP at a loopback server). AppContext has no slot for these yet.
 */
import type { AppContext } from '../context';
import { EventPublisher, eventPublisher } from '../../core/events/bus';
import { publisherFor } from '../../core/messaging/deps';
import { providerFromEnv } from '../../core/messaging/config';
import { busFlowStarter } from '../../core/messaging/flow-start';
import type { SmsProvider } from '../../core/messaging/provider';
import { emailTransport, type EmailTransport } from '../../core/smtp/transport';
import type { EmailDeps } from '../../core/email/send';
import { commandBus } from '../calls/bus';
import { recordingsDir } from '../../core/data-dirs';

export interface MessagingOverrides {
  provider?: SmsProvider | null;
  transport?: EmailTransport;
  events?: EventPublisher | null;
  recordingsDir?: string;
  /** Tests await background deliveries through this. */
  onDelivered?: (p: Promise<void>) => void;
}

const built = new WeakMap<AppContext, EmailDeps>();
const overrides = new WeakMap<AppContext, MessagingOverrides>();

export function configureMessaging(ctx: AppContext, o: MessagingOverrides): void {
  overrides.set(ctx, { ...(overrides.get(ctx) ?? {}), ...o });
  built.delete(ctx);
}

export function messagingDeps(ctx: AppContext): EmailDeps {
  let d = built.get(ctx);
  if (d) return d;
  const o = overrides.get(ctx) ?? {};
  const log = ctx.logger;
  const events = o.events !== undefined ? o.events : eventPublisher(ctx);
  d = {
    db: ctx.db,
    provider: o.provider !== undefined ? o.provider : providerFromEnv(),
    publicUrl: ctx.config.publicUrl,
    publish: publisherFor(events, log),
    startFlow: busFlowStarter(ctx.db, commandBus(ctx)),
    log,
    transport: o.transport ?? emailTransport({ smtpUrl: ctx.config.smtpUrl || undefined, outboxDir: ctx.config.outboxDir }),
    from: ctx.config.mailFrom,
    recordingsDir: o.recordingsDir ?? recordingsDir(ctx.config.dataDir),
    onDelivered: o.onDelivered,
  };
  built.set(ctx, d);
  return d;
}
