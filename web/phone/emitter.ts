/** A small typed event emitter (the browser has no node:events). */
export class Emitter<M extends object> {
  private listeners = new Map<keyof M, Set<(v: never) => void>>();

  on<K extends keyof M>(type: K, fn: (value: M[K]) => void): () => void {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    set.add(fn as (v: never) => void);
    return () => set.delete(fn as (v: never) => void);
  }

  protected emit<K extends keyof M>(type: K, value: M[K]): void {
    for (const fn of this.listeners.get(type) ?? []) (fn as (v: M[K]) => void)(value);
  }
}
