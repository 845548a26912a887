/**
 * Where a ConversationRelay session's replies go (issue 56, docs/evals.md "Agent kinds"): relay_lines,
 * keyed by the call (core/repos/relay-lines.ts), so an eval run reads the app's own words as the agent's
 * side of the transcript. The session's writes go one at a time in its order (a reply's seq is known
 * before it can be marked interrupted); a write that fails is logged, counted as a lost reply
 * (relay_line_losses: the call's agent transcript is incomplete) and the call goes on (the row is a
 * record of the call, not part of it).
 */
import type { Logger } from 'pino';
import type { Db } from '../../core/db/knex';
import { relayLinesRepo } from '../../core/repos/relay-lines';

export interface RelayLineSink {
  /**
   * A reply whose text is whole (or cut short): written now; `cut()` marks it interrupted afterwards.
   * `cutChars`: characters of it the relay did not keep (past RELAY_LINE_MAX_CHARS), counted as lost.
   */
  write(text: string, at: Date, interrupted: boolean, cutChars?: number): { cut(): void };
  /** A reply none of whose text was kept (the say queue was full): counted as lost, in the writes' order. */
  lose(chars: number): void;
}

export function relayLineSink(db: Db, logger: Logger, customerId: string, callId: string): RelayLineSink {
  const repo = relayLinesRepo(db);
  let chain: Promise<unknown> = Promise.resolve();
  const inOrder = (what: string, f: () => Promise<unknown>) => {
    chain = chain.then(f).catch((e: Error) => logger.warn({ err: e.message, call_id: callId }, `conversation relay: a reply was not ${what}`));
  };
  return {
    write(text, at, interrupted, cutChars = 0) {
      let seq: number | null = null;
      inOrder('written', async () => {
        try {
          seq = await repo.add(customerId, callId, { text, at, interrupted, cutChars });
        } catch (e) {
          // the reply is not kept: say so on the call before the failure is logged
          await repo.lose(customerId, callId, { replies: 1, chars: text.length + cutChars }).catch((e2: Error) => {
            logger.warn({ err: e2.message, call_id: callId }, 'conversation relay: a lost reply was not counted');
          });
          throw e;
        }
      });
      return {
        cut: () =>
          inOrder('marked interrupted', async () => {
            if (seq !== null) await repo.markInterrupted(customerId, callId, seq);
          }),
      };
    },
    lose(chars) {
      inOrder('counted lost', () => repo.lose(customerId, callId, { replies: 1, chars }));
    },
  };
}
