/**
 * Which channels are bridged to which (uuid_bridge), one owner for the relation: the engine endpoints
 * joined, the variables switch_ivr_uuid_bridge and the bridge set on both channels, CHANNEL_BRIDGE and
 * CHANNEL_UNBRIDGE. A bridge ends by `uuid_transfer … park` (unbridge), by another uuid_bridge of one
 * of its channels, or when one of them hangs up (the other stays up, parked: esl/README.md).
 */
import type { Channel } from './channel';
import type { EventName } from './events';

/** A channel that can be bridged: its state, and its events to the subscribed connections. */
export interface Bridgeable {
  readonly channel: Channel;
  fire(name: EventName, own?: [string, string][]): void;
}

interface Leg {
  peer: Bridgeable;
  /** the uuid_bridge's first channel (Bridge-A of the bridge's events) */
  originator: boolean;
}

export class Bridges {
  private readonly legs = new Map<string, Leg>();
  /**
   * Every bridge and end runs after the ones asked before it: each reads `legs`, awaits the engine,
   * then writes `legs`, so two at once on a shared channel (two connections, bgapi) would cross.
   */
  private tail: Promise<unknown> = Promise.resolve();

  /** The channel `uuid` is bridged to, or undefined. */
  partnerOf(uuid: string): Bridgeable | undefined {
    return this.legs.get(uuid)?.peer;
  }

  /**
   * Bridges `a` (originator) and `b`, after the bridges and ends asked before: any bridge either is in
   * ends first; then their engine endpoints hear each other. Resolves false when one of them hung up
   * before or meanwhile (`live` says which are up); rejects on any other failure of the engine.
   */
  bridge(a: Bridgeable, b: Bridgeable, live: (c: Bridgeable) => boolean): Promise<boolean> {
    return this.serial(() => this.join(a, b, live));
  }

  /** Ends the bridge `call` is in, if any, after the bridges and ends asked before (a park, uuid_transfer). */
  end(call: Bridgeable): Promise<void> {
    return this.serial(() => this.release(call)?.() ?? Promise.resolve());
  }

  /**
   * `call` hung up: its bridge ends at once (CHANNEL_UNBRIDGE before the hang-up's events), the engine
   * endpoints apart in turn. A bridge of it still queued or under way finds it gone and undoes itself.
   */
  hungUp(call: Bridgeable): Promise<void> {
    const apart = this.release(call);
    return apart ? this.serial(apart) : Promise.resolve();
  }

  private serial<T>(op: () => Promise<T>): Promise<T> {
    const run = this.tail.then(op);
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async join(a: Bridgeable, b: Bridgeable, live: (c: Bridgeable) => boolean): Promise<boolean> {
    if (!live(a) || !live(b)) return false;
    await Promise.all([this.release(a)?.(), this.release(b)?.()]);
    try {
      await a.channel.endpoint.bridge(b.channel.endpoint);
    } catch (e) {
      // a channel that hung up meanwhile took its endpoint along: no bridge, as FreeSWITCH's answer
      if (!live(a) || !live(b) || a.channel.endpoint.destroyed || b.channel.endpoint.destroyed) return false;
      throw e;
    }
    // re-checked after the awaits: a hang-up meanwhile found no bridge to end
    if (!live(a) || !live(b)) {
      await this.unbridgeEngine(a, b);
      return false;
    }
    this.legs.set(a.channel.uuid, { peer: b, originator: true });
    this.legs.set(b.channel.uuid, { peer: a, originator: false });
    a.channel.variables.set('uuid_bridge', b.channel.uuid);
    for (const [x, y] of [
      [a, b],
      [b, a],
    ] as const) {
      const v = x.channel.variables;
      v.set('bridge_channel', y.channel.name);
      v.set('bridge_uuid', y.channel.uuid);
      v.set('signal_bond', y.channel.uuid);
      v.set('bridge_to', y.channel.uuid);
      x.fire('CHANNEL_EXECUTE', [
        ['Application', 'uuid_bridge'],
        ['Application-Data', y.channel.uuid],
      ]);
    }
    a.fire('CHANNEL_BRIDGE', ids(a, b));
    return true;
  }

  /**
   * The bridge `call` is in, ended at once: the relation, bridge_to → last_bridge_to on both and
   * CHANNEL_UNBRIDGE; returns what puts the engine endpoints apart (null: no bridge).
   */
  private release(call: Bridgeable): (() => Promise<void>) | null {
    const leg = this.legs.get(call.channel.uuid);
    if (!leg) return null;
    const peer = leg.peer;
    this.legs.delete(call.channel.uuid);
    this.legs.delete(peer.channel.uuid);
    for (const [x, y] of [
      [call, peer],
      [peer, call],
    ] as const) {
      x.channel.variables.delete('bridge_to');
      x.channel.variables.set('last_bridge_to', y.channel.uuid);
    }
    const [a, b] = leg.originator ? [call, peer] : [peer, call];
    a.fire('CHANNEL_UNBRIDGE', ids(a, b));
    // from the partner's side: at a hang-up it is the one still up
    return () => this.unbridgeEngine(peer, call);
  }

  /** The engine endpoints apart, from the side still up (a destroyed endpoint has left its worker). */
  private async unbridgeEngine(x: Bridgeable, y: Bridgeable): Promise<void> {
    const up = !x.channel.endpoint.destroyed ? x : y;
    if (up.channel.endpoint.destroyed) return;
    try {
      await up.channel.endpoint.unbridge();
    } catch (e) {
      if (!up.channel.endpoint.destroyed) throw e; // hung up meanwhile: its leg left the worker with it
    }
  }
}

const ids = (a: Bridgeable, b: Bridgeable): [string, string][] => [
  ['Bridge-A-Unique-ID', a.channel.uuid],
  ['Bridge-B-Unique-ID', b.channel.uuid],
];
