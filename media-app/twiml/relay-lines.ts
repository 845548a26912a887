/**
 * Where a ConversationRelay session's replies go (issue 56, docs/evals.md "Agent kinds"): relay_lines,
 * keyed by the call (core/repos/relay-lines.ts), so an eval run reads the app's own words as the agent's
 * side of the transcript. The session's writes go one at a time in its order (a reply's seq is known
 * before it can be marked interrupted); a write that fails is logged and the call goes on (the row is a
 * record of the call, not part of it).
 */
import type { Logger } from 'pino';
import type { Db } from '../../core/db/knex';
import { relayLinesRepo } from '../../core/repos/relay-lines';

export interface RelayLineSink {
  /** A reply whose text is whole (or cut short): written now; `cut()` marks it interrupted afterwards. */
  write(text: string, at: Date, interrupted: boolean): { cut(): void };
}

export function relayLineSink(db: Db, logger: Logger, customerId: string, callId: string): RelayLineSink {
  const repo = relayLinesRepo(db);
  let chain: Promise<unknown> = Promise.resolve();
  const inOrder = (what: string, f: () => Promise<unknown>) => {
    chain = chain.then(f).catch((e: Error) => logger.warn({ err: e.message, call_id: callId }, `conversation relay: a reply was not ${what}`));
  };
  return {
    write(text, at, interrupted) {
      let seq: number | null = null;
      inOrder('written', async () => {
        seq = await repo.add(customerId, callId, { text, at, interrupted });
      });
      return {
        cut: () =>
          inOrder('marked interrupted', async () => {
            if (seq !== null) await repo.markInterrupted(customerId, callId, seq);
          }),
      };
    },
  };
}
