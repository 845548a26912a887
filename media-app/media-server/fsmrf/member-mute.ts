/**
 * A leg's own mute (`mute` / `unmute`: the call's mute, POST /calls/{id}/mute, a Twilio participant's
 * Muted) on the switch. The switch runs a sendmsg'd application only after the running one (FreeSWITCH
 * with event-lock; our switch too: esl/README.md), so a `set_mute` waited behind a playing file (the
 * music on hold looping: media-app/call/media-state.ts) or a member's `conference` application. Outside a
 * conference the mute is the API command `uuid_audio <uuid> start read|write mute 1|0` (mod_commands'
 * session_audio_function: the same switch_ivr_session_audio media bug set_mute writes), which takes
 * effect at once whatever runs. While the leg is a member of a switch room it is the room's member
 * operation, an API command as well: `conference <room> mute|unmute <member>` for `in` (the others do not
 * hear it), `deaf|undeaf` for `out` (it hears nothing). When the `conference` application ends
 * (CHANNEL_EXECUTE_COMPLETE on the leg's channel connection) the member's flags go with it, so the mute
 * wanted then is written again on the channel.
 *
 * The room's own mute of the member (FsmrfMix.mute, POST /conferencecalls/{id}/mute) is the same
 * member operation on the switch: an unmute through either clears both (the embedded engine keeps
 * them apart: the endpoint's mute and the mixer member's).
 *
 * A mute set before the leg entered the room (conference_join `muted`, a call muted then joined) is
 * the channel's, and stays through the room: the room's unmute of the member does not lift it, as on
 * the embedded engine (the endpoint's mute stands whatever the mixer does). The leg's own unmute in the
 * room lifts it with the member's: the room's operation and uuid_audio on the channel both.
 */
import type { Endpoint as FsEndpoint } from 'drachtio-fsmrf';
import { apiBody, replyText } from './esl-arg';
import { onChannelEvent } from './leg-socket';

type Side = 'in' | 'out';
export type Direction = Side | 'both';

/** The sides a direction mutes. */
export const SIDES: Record<Direction, Side[]> = { in: ['in'], out: ['out'], both: ['in', 'out'] };
/** uuid_audio's channel sides: what the leg reads from its far end ('in'), what it writes to it ('out'). */
const CHANNEL_SIDE: Record<Side, string> = { in: 'read', out: 'write' };
/** the room's member operation for a side: `in` (the others do not hear it) mute, `out` (it hears nothing) deaf */
const MEMBER_OP: Record<Side, 'mute' | 'deaf'> = { in: 'mute', out: 'deaf' };

/**
 * The switch's member operation for one side, `conference <room> (un)mute|(un)deaf <id>`, through `api`
 * (given the operation, for the socket it runs on, and the `conference` command's arguments): the room's
 * own mute of a member (FsmrfMix.mute, on its control leg) and the leg's own while it is a member (here,
 * on its channel) are this one. mod_conference answers `OK <op> <id>`; anything else rejects with it.
 */
export async function memberOp(api: (op: string, args: string) => Promise<unknown>, room: string, id: string | number, side: Side, on: boolean): Promise<void> {
  const op = `${on ? '' : 'un'}${MEMBER_OP[side]}`;
  const body = apiBody(await api(op, `${room} ${op} ${id}`));
  if (!/^\+?OK\b/.test(body.trim())) throw new Error(`conference ${room} ${op} ${id}: ${replyText(body) || 'no answer'}`);
}

export class MemberMutes {
  /** the mutes the call wants, whatever the room does */
  private readonly wanted: Record<Side, boolean> = { in: false, out: false };
  /** the sides muted on the channel (uuid_audio): kept while the leg is a member, until its own unmute */
  private readonly channel: Record<Side, boolean> = { in: false, out: false };
  /** while the `conference` application runs: the room, the member id, the listener for its end */
  private member: { room: string; id: string; off: () => void } | null = null;

  /** `run`: the leg's operations under its channel socket (leg-socket.ts: they reject when it ends). */
  constructor(
    private readonly fs: FsEndpoint,
    private readonly run: <T>(operation: string, op: () => Promise<T>) => Promise<T>,
  ) {}

  async set(direction: Direction, on: boolean): Promise<void> {
    for (const side of SIDES[direction]) {
      this.wanted[side] = on;
      const m = this.member;
      if (!m) await this.channelOp(side, on);
      else {
        await this.roomOp(m, side, on);
        // muted on the channel before it entered: its own unmute lifts that too
        if (!on && this.channel[side]) await this.channelOp(side, false);
      }
    }
  }

  /** Whether the call wants `side` muted (its own mute, or its channel's from before it entered the room). */
  wants(side: Side): boolean {
    return this.wanted[side] || this.channel[side];
  }

  /** The leg is member `id` of `room` (its add-member came); its end is watched on the channel connection. */
  joined(room: string, id: string): void {
    this.member?.off();
    const off = onChannelEvent(this.fs, 'CHANNEL_EXECUTE_COMPLETE', (evt) => {
      if (evt.getHeader('Application') !== 'conference' || this.member?.id !== id) return;
      this.left();
    });
    if (off) this.member = { room, id, off };
  }

  /** Out of the room: the member's flags are gone, the mute wanted is the channel's again (uuid_audio). */
  private left(): void {
    this.member?.off();
    this.member = null;
    if (!this.wanted.in && !this.wanted.out) return;
    void (async () => {
      for (const side of ['in', 'out'] as const) if (this.wanted[side]) await this.channelOp(side, true);
    })().catch(() => undefined);
  }

  /** The leg ended: nothing more is watched. */
  close(): void {
    this.member?.off();
    this.member = null;
  }

  /** uuid_audio on the leg's channel (outside a room): applied at once, not queued behind what plays. */
  private async channelOp(side: Side, on: boolean): Promise<void> {
    const op = on ? 'mute' : 'unmute';
    const body = apiBody(await this.run(op, () => this.fs.api('uuid_audio', `${this.fs.uuid} start ${CHANNEL_SIDE[side]} mute ${on ? 1 : 0}`)));
    if (!body.startsWith('+OK')) throw new Error(`uuid_audio ${op} ${side}: ${replyText(body) || 'no answer'}`);
    this.channel[side] = on;
  }

  /** The room's member operation on the leg's own channel socket. */
  private async roomOp(m: { room: string; id: string }, side: Side, on: boolean): Promise<void> {
    await memberOp((_op, args) => this.run(on ? 'mute' : 'unmute', () => this.fs.api('conference', args)), m.room, m.id, side, on).catch((e: unknown) => {
      // a member that left meanwhile: its flags went with it
      if (this.member) throw e;
    });
  }
}
