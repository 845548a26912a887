/**
 * The busy-lamp state of a customer's extensions and park slots as the console's BLF page shows it
 * (our extension, docs/pbx.md "Console"): read from what the presence subsystem already keeps in
 * Redis (core/presence/store.ts: every node's call legs and the published slot states) and from the
 * registrar's bindings (core/registrar/bindings.ts), the same two sources the `dialog` and `presence`
 * event packages read, so the page and a desk phone's lamp agree.
 *
 *   const states = extensionStates(ctx);
 *   await states.all(customerId);              // { extensions: [...], park_slots: [...] }
 *   await states.ofExtension(customerId, '201'); // one extension, or null
 *   await states.ofSlot(customerId, '701');      // one park slot of the customer's range, or null
 */
import type { AppContext } from '../context';
import { PresenceStore, type DialogEntry } from '../../core/presence/store';
import { aorOf, isRegistered } from '../../core/registrar/bindings';
import { extensionsRepo, type ExtensionRow } from '../../core/repos/extensions';
import { pbxSettingsRepo } from '../../core/pbx/settings';
import { slotNamed, slotNumberOf } from '../../core/pbx/feature-codes';

/** What a lamp shows: the most telling live dialog wins (a call up over one ringing over one dialling). */
export const LAMP_STATES = ['idle', 'dialing', 'ringing', 'in_call'] as const;
export type LampState = (typeof LAMP_STATES)[number];

export interface DialogJson {
  id: string;
  state: DialogEntry['state'];
  direction: 'initiator' | 'recipient' | '';
  remote: string;
  remote_name: string;
  /** RFC 3339, '' when unknown. */
  tm_start: string;
}

export interface ExtensionStateJson {
  id: string;
  extension: string;
  name: string;
  registered: boolean;
  state: LampState;
  dialogs: DialogJson[];
}

export interface SlotStateJson {
  slot: number;
  state: 'free' | 'occupied';
  dialogs: DialogJson[];
}

/** At most this many extensions are read (the page is a lamp field, not a directory). */
export const MAX_EXTENSIONS = 1000;

function lamp(dialogs: readonly DialogEntry[]): LampState {
  const live = dialogs.filter((d) => d.state !== 'terminated');
  if (live.some((d) => d.state === 'confirmed')) return 'in_call';
  if (live.some((d) => d.direction === 'recipient')) return 'ringing';
  return live.length ? 'dialing' : 'idle';
}

function dialogJson(d: DialogEntry): DialogJson {
  return {
    id: d.id,
    state: d.state,
    direction: d.direction ?? '',
    remote: d.remote?.uri ?? '',
    remote_name: d.remote?.display ?? '',
    tm_start: d.since ? new Date(d.since).toISOString() : '',
  };
}

export function extensionStates(ctx: AppContext) {
  const store = new PresenceStore(ctx.redis, ctx.config.redisKeyPrefix);
  const prefix = ctx.config.redisKeyPrefix;

  async function stateOf(e: ExtensionRow): Promise<ExtensionStateJson> {
    const [dialogs, registered] = await Promise.all([store.dialogs(e.customer_id, e.extension), isRegistered(ctx.redis, prefix, aorOf(e.username, e.domain_name))]);
    const live = dialogs.filter((d) => d.state !== 'terminated');
    return { id: e.id, extension: e.extension, name: e.name, registered, state: lamp(live), dialogs: live.map(dialogJson) };
  }

  async function slotState(customerId: string, slot: number): Promise<SlotStateJson> {
    const live = (await store.dialogs(customerId, String(slot))).filter((d) => d.state !== 'terminated');
    return { slot, state: live.length ? 'occupied' : 'free', dialogs: live.map(dialogJson) };
  }

  return {
    async all(customerId: string): Promise<{ extensions: ExtensionStateJson[]; park_slots: SlotStateJson[] }> {
      const rows = await extensionsRepo(ctx.db).allOf(customerId, MAX_EXTENSIONS);
      const codes = await pbxSettingsRepo(ctx.db).get(customerId);
      const slots: number[] = [];
      for (let s = codes.park_slot_first; s <= codes.park_slot_last; s++) slots.push(s);
      return {
        extensions: await Promise.all(rows.map(stateOf)),
        park_slots: await Promise.all(slots.map((s) => slotState(customerId, s))),
      };
    },
    /** The extension named `resource` of the customer, or null when the resource is none (a slot, a box). */
    async ofExtension(customerId: string, resource: string): Promise<ExtensionStateJson | null> {
      const e = await extensionsRepo(ctx.db).getByExtension(customerId, resource);
      return e ? stateOf(e) : null;
    },
    /** The park slot named `resource` (a number of the customer's slot range), or null. */
    async ofSlot(customerId: string, resource: string): Promise<SlotStateJson | null> {
      if (slotNumberOf(resource) === null) return null; // no slot by its shape: the settings are not read
      const slot = slotNamed(await pbxSettingsRepo(ctx.db).get(customerId), resource);
      return slot === null ? null : slotState(customerId, slot);
    },
  };
}
