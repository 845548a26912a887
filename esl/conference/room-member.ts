/**
 * A member of a conference room (mod_conference's conference_member_t): what it is (its id, its channel,
 * the flags it entered with) and its state (speak, hear, hold, talking, its relationships, the files
 * playing to it, whether it left). One writer: the state is written by its room alone (room.ts), each
 * change with what follows from it (the engine's mutes, who hears whom, the events). Everywhere else
 * a Member is read-only (getters, a ReadonlyMap, a ReadonlySet), and only room*.ts reach the writer,
 * memberState (test/architecture/conference-room.test.ts).
 */
import type { Channel } from '../channel';
import type { MemberView } from './events';

/** The member flags of `+flags{…}` (conference_utils_set_mflags) this switch serves. */
export interface MemberFlags {
  mute: boolean;
  deaf: boolean;
  moderator: boolean;
  ghost: boolean;
  endconf: boolean;
}

/** Why a member left: the API's kick or hup, its channel hung up, or the room ended. */
export type LeaveReason = 'kicked' | 'hup' | 'hangup' | 'ended';

/** One relationship of a member toward another (mod_conference's conference_relationship_t, audio flags). */
export interface Relation {
  /** false: the other member does not hear this one (nospeak) */
  readonly speak: boolean;
  /** false: this member does not hear the other one (nohear) */
  readonly hear: boolean;
}

/** A member's state as its room writes it (memberState); the Member reads it. */
export interface MemberState {
  speak: boolean;
  hear: boolean;
  talking: boolean;
  /** on hold (`hold`): not heard, no talk events, its hold file played to it */
  held: boolean;
  /** its relationships by the other member's id (relate); gone with the member */
  readonly relations: Map<number, Relation>;
  /** files and speech playing to this member alone (play <file> <id>, saymember, the hold file) */
  files: number;
  /** the stops of the files mixed into what it hears (play <file> <id> without nomux: member-play.ts) */
  readonly mixed: Set<() => void>;
  gone: boolean;
  /** settles `left` */
  readonly settle: (r: LeaveReason) => void;
}

/** Each member's state, reached by its room through memberState. */
const states = new WeakMap<Member, MemberState>();

export class Member implements MemberView {
  readonly moderator: boolean;
  readonly ghost: boolean;
  readonly endconf: boolean;
  /** settles when the member has left (the conference application then returns) */
  readonly left: Promise<LeaveReason>;
  private readonly s: MemberState;

  constructor(
    readonly id: number,
    readonly channel: Channel,
    flags: MemberFlags,
  ) {
    this.moderator = flags.moderator;
    this.ghost = flags.ghost;
    this.endconf = flags.endconf;
    let settle: (r: LeaveReason) => void = () => undefined;
    this.left = new Promise((resolve) => (settle = resolve));
    this.s = { speak: !flags.mute, hear: !flags.deaf, talking: false, held: false, relations: new Map(), files: 0, mixed: new Set(), gone: false, settle };
    states.set(this, this.s);
  }

  get speak(): boolean {
    return this.s.speak;
  }
  get hear(): boolean {
    return this.s.hear;
  }
  get talking(): boolean {
    return this.s.talking;
  }
  get held(): boolean {
    return this.s.held;
  }
  get relations(): ReadonlyMap<number, Relation> {
    return this.s.relations;
  }
  get files(): number {
    return this.s.files;
  }
  get mixed(): ReadonlySet<() => void> {
    return this.s.mixed;
  }
  get gone(): boolean {
    return this.s.gone;
  }
}

/** The member's state to write: for its room (room*.ts) alone. */
export function memberState(m: Member): MemberState {
  const s = states.get(m);
  if (!s) throw new Error(`conference member ${m.id} has no state`);
  return s;
}
