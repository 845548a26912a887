/**
 * Ringing connects another call may answer in place of their legs (call pickup, media-app/pbx/pickup.ts):
 * while a connect's legs ring, it is listed here; a pickup `take`s it with an answered call, which then
 * wins as a leg that answered would (connect.ts): the legs are cancelled, the picker is bridged to the
 * master. A connect is taken only on the node that runs it; while it rings it is also listed in Redis
 * (core/pbx/ringing.ts), so a pickup on another node knows which node to ask (media-app/pbx/pickup-leg.ts).
 */
import { ringingIndex } from '../../core/pbx/ringing';
import type { CallDeps } from './deps';
import type { CallSession } from './session';

export interface Pickable {
  readonly master: CallSession;
  readonly legs: readonly CallSession[];
  /** When it started ringing (the oldest ringing call is picked first). */
  readonly since: number;
  /** Gives the connect to `picker`; false when it was answered, picked or ended meanwhile. */
  take(picker: CallSession): boolean;
}

const lists = new WeakMap<object, Set<Pickable>>();

function listOf(deps: Pick<CallDeps, 'calls'>): Set<Pickable> {
  let l = lists.get(deps.calls);
  if (!l) lists.set(deps.calls, (l = new Set()));
  return l;
}

/** The connects ringing on this node, oldest first. */
export function ringingConnects(deps: Pick<CallDeps, 'calls'>): Pickable[] {
  return [...listOf(deps)].sort((a, b) => a.since - b.since);
}

/** Lists a connect's ringing legs; `picked` resolves with the picker; `withdraw` once it is settled. */
export function offerPickup(master: CallSession, legs: readonly CallSession[]): { picked: Promise<CallSession>; withdraw(): void } {
  const list = listOf(master.deps);
  let resolve!: (c: CallSession) => void;
  const picked = new Promise<CallSession>((r) => (resolve = r));
  let open = true;
  const entry: Pickable = {
    master,
    legs,
    since: Date.now(),
    take(picker) {
      if (!open || master.isEnded || legs.some((l) => l.answered)) return false;
      open = false;
      list.delete(entry);
      resolve(picker);
      return true;
    },
  };
  list.add(entry);
  // listed for the pickups of other nodes too (core/pbx/ringing.ts): the legs' extensions
  const extensions = [...new Set(legs.filter((l) => l.row.destination.type === 'extension').map((l) => l.row.destination.target))];
  const shared = extensions.length ? ringingIndex(master.deps.redis, master.deps.config.redisKeyPrefix) : null;
  const customerId = master.row.customer_id;
  let unlisted = false;
  const added = shared?.add(customerId, { master_call_id: master.id, node_id: master.deps.calls.nodeId, since: entry.since, extensions }).catch((err: Error) => {
    master.deps.logger.warn({ err: err.message, call: master.id }, 'ringing connect not listed for other nodes');
  });
  return {
    picked,
    withdraw() {
      if (!unlisted) void added?.then(() => shared?.remove(customerId, master.id).catch(() => undefined));
      unlisted = true;
      open = false;
      list.delete(entry);
    },
  };
}
