/**
 * The park slot table (docs/pbx.md "Park"): one Redis hash per customer, `park:<customer>`, slot →
 * the parked call, so every node sees which slots are taken and two nodes never park into one slot
 * (the first free slot is claimed in one script). A slot is freed only by the call that holds it.
 */
import type { Redis } from 'ioredis';
import type { Address } from '../address';
import type { Db } from '../db/knex';
import { PresenceStore } from '../presence/store';
import { callsRepo } from '../repos/calls';

/** A parked call as stored and as the API shows it (ParkedCall). */
export interface ParkedCall {
  readonly slot: number;
  readonly call_id: string;
  readonly customer_id: string;
  /** The node that owns the parked call (its media and dialog). */
  readonly node_id: string;
  /** Who parked it (rung back on timeout); null: the call parked itself (dial to the lot, flow, API). */
  readonly parker: Address | null;
  /** RFC 3339. */
  readonly tm_parked: string;
  readonly tm_timeout: string;
}

const key = (prefix: string, customerId: string) => `${prefix}park:${customerId}`;

/** Claims the first free slot of first..last for ARGV[3] (the record with "slot":0 in place of the slot). */
const CLAIM = `
for s = tonumber(ARGV[1]), tonumber(ARGV[2]) do
  local rec = string.gsub(ARGV[3], '"slot":0,', '"slot":' .. s .. ',', 1)
  if redis.call('HSETNX', KEYS[1], tostring(s), rec) == 1 then return s end
end
return 0`;

/** Deletes slot ARGV[1] when it still holds call ARGV[2]. */
const RELEASE = `
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return 0 end
local ok, rec = pcall(cjson.decode, v)
if ok and rec.call_id == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) return 1 end
return 0`;

export function parkSlots(redis: Redis, prefix: string) {
  return {
    /** The first free slot of first..last, claimed for the call; null when all are taken. */
    async claim(first: number, last: number, rec: Omit<ParkedCall, 'slot'>): Promise<ParkedCall | null> {
      const withSlot: ParkedCall = { slot: 0, ...rec };
      const slot = Number(await redis.eval(CLAIM, 1, key(prefix, rec.customer_id), first, last, JSON.stringify(withSlot)));
      return slot ? { ...withSlot, slot } : null;
    },
    /** Frees the slot if `callId` still holds it; true when it did. */
    async release(customerId: string, slot: number, callId: string): Promise<boolean> {
      return Number(await redis.eval(RELEASE, 1, key(prefix, customerId), String(slot), callId)) === 1;
    },
    async get(customerId: string, slot: number): Promise<ParkedCall | null> {
      const v = await redis.hget(key(prefix, customerId), String(slot));
      return v ? (JSON.parse(v) as ParkedCall) : null;
    },
    /** The customer's parked calls, by slot. */
    async list(customerId: string): Promise<ParkedCall[]> {
      const all = await redis.hgetall(key(prefix, customerId));
      return Object.values(all)
        .map((v) => JSON.parse(v) as ParkedCall)
        .sort((a, b) => a.slot - b.slot);
    },
    /**
     * Frees the slots whose call has ended (its node died before it could free them: the node sweeper
     * ends such calls, not their slots); run before a slot is chosen or the slots are listed. No node's
     * park service sees such a slot free, so its busy lamp (the slot's published presence state) is
     * turned off here.
     */
    async sweepEnded(db: Db, customerId: string): Promise<void> {
      for (const p of await this.list(customerId)) {
        const row = await callsRepo(db).get(p.call_id);
        if ((!row || row.status === 'hangup') && (await this.release(customerId, p.slot, p.call_id))) await new PresenceStore(redis, prefix).publishState(customerId, String(p.slot), []);
      }
    },
    /** The slot a call is parked in, if any. */
    async ofCall(customerId: string, callId: string): Promise<ParkedCall | null> {
      return (await this.list(customerId)).find((p) => p.call_id === callId) ?? null;
    },
  };
}

export type ParkSlots = ReturnType<typeof parkSlots>;
