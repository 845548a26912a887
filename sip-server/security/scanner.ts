// Known SIP scanner detection by the product tokens of User-Agent (RFC 3261 20.41: product / comment,
// product = token ["/" version]), and the quoted From display names some tools use. A blocklist entry
// matches a product name as a whole, case-insensitively: "sipcli" drops "sipcli/v1.8" and
// "Foo sipcli/1.0", never "mysipclient" or "sipcli-monitor"; comments ("(...)") are not looked at.
import type { SipRequest } from '../message';

/** The product names of a User-Agent/Server value, lower-cased, comments skipped. */
export function productNames(value: string): string[] {
  const names: string[] = [];
  let depth = 0;
  let word = '';
  const flush = (): void => {
    if (word) names.push(word.split('/', 1)[0]!.toLowerCase());
    word = '';
  };
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!;
    if (depth > 0) {
      if (ch === '\\')
        i++; // quoted-pair inside a comment
      else if (ch === '(') depth++;
      else if (ch === ')') depth--;
    } else if (ch === '(') {
      flush();
      depth = 1;
    } else if (ch === ' ' || ch === '\t') flush();
    else word += ch;
  }
  flush();
  return names.filter(Boolean);
}

export interface ScannerMatch {
  /** the blocklist entry that matched */
  entry: string;
  /** the User-Agent as sent (or the From display name), for the log */
  ua: string;
}

export class ScannerFilter {
  private readonly names: Set<string>;

  constructor(blocklist: readonly string[]) {
    this.names = new Set(blocklist.map((s) => s.trim().toLowerCase()).filter(Boolean));
  }

  /** The matched blocklist entry, or undefined when the request looks legitimate. */
  match(req: SipRequest): ScannerMatch | undefined {
    if (!this.names.size) return undefined;
    const ua = req.headers.get('User-Agent');
    if (ua) for (const n of productNames(ua)) if (this.names.has(n)) return { entry: n, ua };
    // sipvicious and friends sometimes omit User-Agent but leave their name as the From display name
    const display = /^\s*"((?:[^"\\]|\\.)*)"/.exec(req.headers.get('From') ?? '')?.[1];
    if (display && this.names.has(display.trim().toLowerCase())) return { entry: display.trim().toLowerCase(), ua: ua ?? `From "${display}"` };
    return undefined;
  }
}

/**
 * Logs dropped scanner requests without letting a scanner flood the log: per source address, the
 * first drop is logged, then at most one line per `intervalMs` telling how many were dropped since.
 * At most `maxSources` addresses are remembered; past that, drops are counted in one line per interval.
 * The remembered addresses are swept at most once per interval: a flood from more addresses than that
 * (spoofed UDP sources cost nothing) must not walk all of them on every dropped packet.
 */
export class ScannerDropLog {
  private readonly seen = new Map<string, { at: number; suppressed: number }>();
  private overflow = { at: 0, suppressed: 0 };
  private sweptAt = -Infinity;
  /** How many times the remembered sources were walked (at most once an interval). */
  sweeps = 0;

  constructor(
    private readonly write: (fields: { src: string; ua: string; match: string; suppressed?: number }, msg: string) => void,
    private readonly intervalMs = 60_000,
    private readonly maxSources = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  note(src: string, m: ScannerMatch): void {
    const t = this.now();
    const ua = m.ua.length > 200 ? `${m.ua.slice(0, 200)}…` : m.ua;
    let s = this.seen.get(src);
    if (!s) {
      if (this.seen.size >= this.maxSources) this.prune(t);
      if (this.seen.size >= this.maxSources) {
        if (t - this.overflow.at < this.intervalMs) {
          this.overflow.suppressed++;
          return;
        }
        this.write({ src, ua, match: m.entry, suppressed: this.overflow.suppressed }, 'scanner dropped (many sources)');
        this.overflow = { at: t, suppressed: 0 };
        return;
      }
      s = { at: t, suppressed: 0 };
      this.seen.set(src, s);
      this.write({ src, ua, match: m.entry }, 'scanner dropped');
      return;
    }
    if (t - s.at < this.intervalMs) {
      s.suppressed++;
      return;
    }
    this.write({ src, ua, match: m.entry, suppressed: s.suppressed }, 'scanner dropped');
    s.at = t;
    s.suppressed = 0;
  }

  private prune(t: number): void {
    if (t - this.sweptAt < this.intervalMs) return;
    this.sweptAt = t;
    this.sweeps++;
    for (const [k, v] of this.seen) if (t - v.at >= this.intervalMs) this.seen.delete(k);
  }
}
