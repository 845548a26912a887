/**
 * The voicemail subsystem of a media-app node (docs/pbx.md "Voicemail"): fills services.voicemail
 * for the `voicemail` and `voicemail_main` actions, runs the unsolicited MWI notifier and gives the
 * presence subsystem the message-summary package (subscribed MWI: mwi-presence.ts).
 */
import type { Subsystem } from '../subsystem';
import type { CallEndpoint } from '../media-server/endpoint';
import { publisherFor } from '../../core/messaging/deps';
import { emailTransport } from '../../core/smtp/transport';
import { EgressPolicy } from '../../core/net';
import type { VoicemailDeps } from './service';
import { leaveMessage } from './leave';
import { voicemailMain } from './menu';
import { PinLockout } from '../../core/voicemail/pin-lockout';
import { startMwiNotifier } from './mwi-notifier';
import { startMwiPresence } from './mwi-presence';
import { recordingsDir } from '../../core/data-dirs';

export type { VoicemailService } from './service';

export const subsystem: Subsystem = {
  name: 'voicemail',
  async start(ctx) {
    const d = ctx.deps;
    const work = new Set<Promise<unknown>>();
    const transport = emailTransport({ smtpUrl: d.config.smtpUrl || undefined, outboxDir: d.config.outboxDir });
    const deps: VoicemailDeps = {
      db: d.db,
      redis: d.redis,
      events: d.events,
      config: d.config,
      logger: ctx.logger,
      email: {
        db: d.db,
        provider: null,
        publicUrl: d.config.publicUrl,
        publish: publisherFor(d.events, ctx.logger),
        log: ctx.logger,
        transport,
        from: d.config.mailFrom,
        recordingsDir: recordingsDir(d.config.dataDir),
      },
      endpointOf(callId: string): CallEndpoint | null {
        const call = d.calls.get(callId) as { endpoint?: CallEndpoint | null; isEnded?: boolean } | undefined;
        return call && !call.isEnded ? (call.endpoint ?? null) : null;
      },
      egress: new EgressPolicy(d.config.egress),
      pinLockout: new PinLockout(d.redis, d.config.redisKeyPrefix, d.app.voicemailPin),
      speech: () => ctx.services.speech,
      track(p) {
        const w = p.catch(() => undefined).finally(() => work.delete(w));
        work.add(w);
      },
      async idle() {
        while (work.size > 0) await Promise.allSettled([...work]);
      },
    };
    const service = {
      leave: leaveMessage.bind(null, deps),
      menu: voicemailMain.bind(null, deps),
    };
    ctx.services.voicemail = service;
    const notifier = await startMwiNotifier(d, ctx.logger);
    // subscribed MWI: the presence subsystem starts before this one (subsystems.ts)
    const presence = ctx.services.presence;
    const subscribed = presence ? await startMwiPresence({ db: d.db, redis: d.redis, keyPrefix: d.config.redisKeyPrefix, presence, logger: ctx.logger }) : null;
    return {
      async stop() {
        if (ctx.services.voicemail === service) delete ctx.services.voicemail;
        await notifier.stop();
        await subscribed?.stop();
        await deps.idle();
        transport.close();
      },
    };
  },
};
