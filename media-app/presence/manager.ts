/**
 * The subscriptions this node holds (RFC 6665 notifier): SUBSCRIBE out of dialog (admission.ts) is
 * answered 202 with the granted Expires and followed at once by a NOTIFY with the full state; then a
 * NOTIFY on every change notice that concerns the package (from any node: core/presence/store.ts),
 * and one for each refresh. One NOTIFY at a time per subscription (RFC 6665 4.2.2: the next waits
 * for the previous one's final response), its body read when it is sent.
 *
 * A subscription ends, with a last NOTIFY `Subscription-State: terminated`, when its Expires runs out
 * (reason=timeout), when the subscriber sends Expires: 0 (a fetch with Expires: 0 gets one NOTIFY
 * and ends the same way), and when the node stops (reason=deactivated: the phone subscribes again,
 * to another node behind the edge). A NOTIFY answered with a failure (481: the phone forgot the
 * subscription; 408: no answer) ends it without another NOTIFY.
 */
import type { Logger } from 'pino';
import type { PresenceChange } from '../../core/presence/store';
import type { Watcher, WatcherIndex } from '../../core/presence/watchers';
import { onSubscriptionDialog, type Srf, type SrfDialog, type SrfRequest, type SrfResponse } from '../kit/srf';
import { admit, eventHeader, grantExpires, type AdmissionDeps, type EventHeader } from './admission';
import type { EventPackage, Render, Resource } from './package';

type Phase = 'active' | 'ending' | 'gone';

interface Subscription {
  readonly id: string;
  /** The subscribing extension's id. */
  readonly owner: string;
  readonly resource: Resource;
  readonly pkg: EventPackage;
  readonly event: EventHeader;
  readonly dialog: SrfDialog;
  /** The subscriber's Contact URI ('' when it sent none). */
  readonly contact: string;
  version: number;
  expiresAt: number;
  timer: NodeJS.Timeout | null;
  chain: Promise<void>;
  phase: Phase;
}

export interface ManagerDeps extends Omit<AdmissionDeps, 'packages'> {
  srf: Srf;
  logger: Logger;
  /** Subscriptions one extension may hold on this node (more: 403). */
  maxPerExtension: number;
  /** Where the live subscriptions are shown to every node (the unsolicited MWI sender reads it). */
  watchers: WatcherIndex;
}

/** The URI inside a Contact header value (`"name" <sip:...>;params` or a bare URI). */
function contactUri(header: string | undefined): string {
  if (!header) return '';
  const angle = /<([^>]*)>/.exec(header);
  return (angle ? angle[1]! : header.split(';')[0]!).trim();
}

const subjectKey = (customerId: string, name: string) => `${customerId}\u0000${name}`;

export class SubscriptionManager {
  private readonly packages = new Map<string, EventPackage>();
  private readonly subs = new Map<string, Subscription>();
  private readonly bySubject = new Map<string, Set<Subscription>>();
  /** Subscriptions held per subscribing extension. */
  private readonly perOwner = new Map<string, number>();
  private stopped = false;

  constructor(private readonly deps: ManagerDeps) {}

  /** Serves a package from now on (a later one with the same event name replaces it). */
  addPackage(pkg: EventPackage): void {
    this.packages.set(pkg.event, pkg);
  }

  get events(): string[] {
    return [...this.packages.keys()];
  }

  get size(): number {
    return this.subs.size;
  }

  /** srf.subscribe middleware (out-of-dialog SUBSCRIBE; refreshes reach the dialog). */
  handle = (req: SrfRequest, res: SrfResponse): void => {
    this.subscribe(req, res).catch((err: Error) => {
      this.deps.logger.error({ err: err.message }, 'SUBSCRIBE failed');
      if (!res.finalResponseSent) res.send(500);
    });
  };

  private async subscribe(req: SrfRequest, res: SrfResponse): Promise<void> {
    if (this.stopped) return void res.send(503, { headers: { 'Retry-After': '5' } });
    const ok = await admit({ ...this.deps, packages: this.packages }, req, res);
    if (!ok) return;
    if ((this.perOwner.get(ok.subscriber.id) ?? 0) >= this.deps.maxPerExtension) {
      this.deps.logger.info({ subscriber: ok.subscriber.extension, held: this.deps.maxPerExtension }, 'SUBSCRIBE refused: too many subscriptions');
      return void res.send(403, { headers: { Warning: '399 openvoice "too many subscriptions"' } });
    }
    const dialog = await this.deps.srf.createUAS(req, res, { localSdp: '', headers: { Expires: String(ok.expires), 'Allow-Events': this.events.join(', ') } });
    const sub: Subscription = {
      id: dialog.id,
      owner: ok.subscriber.id,
      resource: ok.resource,
      pkg: ok.pkg,
      event: ok.event,
      dialog,
      contact: contactUri(req.get('Contact')),
      version: 0,
      expiresAt: Date.now() + ok.expires * 1000,
      timer: null,
      chain: Promise.resolve(),
      phase: 'active',
    };
    this.deps.logger.debug({ subscriber: ok.subscriber.extension, resource: ok.resource.name, event: ok.event.name, expires: ok.expires }, 'subscription');
    if (ok.expires === 0) {
      // a fetch (RFC 6665 4.4.3): the state once, and the subscription is over
      this.end(sub, 'timeout');
      return;
    }
    this.track(sub);
    onSubscriptionDialog(dialog, {
      refresh: (r, s) => this.refresh(sub, r, s),
      unsubscribe: () => this.end(sub, 'timeout'),
      destroy: () => this.forget(sub),
    });
    this.arm(sub);
    this.queue(sub, null);
  }

  private track(sub: Subscription): void {
    this.subs.set(sub.id, sub);
    this.perOwner.set(sub.owner, (this.perOwner.get(sub.owner) ?? 0) + 1);
    const key = subjectKey(sub.resource.customerId, sub.resource.name);
    let set = this.bySubject.get(key);
    if (!set) this.bySubject.set(key, (set = new Set()));
    set.add(sub);
    this.publishWatcher(sub);
  }

  private watcherOf(sub: Subscription): [{ customerId: string; event: string; name: string }, Watcher] {
    return [
      { customerId: sub.resource.customerId, event: sub.pkg.event, name: sub.resource.name },
      { id: sub.id, owner: sub.owner, contact: sub.contact },
    ];
  }

  /** Shows the subscription (until it expires) to every node; a failure only costs a duplicate unsolicited NOTIFY. */
  private publishWatcher(sub: Subscription): void {
    const [r, w] = this.watcherOf(sub);
    this.deps.watchers.set(r, w, sub.expiresAt).catch((err: Error) => this.deps.logger.warn({ err: err.message, subscription: sub.id }, 'subscription not shown to other nodes'));
  }

  private forget(sub: Subscription): void {
    if (sub.timer) clearTimeout(sub.timer);
    sub.timer = null;
    sub.phase = 'gone';
    if (!this.subs.delete(sub.id)) return;
    const held = (this.perOwner.get(sub.owner) ?? 1) - 1;
    if (held > 0) this.perOwner.set(sub.owner, held);
    else this.perOwner.delete(sub.owner);
    const key = subjectKey(sub.resource.customerId, sub.resource.name);
    const set = this.bySubject.get(key);
    set?.delete(sub);
    if (set?.size === 0) this.bySubject.delete(key);
    const [r, w] = this.watcherOf(sub);
    this.deps.watchers.remove(r, w).catch((err: Error) => this.deps.logger.warn({ err: err.message, subscription: sub.id }, 'ended subscription not withdrawn (it lapses at its expiry)'));
  }

  private arm(sub: Subscription): void {
    if (sub.timer) clearTimeout(sub.timer);
    sub.timer = setTimeout(() => this.end(sub, 'timeout'), Math.max(0, sub.expiresAt - Date.now()));
  }

  /** An in-dialog SUBSCRIBE with Expires > 0: a refresh, answered 200 and followed by a NOTIFY. */
  private refresh(sub: Subscription, req: SrfRequest, res: SrfResponse): void {
    if (sub.phase !== 'active') return void res.send(481);
    const expires = grantExpires(req.get('Expires'), this.deps.minExpires, this.deps.maxExpires);
    if (expires === 'bad') return void res.send(400, 'Bad Expires');
    if (expires === 'brief') return void res.send(423, { headers: { 'Min-Expires': String(this.deps.minExpires) } });
    res.send(200, { headers: { Expires: String(expires) } });
    if (expires === 0) return this.end(sub, 'timeout');
    sub.expiresAt = Date.now() + expires * 1000;
    this.publishWatcher(sub);
    this.arm(sub);
    this.queue(sub, null);
  }

  /** A change notice from any node: a NOTIFY to each subscription of the resource whose package it concerns. */
  onChange(change: PresenceChange): void {
    const set = this.bySubject.get(subjectKey(change.customerId, change.resource));
    if (!set) return;
    // one read of the state per package for all the resource's subscriptions
    const renders = new Map<EventPackage, Promise<Render>>();
    for (const sub of set) {
      if (sub.phase !== 'active' || !sub.pkg.kinds.includes(change.kind)) continue;
      let render = renders.get(sub.pkg);
      if (!render) renders.set(sub.pkg, (render = sub.pkg.prepare(sub.resource, change)));
      this.queue(sub, change, render);
    }
  }

  private queue(sub: Subscription, change: PresenceChange | null, render?: Promise<Render>, terminated?: string): void {
    const body = render ?? sub.pkg.prepare(sub.resource, change);
    body.catch(() => undefined); // read when its turn comes; a failure is logged there
    sub.chain = sub.chain.then(() => this.send(sub, body, change, terminated));
  }

  /** Ends the subscription with a last NOTIFY (terminated;reason=...). */
  private end(sub: Subscription, reason: 'timeout' | 'deactivated' | 'noresource'): void {
    if (sub.phase !== 'active') return;
    sub.phase = 'ending';
    if (sub.timer) clearTimeout(sub.timer);
    sub.timer = null;
    this.queue(sub, null, undefined, `terminated;reason=${reason}`);
    sub.chain = sub.chain.then(() => this.forget(sub));
  }

  private async send(sub: Subscription, body: Promise<Render>, change: PresenceChange | null, terminated?: string): Promise<void> {
    if (sub.phase === 'gone' || (sub.phase === 'ending' && !terminated)) return;
    const log = { subscription: sub.id, resource: sub.resource.name, event: sub.event.name };
    let text: string;
    try {
      text = (await body)(sub.version);
    } catch (err) {
      this.deps.logger.warn({ ...log, err: (err as Error).message }, 'NOTIFY body not read: this change is skipped');
      return;
    }
    const left = Math.max(0, Math.round((sub.expiresAt - Date.now()) / 1000));
    try {
      const res = await sub.dialog.request({
        method: 'NOTIFY',
        headers: {
          Event: eventHeader(sub.event),
          'Subscription-State': terminated ?? `active;expires=${left}`,
          'Content-Type': sub.pkg.contentType,
        },
        body: text,
      });
      sub.version++;
      if (res.status >= 300) {
        this.deps.logger.info({ ...log, status: res.status }, 'NOTIFY refused or unanswered: subscription ended');
        this.drop(sub);
      }
    } catch (err) {
      this.deps.logger.info({ ...log, err: (err as Error).message }, 'NOTIFY not sent: subscription ended');
      this.drop(sub);
    }
  }

  /** Gone without a last NOTIFY (the phone refused one): forgotten here and by drachtio-srf. */
  private drop(sub: Subscription): void {
    this.forget(sub);
    this.deps.srf.removeDialog(sub.dialog);
  }

  /** Ends every subscription (reason=deactivated), waiting for the last NOTIFYs at most `maxMs`. */
  async stop(maxMs = 2000): Promise<void> {
    this.stopped = true;
    const all = [...this.subs.values()];
    for (const sub of all) this.end(sub, 'deactivated');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled(all.map((s) => s.chain)), new Promise<void>((r) => (timer = setTimeout(r, maxMs)))]);
    clearTimeout(timer);
    for (const sub of all) this.forget(sub);
  }
}
