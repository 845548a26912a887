/** The variables of one activeflow: custom ones and the `svc.` system ones the runner keeps current. */
import type { Address, CallInfo } from './call-port';

export class Variables {
  private readonly map = new Map<string, string>();
  /** Last snapshot, reused until a variable changes (records are built on every action). */
  private cached: Record<string, string> | null = null;

  constructor(initial?: Record<string, string>) {
    if (initial) for (const [k, v] of Object.entries(initial)) this.map.set(k, v);
  }

  get(name: string): string | undefined {
    return this.map.get(name);
  }

  set(name: string, value: string): void {
    if (this.map.get(name) === value) return;
    this.map.set(name, value);
    this.cached = null;
  }

  /** A lookup function for substitute(). */
  readonly lookup = (name: string): string | undefined => this.map.get(name);

  /** A plain object of every variable; treat it as read-only (it is shared until the next change). */
  snapshot(): Record<string, string> {
    return (this.cached ??= Object.fromEntries(this.map));
  }

  /** Custom (non-svc.) variables only: what an on_complete chain carries over. */
  custom(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of this.map) if (!k.startsWith('svc.')) out[k] = v;
    return out;
  }

  setAddress(prefix: string, a: Address): void {
    for (const f of ['type', 'target', 'target_name', 'name', 'detail'] as const) this.set(`${prefix}.${f}`, a[f] ?? '');
  }

  /** svc.call.* from the call (VoIPbin's built-in variables). */
  setCall(c: CallInfo): void {
    this.set('svc.call.id', c.id);
    this.set('svc.call.direction', c.direction);
    this.set('svc.call.status', c.status);
    this.set('svc.call.master_call_id', c.master_call_id);
    this.setAddress('svc.call.source', c.source);
    this.setAddress('svc.call.destination', c.destination);
    if (!this.map.has('svc.call.digits')) this.set('svc.call.digits', '');
  }
}
