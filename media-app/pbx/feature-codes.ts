/**
 * The feature-code dispatcher (docs/pbx.md "Feature codes"): what an extension dialled is read
 * against its customer's codes (core/pbx/feature-codes.ts) before any number or extension lookup
 * (inbound/router.ts). One line per feature in FEATURES; a code without a handler here is routed
 * as any dialled string is.
 */
import type { FeatureCode, FeatureCodeKind, FeatureCodes } from '../../core/pbx/feature-codes';
import type { Address } from '../../core/repos/calls';
import type { ExtensionRow } from '../../core/repos/extensions';
import { voicemailBoxesRepo } from '../../core/voicemail/boxes';
import type { CallSession } from '../call/session';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import type { ParkService } from './park';
import { findRemoteRinging, findRinging, type PickupTarget } from './pickup';
import { announceSlot } from './announce';
import { SuperviseError, superviseRefusal, type SupervisorService } from './supervise';
import { remoteCallsOfExtension, throughLeg } from './remote';
import { extensionDetail } from '../xnode/pbx-token';

/** What a handler gets: the INVITE, the caller's extension, and a way to answer it as a call. */
export interface FeatureCall {
  readonly req: SrfRequest;
  readonly res: SrfResponse;
  readonly ext: ExtensionRow;
  readonly park: ParkService;
  readonly supervisor: SupervisorService;
  /** The customer's codes (who may supervise). */
  readonly codes: FeatureCodes;
  /** Makes the call (ringing, not answered); null when it could not be (already answered with the refusal). */
  offer(destination: Address): Promise<CallSession | null>;
  /** Makes the call (ringing) and answers it; null when it could not be (already answered with the refusal). */
  answer(destination: Address): Promise<CallSession | null>;
  /** Runs these flow actions (plain, validated there) on the answered call; the call is hung up when they cannot start. */
  runActions(call: CallSession, actions: unknown[]): Promise<void>;
}

type Handler<K extends FeatureCodeKind> = (c: FeatureCall, code: Extract<FeatureCode, { kind: K }>) => Promise<void>;

/** Answers a pickup: the oldest call ringing the target's extensions is bridged to the picker. */
async function pickup(c: FeatureCall, target: PickupTarget, dialled: string): Promise<void> {
  const ringing = await findRinging(c.park.deps, target);
  if (!ringing) {
    // none here: the oldest ringing on another node, through a PBX leg (pickup-leg.ts)
    const remote = await findRemoteRinging(c.park.deps, target);
    if (!remote.length) return void c.res.send(404, 'Nothing To Pick Up');
    const asks = remote.map((r) => ({ node: r.nodeId, ask: { kind: 'pickup' as const, subjectId: r.masterCallId, detail: extensionDetail(r.extension) } }));
    return throughLeg(c, asks, { type: 'extension', target: dialled, name: 'pickup' });
  }
  const call = await c.answer({ type: 'extension', target: dialled, name: 'pickup' });
  if (!call) return;
  // answered, or picked by someone else, meanwhile: the picker has nothing to talk to
  if (!ringing.take(call)) await call.hangup('nothing_to_pick_up');
}

/**
 * The voice menu of a box (flow action voicemail_main, then hang up): the caller's own box (*97),
 * or any box, its number keyed in (*98). Both ask the PIN (FreePBX's *97; Asterisk's
 * VoiceMailMain without the `s` option): a phone left unattended does not open its box.
 */
async function voicemailMenu(c: FeatureCall, boxId: string | null): Promise<void> {
  const call = await c.answer({ type: 'extension', target: 'voicemail', name: 'voicemail' });
  if (!call) return;
  await c.runActions(call, [{ type: 'voicemail_main', option: boxId ? { box_id: boxId } : {} }, { type: 'hangup' }]);
}

const FEATURES: { readonly [K in FeatureCodeKind]?: Handler<K> } = {
  group_pickup: (c) => pickup(c, { kind: 'group', picker: c.ext }, '*8'),
  directed_pickup: (c, code) => pickup(c, { kind: 'directed', customerId: c.ext.customer_id, extension: code.extension }, `**${code.extension}`),
  park: async (c) => {
    // a dial to the lot parks the caller itself (Asterisk's Park()): it hears its slot, then the music
    const call = await c.answer({ type: 'extension', target: 'park', name: 'park' });
    if (!call) return;
    const rec = await c.park.park(call, { parker: null, leaving: null, announce: (slot) => announceSlot(call, slot) });
    if (!rec) await call.hangup('park_full');
  },
  park_slot: async (c, code) => {
    const customerId = c.ext.customer_id;
    const here = c.park.local(customerId, code.slot);
    if (!here) {
      // an empty slot is refused before any call exists; a call parked on another node is asked for
      // through a PBX leg to that node (docs/pbx.md "Park", "Across nodes")
      const rec = await c.park.slotRecord(customerId, code.slot);
      if (!rec || rec.node_id === c.park.deps.calls.nodeId) return void c.res.send(404, 'Parking Slot Empty');
      const destination: Address = { type: 'extension', target: String(code.slot), name: 'park slot' };
      return throughLeg(c, [{ node: rec.node_id, ask: { kind: 'park', subjectId: rec.call_id, detail: String(rec.slot) } }], destination);
    }
    const call = await c.answer({ type: 'extension', target: String(code.slot), name: 'park slot' });
    if (!call) return;
    if ((await c.park.retrieve(customerId, code.slot, call)) !== 'retrieved') await call.hangup('park_slot_empty');
  },
  voicemail_own: async (c) => {
    // no box of the caller's extension: refused before any call exists (the phone shows why)
    const box = await voicemailBoxesRepo(c.park.deps.db).byExtension(c.ext.customer_id, c.ext.id);
    if (!box) return void c.res.send(404, 'No Voicemail Box');
    await voicemailMenu(c, box.id);
  },
  voicemail_any: (c) => voicemailMenu(c, null),
  supervise: async (c, code) => {
    // only the extensions the customer named supervisors (pbx_settings.supervisor_extensions)
    if (!c.codes.supervisor_extensions.includes(c.ext.extension)) return void c.res.send(403, 'Not A Supervisor');
    const target = c.supervisor.callOfExtension(c.ext.customer_id, code.extension);
    if (!target) {
      // none here: the extension's calls on other nodes, asked for through a PBX leg (accept-leg.ts)
      const remote = await remoteCallsOfExtension(c.park.deps, c.ext.customer_id, code.extension);
      if (!remote.length) return void c.res.send(404, 'Nothing To Supervise');
      const asks = remote.map((r) => ({ node: r.node_id, ask: { kind: 'supervise' as const, subjectId: r.id, detail: code.mode } }));
      return throughLeg(c, asks, { type: 'extension', target: code.extension, name: `supervise ${code.mode}` });
    }
    try {
      c.supervisor.check(target);
    } catch (err) {
      if (err instanceof SuperviseError) return void c.res.send(...superviseRefusal(err.why));
      throw err;
    }
    const call = await c.answer({ type: 'extension', target: code.extension, name: `supervise ${code.mode}` });
    if (!call) return;
    await c.supervisor.start(target, call, code.mode, null).catch(async () => call.hangup('nothing_to_supervise'));
  },
};

/** Runs the handler of `code`; false when there is none (the dialled string is routed as usual). */
export async function dispatchFeature(c: FeatureCall, code: FeatureCode): Promise<boolean> {
  const handler = FEATURES[code.kind] as Handler<FeatureCodeKind> | undefined;
  if (!handler) return false;
  await handler(c, code);
  return true;
}
