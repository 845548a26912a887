/**
 * The local inventory of normal (PSTN) numbers. There is no number marketplace behind this platform:
 * the operator lists the numbers its providers have assigned to it, and customers "buy" them from
 * that list. Without configuration the inventory holds fictional numbers (NANP 555-01XX and Ofcom's
 * drama range) so development and tests work.
 *
 * Configure with NUMBER_INVENTORY (JSON) or NUMBER_INVENTORY_FILE (path to the same JSON):
 *   [{"from":"+14155550100","to":"+14155550199","country":"US","region":"CA",
 *     "provider_id":"<uuid of a provider>","features":["voice","sms"]}]
 * `to` is optional (a single number); a range holds at most 100000 numbers.
 */
import fs from 'node:fs';
import { isE164 } from './e164';
import { EMPTY_UUID, isUuid } from '../ids';

export const NUMBER_FEATURES = ['emergency', 'fax', 'mms', 'sms', 'voice'] as const;
export type NumberFeature = (typeof NUMBER_FEATURES)[number];

export interface InventoryEntry {
  from: string;
  to: string;
  country: string;
  region: string;
  postal_code: string;
  features: NumberFeature[];
  provider_id: string;
}

/** What GET /available_numbers returns (NumberManagerAvailableNumber). */
export interface AvailableNumber {
  number: string;
  country: string;
  region: string;
  postal_code: string;
  features: NumberFeature[];
}

const MAX_RANGE = 100_000;

export const DEFAULT_INVENTORY: InventoryEntry[] = [
  { from: '+14155550100', to: '+14155550199', country: 'US', region: 'CA', postal_code: '', features: ['voice', 'sms'], provider_id: EMPTY_UUID },
  { from: '+12125550100', to: '+12125550199', country: 'US', region: 'NY', postal_code: '', features: ['voice', 'sms'], provider_id: EMPTY_UUID },
  { from: '+442079460000', to: '+442079460999', country: 'GB', region: 'London', postal_code: '', features: ['voice'], provider_id: EMPTY_UUID },
];

export class InventoryError extends Error {}

/** Validates raw JSON into entries; throws InventoryError naming the bad entry. */
export function parseInventory(raw: unknown): InventoryEntry[] {
  if (!Array.isArray(raw)) throw new InventoryError('number inventory must be a JSON array');
  return raw.map((e, i) => {
    const where = `number inventory entry ${i}`;
    if (!e || typeof e !== 'object') throw new InventoryError(`${where}: not an object`);
    const o = e as Record<string, unknown>;
    const from = o.from;
    const to = o.to ?? o.from;
    if (!isE164(from) || !isE164(to)) throw new InventoryError(`${where}: from/to must be E.164`);
    if (from.length !== to.length || BigInt(to.slice(1)) < BigInt(from.slice(1))) {
      throw new InventoryError(`${where}: to must be >= from with the same length`);
    }
    if (BigInt(to.slice(1)) - BigInt(from.slice(1)) >= BigInt(MAX_RANGE)) throw new InventoryError(`${where}: range too large`);
    if (typeof o.country !== 'string' || !/^[A-Za-z]{2}$/.test(o.country)) throw new InventoryError(`${where}: country must be ISO 3166 alpha-2`);
    const features = (o.features ?? ['voice']) as unknown[];
    if (!Array.isArray(features) || !features.every((f) => (NUMBER_FEATURES as readonly unknown[]).includes(f))) {
      throw new InventoryError(`${where}: features must be a subset of ${NUMBER_FEATURES.join(', ')}`);
    }
    const provider = o.provider_id ?? EMPTY_UUID;
    if (!isUuid(provider)) throw new InventoryError(`${where}: provider_id must be a UUID`);
    return {
      from,
      to,
      country: o.country.toUpperCase(),
      region: typeof o.region === 'string' ? o.region : '',
      postal_code: typeof o.postal_code === 'string' ? o.postal_code : '',
      features: features as NumberFeature[],
      provider_id: provider.toLowerCase(),
    };
  });
}

export function loadInventory(env: NodeJS.ProcessEnv = process.env): InventoryEntry[] {
  if (env.NUMBER_INVENTORY_FILE) return parseInventory(JSON.parse(fs.readFileSync(env.NUMBER_INVENTORY_FILE, 'utf8')));
  if (env.NUMBER_INVENTORY) return parseInventory(JSON.parse(env.NUMBER_INVENTORY));
  return DEFAULT_INVENTORY;
}

export class NumberInventory {
  constructor(readonly entries: InventoryEntry[]) {}

  /** The entry that holds `number`, or null when the inventory does not have it. */
  find(number: string): InventoryEntry | null {
    if (!isE164(number)) return null;
    const n = BigInt(number.slice(1));
    for (const e of this.entries) {
      if (e.from.length === number.length && n >= BigInt(e.from.slice(1)) && n <= BigInt(e.to.slice(1))) return e;
    }
    return null;
  }

  /**
   * Up to `limit` numbers of `country` for which `taken` says no, in inventory order.
   * `taken` gets batches so the caller can ask the database once per batch.
   */
  async available(country: string, limit: number, taken: (numbers: string[]) => Promise<Set<string>>): Promise<AvailableNumber[]> {
    const out: AvailableNumber[] = [];
    const cc = country.toUpperCase();
    for (const e of this.entries) {
      if (e.country !== cc) continue;
      const start = BigInt(e.from.slice(1));
      const end = BigInt(e.to.slice(1));
      for (let cur = start; cur <= end && out.length < limit;) {
        const batch: string[] = [];
        for (; cur <= end && batch.length < 500; cur++) batch.push('+' + cur.toString().padStart(e.from.length - 1, '0'));
        const busy = await taken(batch);
        for (const number of batch) {
          if (out.length >= limit) break;
          if (!busy.has(number)) out.push({ number, country: e.country, region: e.region, postal_code: e.postal_code, features: [...e.features] });
        }
      }
      if (out.length >= limit) break;
    }
    return out;
  }
}

let current: NumberInventory | null = null;
/** The process-wide inventory, read from the environment on first use. */
export function numberInventory(): NumberInventory {
  current ??= new NumberInventory(loadInventory());
  return current;
}
/** Tests and operators may swap it (null: read the environment again). */
export function setNumberInventory(inv: NumberInventory | null): void {
  current = inv;
}
