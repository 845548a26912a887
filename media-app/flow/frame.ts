/**
 * One list of actions being run. The activeflow keeps a stack of them: the flow's own list at the
 * bottom, then lists pushed by fetch and fetch_flow; when a pushed list runs out, the one below
 * resumes where it left off (voipbin's stack map).
 */
import type { Action } from '../../core/flow';

export class Frame {
  /** Index of the next action to run. */
  pos = 0;
  readonly byId = new Map<string, number>();
  /** Remaining passes of each goto of this list (voipbin rewrites the stored loop_count). */
  readonly loops = new Map<string, number>();

  /** @param twiml the list is a compiled TwiML document (a twiml action in it replaces it). */
  constructor(
    readonly actions: Action[],
    readonly twiml = false,
  ) {
    actions.forEach((a, i) => this.byId.set(a.id, i));
  }
}
