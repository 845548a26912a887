/**
 * The media state of one call, owned by its CallSession: what each asker wants of the party's audio,
 * and the one writer of the endpoint's mutes and of the music it plays. Each asker sets only its own
 * part (the call's mute, silence, hold, music on hold, its peer's hold); the endpoint gets their
 * union, so no asker can undo another's:
 *
 *   endpoint 'in' muted  = mute in|both  OR  held on the endpoint (an internal call)
 *   endpoint 'out' muted = mute out|both OR  silenced  OR  ducked  OR  held on the endpoint without music
 *   music played (loop)  = `music` while music on hold is on OR it is held (API) OR its peer's phone holds
 *   the music's kind     = 'hold' while held (API), else 'moh' (the party still heard where it is)
 *
 * A hold through SIP (a re-INVITE's direction) mutes nothing on the endpoint: the direction carries it.
 * The music takes the place of what the party heard (bridge, conference) until it stops. Music that
 * stops or changes while the party is still held (or on music on hold) only stops (stopPlayback); the
 * endpoint is told the music is over (endMusic: on fsmrf the room's hold of a member ends) once the
 * party is neither held nor on music on hold. The endpoint plays the music as its kind says (playMusic:
 * on fsmrf a room's member is taken out of the mix for a hold, not for music on hold); a change of kind
 * with the same music (music on hold, then a hold) starts the loop again in the new kind.
 * Writes run one at a time, in order, each from the state at the time it runs.
 */
import type { MuteDirection } from '../../core/calls/model';
import type { CallEndpoint, MusicKind } from '../media-server/endpoint';

export interface MediaFlags {
  /** The call's mute (POST|DELETE /calls/{id}/mute, the flow's mute action): its row's mute_direction. */
  readonly mute: MuteDirection;
  /** The party hears nothing (POST /calls/{id}/silence); what it says still flows. */
  readonly silenced: boolean;
  /** An AI agent's reply silenced while the caller talks over it (media-app/ai/duck.ts). */
  readonly ducked: boolean;
  /** Held (POST /calls/{id}/hold). */
  readonly held: boolean;
  /** The hold went through SIP (false: an internal call, held on the endpoint). */
  readonly heldBySip: boolean;
  /** Music on hold plays to the party (POST /calls/{id}/moh). */
  readonly moh: boolean;
  /** The party it is bridged to put the call on hold from its own phone (re-INVITE a=sendonly/inactive: peer-hold.ts). */
  readonly peerHeld: boolean;
  /** What plays while music is wanted: a file or URL (hold-music.ts); '' plays nothing (a silent hold). */
  readonly music: string;
}

/** Which directions of the endpoint are muted. */
export interface EndpointMutes {
  readonly in: boolean;
  readonly out: boolean;
}

const NONE: MediaFlags = { mute: '', silenced: false, ducked: false, held: false, heldBySip: false, moh: false, peerHeld: false, music: '' };

/** Whether the party is held or on music on hold (its music, '' for a silent hold, is wanted). */
const onHold = (f: MediaFlags): boolean => f.moh || f.held || f.peerHeld;

/** The music the party hears now, '' for none. */
export function musicOf(f: MediaFlags): string {
  return onHold(f) ? f.music : '';
}

/** How the music plays: a hold's while held (API), else music on hold. */
export function musicKindOf(f: MediaFlags): MusicKind {
  return f.held ? 'hold' : 'moh';
}

/** The endpoint's mutes: the union of what every asker wants. */
export function endpointMutes(f: MediaFlags): EndpointMutes {
  const endpointHold = f.held && !f.heldBySip;
  return {
    in: f.mute === 'in' || f.mute === 'both' || endpointHold,
    out: f.mute === 'out' || f.mute === 'both' || f.silenced || f.ducked || (endpointHold && !musicOf(f)),
  };
}

export class CallMediaState {
  private state: MediaFlags;
  private writes: Promise<void> = Promise.resolve();
  /** The music the loop plays and its kind (null: none). */
  private playing: { readonly music: string; readonly kind: MusicKind } | null = null;
  /** The endpoint that played music since it was last told the music is over (endMusic), or null. */
  private musicOn: CallEndpoint | null = null;
  /** Told when the music cannot be played (a URL that failed); hold-music.ts sets it. */
  onMusicFailed: ((music: string, err: Error) => void) | null = null;

  /** `endpoint` gives the endpoint to write to, or null when there is none (or the call ended). */
  constructor(
    private readonly endpoint: () => CallEndpoint | null,
    mute: MuteDirection = '',
  ) {
    this.state = { ...NONE, mute };
  }

  get flags(): MediaFlags {
    return this.state;
  }

  /** Changes the caller's own part and brings the endpoint's mutes to the union. */
  set(patch: Partial<MediaFlags>): Promise<void> {
    this.state = { ...this.state, ...patch };
    return this.sync();
  }

  /** Writes the mutes to the endpoint (a new endpoint gets those already wanted); one write at a time. */
  sync(): Promise<void> {
    const next = this.writes.then(() => this.write());
    this.writes = next.catch(() => undefined);
    return next;
  }

  /**
   * Music that is no longer wanted stops first (the endpoint told the music is over once the party is
   * neither held nor on music on hold), then the mutes are written, then new music starts. Music
   * that is still wanted plays on while the mutes change: each endpoint applies a mute at once, the
   * switch's too (fsmrf/member-mute.ts: `uuid_audio`, an API command, where a set_mute application would
   * be queued behind the playing file and wait for its end).
   */
  private async write(): Promise<void> {
    const ep = this.endpoint();
    if (!ep || ep.destroyed) return;
    const music = musicOf(this.state);
    const kind = musicKindOf(this.state);
    const same = this.playing?.music === music && this.playing.kind === kind;
    if (this.playing && !same) {
      this.playing = null;
      await ep.stopPlayback().catch(() => undefined);
    }
    if (this.musicOn && !onHold(this.state)) {
      const was = this.musicOn;
      this.musicOn = null;
      if (was === ep) await ep.endMusic?.();
    }
    const want = endpointMutes(this.state);
    await (want.in ? ep.mute('in') : ep.unmute('in'));
    await (want.out ? ep.mute('out') : ep.unmute('out'));
    // (a loop that failed meanwhile left none: it starts again)
    if (!music || (this.playing?.music === music && this.playing.kind === kind)) return;
    const playing = { music, kind };
    this.playing = playing;
    this.musicOn = ep;
    this.loop(ep, playing);
  }

  /** Plays the music again each time it ends, while it is still the music (and kind) wanted on this endpoint. */
  private loop(ep: CallEndpoint, playing: { readonly music: string; readonly kind: MusicKind }): void {
    const { music, kind } = playing;
    const current = () => this.playing === playing && this.endpoint() === ep && !ep.destroyed;
    const run = async (): Promise<void> => {
      while (current()) {
        const r = await (ep.playMusic ? ep.playMusic(music, kind) : ep.play(music));
        // stopped by something else (a flow action's abort, DTMF barge-in): do not spin
        if (r.interrupted && current()) await new Promise((res) => setTimeout(res, 200));
      }
    };
    run().catch((err: Error) => {
      if (!current()) return;
      this.playing = null;
      this.onMusicFailed?.(music, err);
    });
  }
}
