// Known SIP scanner detection by User-Agent (and the "From" display names some tools use).
import type { SipRequest } from '../message';

export class ScannerFilter {
  private readonly needles: string[];

  constructor(blocklist: string[]) {
    this.needles = blocklist.map((s) => s.toLowerCase()).filter(Boolean);
  }

  /** The matched blocklist entry, or undefined when the request looks legitimate. */
  match(req: SipRequest): string | undefined {
    if (!this.needles.length) return undefined;
    const ua = req.headers.get('User-Agent')?.toLowerCase();
    if (ua) for (const n of this.needles) if (ua.includes(n)) return n;
    // sipvicious and friends sometimes omit User-Agent but leave their name in From
    const from = req.headers.get('From')?.toLowerCase();
    if (from) for (const n of this.needles) if (from.includes(`"${n}"`)) return n;
    return undefined;
  }
}
