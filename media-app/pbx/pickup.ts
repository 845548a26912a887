/**
 * Call pickup (docs/pbx.md "Pickup"): group pickup (`*8`) answers a call ringing any other extension
 * that shares a pickup group with the caller's extension; directed pickup (`**EXT`) one ringing that
 * extension. The oldest ringing call wins; its legs get CANCEL and its caller is bridged to the picker
 * (call/pickable.ts, connect.ts). Only the customer's own calls are seen: those ringing on this node
 * first, then those ringing on other live nodes (core/pbx/ringing.ts), asked for through a PBX leg
 * (pickup-leg.ts).
 */
import { ringingIndex } from '../../core/pbx/ringing';
import { nodeAlive } from '../xnode/address';
import { extensionsRepo, type ExtensionRow } from '../../core/repos/extensions';
import type { CallDeps } from '../call/deps';
import { ringingConnects, type Pickable } from '../call/pickable';

/** Which ringing extensions a pickup may answer. */
export type PickupTarget = { readonly kind: 'group'; readonly picker: ExtensionRow } | { readonly kind: 'directed'; readonly customerId: string; readonly extension: string };

/** The extensions (by number) a pickup may answer a ringing call of. */
async function extensionsFor(deps: CallDeps, t: PickupTarget): Promise<{ customerId: string; extensions: Set<string> }> {
  if (t.kind === 'directed') return { customerId: t.customerId, extensions: new Set([t.extension]) };
  const peers = await extensionsRepo(deps.db).inPickupGroups(t.picker.customer_id, t.picker.pickup_groups ?? []);
  return { customerId: t.picker.customer_id, extensions: new Set(peers.filter((e) => e.id !== t.picker.id).map((e) => e.extension)) };
}

/** The oldest call of this node ringing one of the target's extensions, or null. */
export async function findRinging(deps: CallDeps, t: PickupTarget): Promise<Pickable | null> {
  const { customerId, extensions } = await extensionsFor(deps, t);
  if (!extensions.size) return null;
  for (const p of ringingConnects(deps)) {
    if (p.master.isEnded || p.master.row.customer_id !== customerId) continue;
    const ringing = p.legs.some((l) => !l.isEnded && !l.answered && l.status === 'ringing' && l.row.destination.type === 'extension' && extensions.has(l.row.destination.target));
    if (ringing) return p;
  }
  return null;
}

/** A connect ringing on another node that the pickup may answer: which node, its master, the extension rung. */
export interface RemoteRinging {
  readonly nodeId: string;
  readonly masterCallId: string;
  readonly extension: string;
}

/** The connects ringing one of the target's extensions on other live nodes, oldest first (at most `max`). */
export async function findRemoteRinging(deps: CallDeps, t: PickupTarget, max = 5): Promise<RemoteRinging[]> {
  const { customerId, extensions } = await extensionsFor(deps, t);
  if (!extensions.size) return [];
  const prefix = deps.config.redisKeyPrefix;
  const out: RemoteRinging[] = [];
  for (const e of await ringingIndex(deps.redis, prefix).list(customerId)) {
    if (e.node_id === deps.calls.nodeId) continue;
    const extension = e.extensions.find((x) => extensions.has(x));
    if (!extension || !(await nodeAlive(deps.redis, prefix, e.node_id))) continue;
    out.push({ nodeId: e.node_id, masterCallId: e.master_call_id, extension });
    if (out.length >= max) break;
  }
  return out;
}

/** The call of this node whose ringing connect has master `masterId` and rings `extension`, or null. */
export function ringingByMaster(deps: CallDeps, customerId: string, masterId: string, extension: string): Pickable | null {
  for (const p of ringingConnects(deps)) {
    if (p.master.id !== masterId || p.master.isEnded || p.master.row.customer_id !== customerId) continue;
    const rings = p.legs.some((l) => !l.isEnded && !l.answered && l.status === 'ringing' && l.row.destination.type === 'extension' && l.row.destination.target === extension);
    return rings ? p : null;
  }
  return null;
}
