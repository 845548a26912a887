/**
 * Which applications want which new requests. drachtio-server keeps, per lower-cased method (or
 * `cdr:*` record type), the list of connections that sent `route|<method>` and hands new requests
 * out round-robin among them.
 */
import type { AppConnection } from './app-connection';

export class AppRegistry {
  private readonly routes = new Map<string, AppConnection[]>();
  private readonly offsets = new Map<string, number>();

  add(conn: AppConnection, method: string): void {
    const key = method.toLowerCase();
    const list = this.routes.get(key) ?? [];
    if (!list.includes(conn)) list.push(conn);
    this.routes.set(key, list);
  }

  /** `remove_route|<method>` (drachtio-server drops all the connection's routes; we drop just that one). */
  remove(conn: AppConnection, method: string): void {
    const key = method.toLowerCase();
    const kept = (this.routes.get(key) ?? []).filter((c) => c !== conn);
    if (kept.length) this.routes.set(key, kept);
    else this.routes.delete(key);
  }

  removeAllFor(conn: AppConnection): void {
    for (const [key, list] of this.routes) {
      const kept = list.filter((c) => c !== conn);
      if (kept.length) this.routes.set(key, kept);
      else this.routes.delete(key);
    }
  }

  /** Round-robin choice among live connections routed for `method`, optionally carrying `tag`. */
  select(method: string, tag?: string): AppConnection | undefined {
    const key = method.toLowerCase();
    const list = (this.routes.get(key) ?? []).filter((c) => !c.closed && (!tag || c.hasTag(tag)));
    if (list.length === 0) return undefined;
    const offset = (this.offsets.get(key) ?? 0) % list.length;
    this.offsets.set(key, offset + 1);
    return list[offset];
  }

  wants(method: string): boolean {
    return (this.routes.get(method.toLowerCase()) ?? []).some((c) => !c.closed);
  }

  /** Every method (or `cdr:*` type) some open connection routes. */
  routedMethods(): string[] {
    return [...this.routes].filter(([, l]) => l.some((c) => !c.closed)).map(([k]) => k);
  }

  methodsOf(conn: AppConnection): string[] {
    return [...this.routes].filter(([, l]) => l.includes(conn)).map(([k]) => k);
  }
}
