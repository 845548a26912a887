/**
 * A customer's PBX feature codes (issue 37 part C; docs/pbx.md "Feature codes"): what an extension
 * may dial instead of a number, the park lot and its slots, and how long a call stays parked. One
 * declaration of the settings, their defaults and the one function that reads a dialled string.
 */

/** The settings of one customer (`pbx_settings.feature_codes`; the API's PbxSettings). */
export interface FeatureCodes {
  /** Group pickup: answers a call ringing any extension that shares a pickup group with the caller. */
  readonly group_pickup: string;
  /** Directed pickup: this prefix and an extension answer a call ringing that extension. */
  readonly directed_pickup_prefix: string;
  /** The park lot: a blind transfer to it parks the other party; a dial to it parks the caller. */
  readonly park_lot: string;
  /** The slots, numbered first..last (inclusive); dialling one retrieves the call parked there. */
  readonly park_slot_first: number;
  readonly park_slot_last: number;
  /** Seconds a call stays parked before the parker is rung back. */
  readonly park_timeout_sec: number;
  /** When the parker does not answer the ring-back (or there is none): hang up the parked call. */
  readonly park_fallback: 'hangup';
  /** Voicemail: the caller's own box, and any box (with its PIN). */
  readonly voicemail_own: string;
  readonly voicemail_any: string;
  /**
   * Supervisor (docs/pbx.md "Supervisor"): each prefix and an extension listens to, whispers to or
   * barges into that extension's live call. Only the extensions in supervisor_extensions may.
   */
  readonly supervise_listen_prefix: string;
  readonly supervise_whisper_prefix: string;
  readonly supervise_barge_prefix: string;
  readonly supervisor_extensions: readonly string[];
}

export const DEFAULT_FEATURE_CODES: FeatureCodes = {
  group_pickup: '*8',
  directed_pickup_prefix: '**',
  park_lot: '700',
  park_slot_first: 701,
  park_slot_last: 720,
  park_timeout_sec: 45,
  park_fallback: 'hangup',
  voicemail_own: '*97',
  voicemail_any: '*98',
  supervise_listen_prefix: '*1',
  supervise_whisper_prefix: '*2',
  supervise_barge_prefix: '*3',
  supervisor_extensions: [],
};

/** At most this many slots per customer (the slot table is scanned in order for a free one). */
export const MAX_PARK_SLOTS = 100;

/** What a dialled string means, when it is a feature code. */
export type FeatureCode =
  | { readonly kind: 'group_pickup' }
  | { readonly kind: 'directed_pickup'; readonly extension: string }
  | { readonly kind: 'park' }
  | { readonly kind: 'park_slot'; readonly slot: number }
  | { readonly kind: 'voicemail_own' }
  | { readonly kind: 'voicemail_any' }
  | { readonly kind: 'supervise'; readonly mode: 'listen' | 'whisper' | 'barge'; readonly extension: string };

export type FeatureCodeKind = FeatureCode['kind'];

/** The feature code `dialled` names under `codes`, or null (then it is routed as a number or an extension). */
export function matchFeatureCode(codes: FeatureCodes, dialled: string): FeatureCode | null {
  if (!dialled) return null;
  if (dialled === codes.group_pickup) return { kind: 'group_pickup' };
  if (dialled === codes.park_lot) return { kind: 'park' };
  if (dialled === codes.voicemail_own) return { kind: 'voicemail_own' };
  if (dialled === codes.voicemail_any) return { kind: 'voicemail_any' };
  const p = codes.directed_pickup_prefix;
  if (p && dialled.length > p.length && dialled.startsWith(p)) return { kind: 'directed_pickup', extension: dialled.slice(p.length) };
  for (const [mode, prefix] of supervisePrefixes(codes)) {
    if (prefix && dialled.length > prefix.length && dialled.startsWith(prefix)) return { kind: 'supervise', mode, extension: dialled.slice(prefix.length) };
  }
  if (/^\d{1,6}$/.test(dialled)) {
    const n = Number(dialled);
    if (n >= codes.park_slot_first && n <= codes.park_slot_last && String(n) === dialled) return { kind: 'park_slot', slot: n };
  }
  return null;
}

const supervisePrefixes = (c: FeatureCodes) =>
  [
    ['listen', c.supervise_listen_prefix],
    ['whisper', c.supervise_whisper_prefix],
    ['barge', c.supervise_barge_prefix],
  ] as const;

/** True when `slot` is one of the customer's park slots. */
export function isParkSlot(codes: FeatureCodes, slot: number): boolean {
  return Number.isInteger(slot) && slot >= codes.park_slot_first && slot <= codes.park_slot_last;
}

/**
 * The slot a name is (as a phone's BLF key or a SUBSCRIBE's Request-URI names it: the number
 * written plainly, `701`, not `0701`), when it is one of the customer's slots; else null.
 */
export function slotNamed(codes: FeatureCodes, name: string): number | null {
  const n = slotNumberOf(name);
  return n !== null && isParkSlot(codes, n) ? n : null;
}

/** The number `name` writes as a slot would be written (digits, no leading zero), or null: read before any slot range. */
export function slotNumberOf(name: string): number | null {
  return /^\d{1,6}$/.test(name) && String(Number(name)) === name ? Number(name) : null;
}

/**
 * Why a set of codes cannot be used (two features on one code, a code that is a slot, a slot range
 * too long), or null. The API refuses such settings with 400 before anything is stored.
 */
export function featureCodesProblem(c: FeatureCodes): string | null {
  if (c.park_slot_first > c.park_slot_last) return 'park_slot_first must not be above park_slot_last';
  if (c.park_slot_last - c.park_slot_first + 1 > MAX_PARK_SLOTS) return `at most ${MAX_PARK_SLOTS} park slots`;
  const codes: [string, string][] = [
    ['group_pickup', c.group_pickup],
    ['park_lot', c.park_lot],
    ['voicemail_own', c.voicemail_own],
    ['voicemail_any', c.voicemail_any],
  ];
  const prefixes: [string, string][] = [
    ['directed_pickup_prefix', c.directed_pickup_prefix],
    ['supervise_listen_prefix', c.supervise_listen_prefix],
    ['supervise_whisper_prefix', c.supervise_whisper_prefix],
    ['supervise_barge_prefix', c.supervise_barge_prefix],
  ];
  // a prefix that starts another would take the other's every dial
  for (const [n1, p1] of prefixes) for (const [n2, p2] of prefixes) if (n1 !== n2 && p2.startsWith(p1)) return `${n2} starts with ${n1} (${p1})`;
  for (const [name, code] of codes) for (const [pn, p] of prefixes.slice(1)) if (code.startsWith(p)) return `${name} starts with ${pn} (${p})`;
  const seen = new Map<string, string>();
  for (const [name, code] of codes) {
    const other = seen.get(code);
    if (other) return `${name} and ${other} have the same code ${code}`;
    seen.set(code, name);
    const m = matchFeatureCode({ ...c, park_slot_first: 1, park_slot_last: 0 }, code);
    if (m?.kind === 'directed_pickup') return `${name} starts with the directed pickup prefix`;
    if (/^\d+$/.test(code) && Number(code) >= c.park_slot_first && Number(code) <= c.park_slot_last) return `${name} is one of the park slots`;
  }
  return null;
}
