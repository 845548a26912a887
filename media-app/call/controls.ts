/**
 * Hold, music on hold, one-way silence and talk on a live call (POST|DELETE /calls/{id}/hold, /moh,
 * /silence, POST /calls/{id}/talk), run by the node that owns the call.
 *
 *   hold     a re-INVITE of ours (reinvite.ts): a=sendonly with the music on hold played to the
 *            held party (hold-music.ts: the hold's `music`, the flow's, the customer's, the node's), a=inactive
 *            for a silent hold (`music: ""`), so the held party's audio stops reaching anyone and
 *            nothing but the music reaches it; unhold re-offers a=sendrecv. An internal call (no SIP
 *            between its ends) is held on the endpoint instead (its audio muted both ways, the music
 *            still sent).
 *   moh      the music (hold-music.ts) played to the party in a loop; it takes the place of what
 *            the party heard (bridge, conference) until turned off, which stops playback (a hold's
 *            music too: the hold goes on in silence).
 *   silence  the party hears nothing (its outgoing audio muted); what it says is still received,
 *            bridged and recorded.
 *   talk     the text spoken to the party by the platform's TTS, after what already plays.
 *
 * Each state lives in the session's media state (media-state.ts), the one writer of the endpoint's
 * mutes, so neither these controls nor the call's mute undo each other; it is written to the call's
 * metadata (`hold`, `moh`, `silence`) and published as call_updated. Commands state the end state wanted, so a redelivered one changes nothing; the
 * operations of one call run one at a time.
 */
import type { Logger } from 'pino';
import { retryWrite } from '../../core/db/retry';
import { callsRepo } from '../../core/repos/calls';
import { holdMusicOf, mohMusicOf } from './hold-music';
import { musicOf } from './media-state';
import { reinvite } from './reinvite';
import type { CallSession } from './session';

interface Controls {
  /** The operations of this call, one after another. */
  queue: Promise<unknown>;
}

export interface TalkRequest {
  text: string;
  language: string;
  provider: string;
  voiceId: string;
}

/**
 * Music (a hold's, music on hold) the call's endpoint would not play now is refused before anything
 * changes (no re-INVITE, no state): on fsmrf a leg joining a switch room (its member id not known yet:
 * fsmrf/room-app.ts); a member's music is the room's (fsmrf/member-hold.ts). Decided on this node, in the
 * call's queue of operations; a join between this and the music's start is refused by the play itself.
 */
function refuseMusic(call: CallSession): void {
  const ep = call.endpoint;
  const refused = ep?.holdMusicRefusal ? ep.holdMusicRefusal() : ep?.promptRefusal?.();
  if (refused) throw refused;
}

export class CallControls {
  private readonly state = new WeakMap<CallSession, Controls>();

  constructor(private readonly logger: Logger) {}

  private of(call: CallSession): Controls {
    let c = this.state.get(call);
    if (!c) this.state.set(call, (c = { queue: Promise.resolve() }));
    return c;
  }

  /** Runs `op` after the call's earlier operations; a call that ended meanwhile is left alone. */
  private serial(call: CallSession, op: () => Promise<void>): Promise<void> {
    const c = this.of(call);
    const next = c.queue.then(() => (call.isEnded || !call.endpoint ? undefined : op()));
    c.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * `music`: what the held party hears (hold-music.ts; '' a silent hold); absent: the flow's, the
   * customer's or the node's. A hold asked again while held with `music` (a Participant's new HoldUrl)
   * changes the music: the new one replaces the old (holdMusic).
   */
  hold(call: CallSession, on: boolean, music?: string): Promise<void> {
    return this.serial(call, async () => {
      const m = call.mediaState;
      if (m.flags.held === on) return on && music !== undefined ? this.holdMusic(call, music) : undefined;
      if (!on) {
        await m.set({ held: false, heldBySip: await reinvite(call, 'sendrecv') });
        return this.record(call, { hold: false });
      }
      const played = m.flags.moh && music === undefined ? m.flags.music : await holdMusicOf(call, music);
      if (played) refuseMusic(call);
      const bySip = await reinvite(call, played ? 'sendonly' : 'inactive');
      await m.set({ held: true, heldBySip: bySip, music: played });
      await this.record(call, { hold: true });
    });
  }

  /**
   * The held party's music changes to `music`: the loop stops the old one and plays the new one
   * (media-state.ts; on fsmrf a room's member stays held meanwhile: member-hold.ts). A silent hold that
   * gets music, or music that becomes '', re-offers the direction that carries it (as moh does).
   */
  private async holdMusic(call: CallSession, music: string): Promise<void> {
    const m = call.mediaState;
    const played = await holdMusicOf(call, music);
    if (played === m.flags.music) return;
    if (played) refuseMusic(call);
    const before = musicOf(m.flags);
    await m.set({ music: played });
    if (m.flags.heldBySip && !before !== !played) await reinvite(call, played ? 'sendonly' : 'inactive');
  }

  moh(call: CallSession, on: boolean): Promise<void> {
    return this.serial(call, async () => {
      const m = call.mediaState;
      if (m.flags.moh === on) return;
      if (on) refuseMusic(call);
      const before = musicOf(m.flags);
      await m.set({ moh: on, music: on ? before || (await mohMusicOf(call)) : '' });
      // a held party gets the music only once its direction lets media through
      if (m.flags.held && m.flags.heldBySip && !before !== !musicOf(m.flags)) await reinvite(call, on ? 'sendonly' : 'inactive');
      await this.record(call, { moh: on });
    });
  }

  silence(call: CallSession, on: boolean): Promise<void> {
    return this.serial(call, async () => {
      if (call.mediaState.flags.silenced === on) return;
      await call.mediaState.set({ silenced: on });
      await this.record(call, { silence: on });
    });
  }

  /** Queues the speech and returns; a failure (TTS, the call ending) is logged. */
  talk(call: CallSession, req: TalkRequest): void {
    const ep = call.endpoint;
    if (!ep || call.isEnded || !call.answered) return;
    ep.say(req.text, { language: req.language || undefined, voice: req.voiceId || undefined, provider: req.provider || undefined }).catch((err: Error) =>
      this.logger.info({ err: err.message, call: call.id }, 'talk failed'),
    );
  }

  /** The state into the call's metadata, then call_updated. */
  private async record(call: CallSession, patch: Record<string, boolean>): Promise<void> {
    const row = await retryWrite(call.deps.logger, `call ${call.id} metadata`, () => callsRepo(call.deps.db).mergeMetadata(call.id, patch));
    if (!row) return;
    await call.updated({ metadata: row.metadata, tm_update: row.tm_update });
  }
}
