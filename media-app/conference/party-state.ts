/**
 * A participant's mute and hold as the room's status callbacks see them (participant-mute/-hold):
 * the call's own state (mute_direction in or both: the room does not hear it; metadata.hold), read
 * from its CallSession on the call's node. A call on another node than its room reports them over
 * its bridge leg (media-app/xnode/leg.ts): the state in the INVITE and an in-dialog INFO on each
 * change, both in the PARTY_STATE_HEADER (`muted=<bool>;held=<bool>`); the host (accept-leg.ts)
 * turns them into the same PartyWatch the room uses for its own calls.
 */
import { EventEmitter } from 'node:events';
import type { CallSession } from '../call/session';
import type { PartyState } from '../twiml/conference-callbacks';
import type { PartyWatch } from './room';

export const PARTY_STATE_HEADER = 'X-Openvoice-Party-State';

/** The call's mute and hold as Participants shows them. */
export function callPartyState(call: Pick<CallSession, 'row'>): PartyState {
  return { muted: call.row.mute_direction === 'in' || call.row.mute_direction === 'both', held: call.row.metadata?.hold === true };
}

/** A call of this node: its state now, and each change (its 'updated' events). */
export function watchCall(call: CallSession): PartyWatch {
  return {
    state: () => callPartyState(call),
    onChange: (fn) => {
      call.on('updated', fn);
      return () => call.off('updated', fn);
    },
  };
}

export function encodePartyState(s: PartyState): string {
  return `muted=${s.muted};held=${s.held}`;
}

/** The header's state, or null when it is missing or not exactly ours. */
export function parsePartyState(v: string | undefined): PartyState | null {
  const m = /^\s*muted=(true|false);held=(true|false)\s*$/.exec(v ?? '');
  return m ? { muted: m[1] === 'true', held: m[2] === 'true' } : null;
}

/** The host's side: a PartyWatch fed by the leg's header values (the INVITE's, then each INFO's). */
export class RemotePartyWatch implements PartyWatch {
  private readonly changes = new EventEmitter<{ change: [] }>();
  private now: PartyState;

  constructor(initial: PartyState | null) {
    this.now = initial ?? { muted: false, held: false };
  }

  state(): PartyState {
    return this.now;
  }

  /** A reported state; false when the value is not one. */
  report(header: string | undefined): boolean {
    const s = parsePartyState(header);
    if (!s) return false;
    this.now = s;
    this.changes.emit('change');
    return true;
  }

  onChange(fn: () => void): () => void {
    this.changes.on('change', fn);
    return () => this.changes.off('change', fn);
  }
}
