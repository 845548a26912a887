/** Small shared pieces: a loader hook, a table that turns into cards on a phone, error lines, times. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { errorText } from '../api';

export interface Loaded<T> {
  data: T | undefined;
  error: string;
  loading: boolean;
  reload(): void;
  set(v: T): void;
}

export function useLoad<T>(fn: () => Promise<T>, deps: unknown[] = []): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState('');
  const [loading, setLoading] = useState(true);
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    setLoading(true);
    fn().then(
      (v) => live && (setData(v), setError(''), setLoading(false)),
      (e: unknown) => live && (setError(errorText(e)), setLoading(false)),
    );
    return () => {
      live = false;
    };
  }, [...deps, n]); // the caller's deps plus the reload counter
  const reload = useCallback(() => setN((x) => x + 1), []);
  return { data, error, loading, reload, set: setData };
}

export interface Column<T> {
  title: string;
  cell: (row: T) => ComponentChildren;
  /** A class on the cell (e.g. `num`). */
  cls?: string;
}

/** A table; under 640 px wide each row is a card whose cells carry their column title (CSS). */
export function Table<T>(props: { rows: T[]; columns: Column<T>[]; rowKey: (r: T) => string; empty?: string; label: string; rowClass?: (r: T) => string }) {
  if (props.rows.length === 0) return <p class="empty">{props.empty ?? 'Nothing here yet.'}</p>;
  return (
    <table class="grid" aria-label={props.label}>
      <thead>
        <tr>
          {props.columns.map((c) => (
            <th scope="col">{c.title}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((r) => (
          <tr key={props.rowKey(r)} data-id={props.rowKey(r)} class={props.rowClass?.(r)}>
            {props.columns.map((c) => (
              <td class={c.cls} data-title={c.title}>
                {c.cell(r)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function ErrorLine({ error }: { error: string }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

export function Section(props: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card">
      <header class="card-head">
        <h2>{props.title}</h2>
        {props.actions}
      </header>
      {props.children}
    </section>
  );
}

/** `2026-11-22 12:00:01` from an RFC 3339 or legacy timestamp; '' for the unset ones. */
export function shortTime(t: string | null | undefined): string {
  if (!t || t.startsWith('9999')) return '';
  const d = new Date(t.includes('T') ? t : t.replace(' ', 'T') + 'Z');
  if (Number.isNaN(d.getTime())) return t;
  return d.toISOString().replace('T', ' ').slice(0, 19);
}

export function seconds(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** Runs an action and reports its error; returns a button handler. */
export function useAction(): { busy: boolean; error: string; run: (fn: () => Promise<unknown>) => Promise<void>; clear(): void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  return {
    busy,
    error,
    clear: () => setError(''),
    async run(fn) {
      setBusy(true);
      setError('');
      try {
        await fn();
      } catch (e) {
        setError(errorText(e));
      } finally {
        setBusy(false);
      }
    },
  };
}
