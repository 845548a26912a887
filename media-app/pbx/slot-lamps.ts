/**
 * Busy lamp keys on park slots (docs/pbx.md "Park"): a desk phone's key for slot 701 subscribes
 * `Event: dialog` to sip:701@{its domain}. Every change of a slot's state (ParkService.slotState) is
 * published to presence as the slot's whole dialog list: one `confirmed` dialog while a call is parked
 * (id the parked call's, direction `recipient`, since the park, remote the parked party), none once it
 * is free (presence shows the dialog once as `terminated`). Presence serves every slot number of the
 * customer's range, so a key subscribed before its slot was ever used is accepted and shows it idle.
 *
 * Publications of one slot go out in the order the changes happened; a failed one is logged, never
 * thrown (the park itself goes on).
 */
import type { Logger } from 'pino';
import type { Knex } from '../../core/db/knex';
import type { Address } from '../../core/address';
import { registrationDomain } from '../../core/extensions/domain';
import { slotNamed } from '../../core/pbx/feature-codes';
import type { ParkedCall } from '../../core/pbx/park-slots';
import { pbxSettingsRepo } from '../../core/pbx/settings';
import type { DialogEntry } from '../../core/presence/store';
import { customerDomainsRepo } from '../../core/repos/extensions';
import type { CallFactory } from '../call/factory';
import { partyOf } from '../presence/call-source';
import type { PresenceService } from '../presence';
import type { ParkService, SlotState } from './park';

export interface SlotLampDeps {
  db: Knex;
  factory: CallFactory;
  sipDomain: string;
  logger: Logger;
}

/** Publishes the slots' states to presence from now on; the returned function stops. */
export function publishSlotLamps(park: ParkService, presence: PresenceService, d: SlotLampDeps): () => void {
  const unserve = presence.serveResources(async (customerId, name) => slotNamed(await pbxSettingsRepo(d.db).get(customerId), name) !== null);
  // one chain per slot: a quick park then free is never published the other way round
  const chains = new Map<string, Promise<void>>();

  /** The parked party as the lamp names it (the call's other end: its caller, or whom it called). */
  const remoteOf = async (parked: ParkedCall): Promise<DialogEntry['remote']> => {
    const call = d.factory.get(parked.call_id);
    if (!call) return undefined;
    const party: Address = call.row.direction === 'incoming' ? call.row.source : call.row.destination;
    const label = await customerDomainsRepo(d.db).getLabel(parked.customer_id);
    return partyOf(party, label ? registrationDomain(label, d.sipDomain) : d.sipDomain);
  };

  const dialogsOf = async (state: SlotState, parked: ParkedCall): Promise<DialogEntry[]> => {
    if (state === 'free') return [];
    const remote = await remoteOf(parked);
    const since = Date.parse(parked.tm_parked);
    return [{ id: parked.call_id, state: 'confirmed', direction: 'recipient', ...(remote ? { remote } : {}), ...(Number.isFinite(since) ? { since } : {}) }];
  };

  const onChange = (customerId: string, slot: number, state: SlotState, parked: ParkedCall) => {
    const key = `${customerId}:${slot}`;
    const next = (chains.get(key) ?? Promise.resolve())
      .then(async () => presence.publishState(customerId, String(slot), await dialogsOf(state, parked)))
      .catch((err: Error) => d.logger.warn({ err: err.message, customer: customerId, slot, state }, 'park slot state not published to presence'));
    chains.set(key, next);
    void next.then(() => {
      if (chains.get(key) === next) chains.delete(key);
    });
  };
  park.slotState.on('change', onChange);
  return () => {
    park.slotState.off('change', onChange);
    unserve();
  };
}
