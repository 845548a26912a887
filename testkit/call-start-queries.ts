/**
 * The database queries of each inbound call's start, measured (test/ai/call-start-queries.test.ts,
 * `scripts/bench/evals/run.ts --queries`). Every query the platform's knex runs is attributed to the
 * inbound INVITE whose handling made it: an AsyncLocalStorage is entered around InboundRouter's route,
 * and a query's promise chain carries it. Each is dated from the INVITE's arrival at media-app, with
 * how long it waited for a pool connection and how long Postgres took; a call's start ends when its
 * agent listens (VoiceAgent.start resolved). Test-only: it wraps two prototypes while it is on and
 * puts them back on `stop()`; nothing in production reads it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import type { Knex } from 'knex';
import { InboundRouter } from '../media-app/inbound/router';
import { VoiceAgent } from '../media-app/ai/voice';

export interface StartQuery {
  /** the statement as knex sent it (placeholders, no values) */
  sql: string;
  /** ms from the INVITE's arrival at media-app to the query's start (its connection acquired) */
  atMs: number;
  /** ms the query waited for a pool connection (null: it ran on a connection already held, in a transaction) */
  waitMs: number | null;
  /** ms from sent to answered (null: no answer seen) */
  ms: number | null;
}

/** One inbound INVITE's queries, in the order they started. */
export interface CallStart {
  queries: StartQuery[];
  /** ms from the INVITE's arrival to the agent listening (null: no agent, or it did not start) */
  listeningMs: number | null;
}

/** The queries run before the agent listened (all of them when it never did). */
export function beforeListening(c: CallStart): StartQuery[] {
  return c.listeningMs === null ? c.queries : c.queries.filter((q) => q.atMs <= c.listeningMs!);
}

/** A statement's kind: its verb and table ("select calls", "insert aicalls", "update activeflows"). */
export function kindOf(sql: string): string {
  const s = sql.trim().replace(/\s+/g, ' ');
  const verb = /^(select|insert|update|delete|with|begin|commit|rollback)\b/i.exec(s)?.[1]?.toLowerCase() ?? s.slice(0, 20);
  const table = /^(?:insert into|update|delete from)\s+"?([a-z_]+)/i.exec(s)?.[1] ?? topLevelFrom(s);
  return table ? `${verb} ${table}` : verb;
}

/** The table after a statement's own FROM (not a subquery's, in parentheses); '' when none. */
function topLevelFrom(s: string): string {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '(') depth++;
    else if (s[i] === ')') depth--;
    else if (depth === 0 && /^from\s/i.test(s.slice(i, i + 5)) && /\s/.test(s[i - 1] ?? ' ')) return /^from\s+"?([a-z_]+)/i.exec(s.slice(i))?.[1] ?? '';
  }
  return '';
}

interface Tag {
  t0: number;
  start: CallStart;
}

interface Acquiring {
  on(event: 'acquireRequest', fn: (id: number) => void): void;
  on(event: 'acquireSuccess', fn: (id: number, resource: { __knexUid?: string }) => void): void;
  removeListener(event: string, fn: (...a: never[]) => void): void;
}

interface QueryData {
  sql: string;
  __knexUid?: string;
  __knexQueryUid?: string;
}

type Route = (this: InboundRouter, ...a: unknown[]) => Promise<void>;
type Start = (this: VoiceAgent, signal: AbortSignal) => Promise<VoiceAgent>;

/** Starts recording; `calls` lists each inbound INVITE's start as it happens; `stop()` puts everything back. */
export function recordCallStarts(db: Knex): { calls: CallStart[]; stop(): void } {
  const als = new AsyncLocalStorage<Tag>();
  const calls: CallStart[] = [];
  const proto = InboundRouter.prototype as unknown as { route: Route };
  const route = proto.route;
  proto.route = function (this: InboundRouter, ...a: unknown[]) {
    const tag: Tag = { t0: performance.now(), start: { queries: [], listeningMs: null } };
    calls.push(tag.start);
    return als.run(tag, () => route.apply(this, a));
  };
  const start = VoiceAgent.prototype.start as Start;
  VoiceAgent.prototype.start = async function (this: VoiceAgent, signal: AbortSignal) {
    const r = await start.call(this, signal);
    const tag = als.getStore();
    if (tag && tag.start.listeningMs === null) tag.start.listeningMs = performance.now() - tag.t0;
    return r;
  };
  // a connection's last acquire: how long it waited (the pool's queue), read by the query that runs on it
  const pool = (db.client as { pool: Acquiring }).pool;
  const asked = new Map<number, number>();
  const waited = new Map<string, number>();
  const onRequest = (id: number) => asked.set(id, performance.now());
  const onSuccess = (id: number, resource: { __knexUid?: string }) => {
    const t = asked.get(id);
    asked.delete(id);
    if (t !== undefined && resource.__knexUid) waited.set(resource.__knexUid, performance.now() - t);
  };
  pool.on('acquireRequest', onRequest);
  pool.on('acquireSuccess', onSuccess);
  const open = new Map<string, { q: StartQuery; t: number }>();
  const onQuery = (data: QueryData) => {
    const tag = als.getStore();
    if (!tag) return;
    const now = performance.now();
    const uid = data.__knexUid ?? '';
    const waitMs = waited.get(uid) ?? null;
    waited.delete(uid);
    const q: StartQuery = { sql: data.sql, atMs: now - tag.t0, waitMs, ms: null };
    tag.start.queries.push(q);
    if (data.__knexQueryUid) open.set(data.__knexQueryUid, { q, t: now });
  };
  const onAnswer = (_r: unknown, data: QueryData) => {
    const o = data.__knexQueryUid ? open.get(data.__knexQueryUid) : undefined;
    if (!o) return;
    open.delete(data.__knexQueryUid!);
    o.q.ms = performance.now() - o.t;
  };
  db.on('query', onQuery);
  db.on('query-response', onAnswer);
  db.on('query-error', onAnswer);
  return {
    calls,
    stop() {
      proto.route = route;
      VoiceAgent.prototype.start = start;
      pool.removeListener('acquireRequest', onRequest as never);
      pool.removeListener('acquireSuccess', onSuccess as never);
      db.off('query', onQuery);
      db.off('query-response', onAnswer);
      db.off('query-error', onAnswer);
    },
  };
}

/** A call start's queries as lines: when, the wait for a connection, the time in Postgres, the kind. */
export function describeStart(c: CallStart): string[] {
  const f = (n: number | null) => (n === null ? '-' : n.toFixed(1));
  return c.queries.map(
    (q) =>
      `${f(q.atMs).padStart(8)} ms  wait ${f(q.waitMs).padStart(6)}  pg ${f(q.ms).padStart(6)}  ${q.atMs > (c.listeningMs ?? Infinity) ? '(after listening) ' : ''}${q.sql.replace(/\s+/g, ' ').slice(0, 150)}`,
  );
}
