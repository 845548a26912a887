/**
 * The presence subsystem: SUBSCRIBE/NOTIFY for busy lamps (`dialog`), presence (`presence`) and, once
 * a summary provider is plugged in, the message-waiting lamp (`message-summary`), across nodes.
 *
 *   call legs of extensions ──► CallPresenceSource ─┐
 *   REGISTER changes ──────────────────────────────┼──► PresenceStore (Redis) ──changes──► every node's
 *   publishState (park slots), notifyChange (MWI) ──┘                                      SubscriptionManager ──NOTIFY──► phones
 *
 * Other subsystems reach it as `services.presence` (PresenceService).
 */
import { PresenceStore, type ChangeKind, type DialogEntry } from '../../core/presence/store';
import { WatcherIndex } from '../../core/presence/watchers';
import { extensionsRepo } from '../../core/repos/extensions';
import type { Subsystem } from '../subsystem';
import { CallSession } from '../call/session';
import { CallPresenceSource } from './call-source';
import { dialogPackage } from './dialog-package';
import { SubscriptionManager } from './manager';
import type { EventPackage, Resource } from './package';
import { presencePackage } from './presence-package';

export type { EventPackage, Resource } from './package';
export { messageSummaryPackage, type MessageSummary, type MessageSummaryProvider } from './message-summary';

/** Whether a feature serves `name` in the customer. */
export type ResourceServer = (customerId: string, name: string) => Promise<boolean>;

export interface PresenceService {
  /**
   * Publishes the whole dialog list of a resource of the customer that is not an extension (a park
   * slot: one confirmed dialog while a call is parked, [] when free); it can be subscribed to from then on.
   */
  publishState(customerId: string, resource: string, dialogs: readonly DialogEntry[]): Promise<void>;
  /**
   * Names a feature serves before it published anything under them (park: the customer's slot
   * numbers): a SUBSCRIBE to one is accepted and shows no dialog until the first publication.
   * Returns the function that stops serving them.
   */
  serveResources(serves: ResourceServer): () => void;
  /** Tells every node's subscriptions that a resource's state kept elsewhere changed (a mailbox: `message-summary`). */
  notifyChange(customerId: string, resource: string, kind: Exclude<ChangeKind, 'dialog'>): Promise<void>;
  /** Serves another event package (message-summary with voicemail's provider). */
  addPackage(pkg: EventPackage): void;
  /** The subscriptions this node holds. */
  readonly subscriptionCount: number;
}

declare module '../flow/services' {
  interface FlowServices {
    presence?: PresenceService;
  }
}

export const subsystem: Subsystem = {
  name: 'presence',
  async start(ctx) {
    const { deps } = ctx;
    const prefix = deps.config.redisKeyPrefix;
    const store = new PresenceStore(deps.redis, prefix);
    const extensions = extensionsRepo(deps.db);
    const servers = new Set<ResourceServer>();
    // a resource of a feature: published once, or named by a feature that serves it
    const featureResource = async (customerId: string, name: string) => {
      if (await store.isPublished(customerId, name)) return true;
      for (const serves of servers) if (await serves(customerId, name)) return true;
      return false;
    };
    // open: an extension with a live registration; a feature's resource (a park slot) always
    const reachable = async (r: Resource) => {
      const ext = await extensions.getByExtension(r.customerId, r.name);
      if (!ext) return featureResource(r.customerId, r.name);
      return (await deps.registrar.bindings.get(`${ext.username}@${ext.domain_name}`)).length > 0;
    };
    const manager = new SubscriptionManager({
      srf: deps.srf,
      db: deps.db,
      registrar: deps.registrar,
      featureResource,
      sipDomain: deps.config.sipDomain,
      minExpires: deps.app.subscriptions.minExpires,
      maxExpires: deps.app.subscriptions.maxExpires,
      maxPerExtension: deps.app.subscriptions.maxPerExtension,
      watchers: new WatcherIndex(deps.redis, prefix),
      logger: ctx.logger,
    });
    manager.addPackage(dialogPackage(store));
    manager.addPackage(presencePackage(store, reachable));

    const listener = deps.redis.duplicate();
    listener.on('error', (err: Error) => ctx.logger.warn({ err: err.message }, 'presence change listener: redis error'));
    const unlisten = await store.listen(listener, (c) => manager.onChange(c));

    const source = new CallPresenceSource(store, deps.db, deps.config.sipDomain, ctx.logger);
    const unwatchCalls = deps.calls.onAdded((c) => {
      if (c instanceof CallSession) source.watch(c);
    });
    const unwatchBindings = deps.registrar.onBindingsChanged((ext) => {
      store.notifyChange(ext.customer_id, ext.extension, 'registration').catch((err: Error) => ctx.logger.warn({ err: err.message }, 'registration change not published'));
    });
    deps.srf.subscribe(manager.handle);

    ctx.services.presence = {
      publishState: (customerId, resource, dialogs) => store.publishState(customerId, resource, dialogs),
      notifyChange: (customerId, resource, kind) => store.notifyChange(customerId, resource, kind),
      serveResources: (serves) => {
        servers.add(serves);
        return () => void servers.delete(serves);
      },
      addPackage: (pkg) => manager.addPackage(pkg),
      get subscriptionCount() {
        return manager.size;
      },
    };
    return {
      async stop() {
        unwatchCalls();
        unwatchBindings();
        await manager.stop();
        await unlisten();
        listener.disconnect();
      },
    };
  },
};
