/**
 * The party that stands in a parked call's bridge in place of whoever parked it (Asterisk's parking
 * bridge): an idle media endpoint near the parked call's, so the parked call keeps its Bridge and the
 * Bridge's rule while it waits. Dialling the slot puts the retriever in the holder's place
 * (Bridge.replace); the parked call leaving makes the bridge hang the holder up, which frees the slot.
 */
import { randomUUID } from 'node:crypto';
import type { CallEndpoint } from '../media-server/endpoint';
import type { BridgeParty } from '../call/bridge';
import type { CallDeps } from '../call/deps';
import { createCallEndpoint } from '../call/endpoint';
import type { CallSession } from '../call/session';

export class ParkHolder implements BridgeParty {
  readonly id = `park-holder:${randomUUID()}`;
  readonly done: Promise<string>;
  private resolveDone!: (why: string) => void;
  private ended = false;

  private constructor(readonly endpoint: CallEndpoint) {
    this.done = new Promise((r) => (this.resolveDone = r));
  }

  /** A holder for `call`, its endpoint on the same media worker (no cross-worker link). */
  static async make(deps: CallDeps, call: CallSession): Promise<ParkHolder> {
    const made = await createCallEndpoint(deps, { near: call.endpoint ?? undefined });
    if ('error' in made) throw new Error(`no media endpoint for the park holder: ${made.error}`);
    return new ParkHolder(made.endpoint);
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** Ends the holder (its endpoint goes back to the pool); `done` resolves with why. Idempotent. */
  async hangup(why = 'normal'): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.endpoint.destroy().catch(() => undefined);
    this.resolveDone(why);
  }
}
