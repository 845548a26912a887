/**
 * Call pickup (docs/pbx.md "Pickup"): group pickup (`*8`) answers a call ringing any other extension
 * that shares a pickup group with the caller's extension; directed pickup (`**EXT`) one ringing that
 * extension. The oldest ringing call wins; its legs get CANCEL and its caller is bridged to the picker
 * (call/pickable.ts, connect.ts). Only the customer's own calls ringing on this node are seen.
 */
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
