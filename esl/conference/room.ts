/**
 * One conference (mod_conference's conference_obj_t) over the media engine's mixer
 * (media-engine/conference.ts): its members, each a channel whose engine endpoint is in the mix, their
 * flags (speak, hear, hold, moderator, ghost, endconf), their relationships (relate: who does not hear
 * whom, relate.ts), the room's settings the API reads and sets, its file queue and recordings, and
 * the maintenance events of each change. The room ends when its last
 * member leaves, when an `endconf` member leaves, or when the engine's mixer is gone.
 *
 * One writer: the room is the only writer of its members' state (room-member.ts). Each change is a
 * method here (setSpeak, setHear, setHold, relate, unrelate, playingTo, mixingTo, leave) that applies
 * it with what follows from it (the engine's mutes, who hears whom, the events); the API (api.ts,
 * relate.ts, member-play.ts) asks, it never writes a member's fields.
 */
import type { Conference } from '../../media-engine';
import type { Channel } from '../channel';
import type { EventFactory, SwitchIdentity } from '../events';
import type { EslEvent } from '../wire';
import type { ConferenceFiles } from './files';
import { maintenance, memberHeaders, roomHeaders, type RoomView } from './events';
import { RoomPlayer } from './playback';
import { RoomRecordings } from './recording';
import { Member, memberState, type LeaveReason, type MemberFlags, type Relation } from './room-member';

export { Member, type LeaveReason, type MemberFlags, type Relation } from './room-member';

/** What a room needs of the switch: its events and where they go (EslServer). */
export interface RoomHost {
  readonly events: EventFactory;
  readonly identity: SwitchIdentity;
  publish(ev: EslEvent): void;
  failed(err: Error): void;
  /** where `play` reads and `recording` writes (files.ts) */
  readonly conferenceFiles: ConferenceFiles;
}

/** The engine's mute direction for a member's flags: 'in' = the others do not hear it, 'out' = it hears nothing. */
function engineMute(m: { speak: boolean; hear: boolean; held: boolean }): 'in' | 'out' | 'both' | undefined {
  const silent = !m.speak || m.held;
  if (silent && !m.hear) return 'both';
  if (silent) return 'in';
  return m.hear ? undefined : 'out';
}

export class ConferenceRoom implements RoomView {
  readonly members = new Map<number, Member>();
  /** members by their engine endpoint's uuid (the mixer's member id) */
  private readonly byLeg = new Map<string, Member>();
  private isLocked = false;
  /** 0: no limit (mod_conference's default) */
  maxMembers = 0;
  soundPrefix = '';
  callerIdName = 'conference';
  callerIdNumber = '0000000000';
  endconferenceGraceTime = 0;
  floor: number | null = null;
  ended = false;
  /** members whose endpoint is joining the mix (add() in flight): the room is not empty meanwhile */
  private joining = 0;
  /** who does not hear each member, as last given to the engine (member → its listeners' ids joined) */
  private readonly unheard = new Map<Member, string>();
  readonly startedAt = Date.now();
  readonly player: RoomPlayer;
  readonly recordings: RoomRecordings;

  constructor(
    readonly name: string,
    readonly profile: string,
    readonly media: Conference,
    private readonly host: RoomHost,
    private readonly onEnd: (room: ConferenceRoom) => void,
  ) {
    const fire = (action: string, own: [string, string][]) => this.fireRoom(action, own);
    this.player = new RoomPlayer(media, fire);
    this.recordings = new RoomRecordings(media, fire, (e) => host.failed(e), host.conferenceFiles.recordings);
    media.on('speaker', (e) => this.speaker(e.memberId, e.talking));
    media.on('destroy', () => this.end());
  }

  /** `lock`: no one joins (apps/conference.ts) */
  get locked(): boolean {
    return this.isLocked;
  }
  get uuid(): string {
    return this.media.uuid;
  }
  /** the sounds directory `play` reads under */
  get soundsDir(): string {
    return this.host.conferenceFiles.sounds;
  }
  get domain(): string {
    return this.host.identity.ipv4;
  }
  get size(): number {
    let n = 0;
    for (const m of this.members.values()) if (!m.ghost) n++;
    return n;
  }
  get ghosts(): number {
    return this.members.size - this.size;
  }
  /** A new member would exceed max_members. */
  get full(): boolean {
    return this.maxMembers > 0 && this.size >= this.maxMembers;
  }

  /** Puts the channel's endpoint in the mix with its flags and fires add-member. Throws when the room has ended. */
  async add(id: number, channel: Channel, flags: MemberFlags): Promise<Member> {
    if (this.ended) throw new Error(`conference ${this.name} has ended`);
    const m = new Member(id, channel, flags);
    this.joining++;
    try {
      await this.media.join(channel.endpoint, { mute: engineMute(m) });
    } finally {
      this.joining--;
    }
    if (this.ended) {
      left(m, 'ended');
      return m;
    }
    this.members.set(id, m);
    this.byLeg.set(channel.endpoint.uuid, m);
    this.fireMember('add-member', m);
    this.syncUnheard();
    return m;
  }

  /** Takes a member out (del-member); an endconf member, or the last one, ends the room. */
  leave(m: Member, reason: LeaveReason): void {
    if (m.gone || this.members.get(m.id) !== m) return;
    const s = memberState(m);
    this.members.delete(m.id);
    this.byLeg.delete(m.channel.endpoint.uuid);
    if (this.floor === m.id) this.floor = null;
    s.talking = false;
    if (!m.channel.endpoint.destroyed) void m.channel.endpoint.leaveConference().catch((e: unknown) => this.host.failed(e instanceof Error ? e : new Error(String(e))));
    this.fireMember('del-member', m);
    for (const stop of [...m.mixed]) stop();
    left(m, reason);
    // its relationships go with it (conference_member_del_relationship(member, 0)); those toward it stay, unused
    s.relations.clear();
    this.unheard.delete(m);
    if (this.ended) return;
    this.syncUnheard();
    if (m.endconf) this.end();
    else this.endIfEmpty();
  }

  /**
   * Ends the room when it has no member and no one is joining: the last member left, or whoever opened
   * it never got in (its channel hung up while it opened, or its join failed).
   */
  endIfEmpty(): void {
    if (!this.ended && this.members.size === 0 && this.joining === 0) this.end();
  }

  /** `mute` / `unmute`: whether the others hear the member (mute-member / unmute-member). */
  async setSpeak(m: Member, on: boolean): Promise<void> {
    if (m.gone) return;
    const s = memberState(m);
    s.speak = on;
    if (!on) s.talking = false;
    // a held member stays unheard (FreeSWITCH's hard mute of its session) until unhold
    await this.media[on && !m.held ? 'unmute' : 'mute'](m.channel.endpoint, 'in');
    if (!m.gone) this.fireMember(on ? 'unmute-member' : 'mute-member', m);
  }

  /** `deaf` / `undeaf`: whether the member hears the room (deaf-member / undeaf-member). */
  async setHear(m: Member, on: boolean): Promise<void> {
    if (m.gone) return;
    memberState(m).hear = on;
    await this.media[on ? 'unmute' : 'mute'](m.channel.endpoint, 'out');
    if (!m.gone) this.fireMember(on ? 'undeaf-member' : 'deaf-member', m);
  }

  /**
   * `hold` / `unhold` (conference_api_sub_hold/unhold): held, the member is not heard and reports no
   * talking (hold-member); unheld, it is heard again unless muted, and what plays to it alone stops
   * (conference_member_stop_file FILE_STOP_ALL), then unhold-member. The hold's file is played by the caller.
   */
  async setHold(m: Member, on: boolean): Promise<void> {
    if (m.gone) return;
    const s = memberState(m);
    s.held = on;
    if (on) s.talking = false;
    await this.media[on || !m.speak ? 'mute' : 'unmute'](m.channel.endpoint, 'in');
    if (!on) for (const stop of [...m.mixed]) stop();
    if (!on && m.files > 0) await m.channel.endpoint.stopPlayback();
    if (!m.gone) this.fireMember(on ? 'hold-member' : 'unhold-member', m);
  }

  /**
   * `relate <id> <other> nospeak|nohear` (conference_api_sub_relate): each pair's relationship, of a
   * member toward another both in the room, is `r` (it replaces the pair's; nospeak clears the member's
   * talking flag, no event, as FreeSWITCH does), then the engine is told who does not hear whom. Gives,
   * by pair, whether both members were found.
   */
  relate(pairs: readonly (readonly [number, number])[], r: Relation): boolean[] {
    const found = pairs.map(([a, b]) => {
      const m = this.members.get(a);
      if (!m || !this.members.has(b)) return false;
      const s = memberState(m);
      s.relations.set(b, { speak: r.speak, hear: r.hear });
      if (!r.speak) s.talking = false;
      return true;
    });
    this.syncUnheard();
    return found;
  }

  /** `relate <id> <other> clear`: each pair's relationship goes, then the engine is told; gives, by pair, whether the member was found. */
  unrelate(pairs: readonly (readonly [number, number])[]): boolean[] {
    const found = pairs.map(([a, b]) => {
      const m = this.members.get(a);
      if (m) memberState(m).relations.delete(b);
      return m !== undefined;
    });
    this.syncUnheard();
    return found;
  }

  /** `lock` / `unlock`: whether a caller can join, then lock / unlock. */
  setLocked(on: boolean): void {
    this.isLocked = on;
    this.fireRoom(on ? 'lock' : 'unlock');
  }

  /**
   * Runs `play`, a file or speech playing to the member alone (member-play.ts, saymember), counted in
   * its `files` until it ends (stop and unhold read the count).
   */
  async playingTo<T>(m: Member, play: () => Promise<T>): Promise<T> {
    const s = memberState(m);
    s.files++;
    try {
      return await play();
    } finally {
      s.files--;
    }
  }

  /** Runs `play`, a file mixed into what the member hears (member-play.ts), its `stop` in the member's `mixed` until it ends. */
  async mixingTo<T>(m: Member, stop: () => void, play: () => Promise<T>): Promise<T> {
    const s = memberState(m);
    s.mixed.add(stop);
    try {
      return await play();
    } finally {
      s.mixed.delete(stop);
    }
  }

  /** relate's count of relationships (conference->relationship_total). */
  get relationshipTotal(): number {
    let n = 0;
    for (const m of this.members.values()) n += m.relations.size;
    return n;
  }

  /**
   * Gives the engine, for each member whose listeners changed, the members that do not hear it: those it
   * relates nospeak to, and those that relate nohear to it (conference_mux's two checks).
   */
  private syncUnheard(): void {
    const ms = [...this.members.values()];
    for (const s of ms) {
      const deafTo = ms.filter((l) => l !== s && (s.relations.get(l.id)?.speak === false || l.relations.get(s.id)?.hear === false));
      const key = deafTo.map((l) => l.id).join(',');
      if ((this.unheard.get(s) ?? '') === key) continue;
      this.unheard.set(s, key);
      const ep = s.channel.endpoint;
      void this.media
        .notHeardBy(
          ep,
          deafTo.map((l) => l.channel.endpoint),
        )
        .catch((e: unknown) => !s.gone && this.host.failed(e instanceof Error ? e : new Error(String(e))));
    }
  }

  /** `kick` (kick-member) or `hup` (hup-member), then the member leaves. */
  remove(m: Member, how: 'kicked' | 'hup'): void {
    if (m.gone) return;
    this.fireMember(how === 'kicked' ? 'kick-member' : 'hup-member', m);
    this.leave(m, how);
  }

  /** A room event (conference-create, lock, play-file…). */
  fireRoom(action: string, own: [string, string][] = []): void {
    this.host.publish(maintenance(this.host.events, action, roomHeaders(this), own));
  }

  fireMember(action: string, m: Member, own: [string, string][] = []): void {
    this.host.publish(maintenance(this.host.events, action, memberHeaders(this, m), own));
  }

  /** The engine's talk detection: start-talking / stop-talking of a member that may speak; the floor goes to who talks. */
  private speaker(leg: string, talking: boolean): void {
    const m = this.byLeg.get(leg);
    if (!m || m.gone) return;
    const s = memberState(m);
    if (talking && m.speak && !m.held && !m.talking) {
      s.talking = true;
      this.floor = m.id;
      this.fireMember('start-talking', m);
    } else if (!talking && m.talking) {
      s.talking = false;
      this.fireMember('stop-talking', m);
    }
  }

  /** Ends the room once: every member out, the files and recordings closed, conference-destroy, the mixer gone. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const m of [...this.members.values()]) this.leave(m, 'ended');
    this.player.close();
    this.recordings.stopAll();
    this.fireRoom('conference-destroy');
    this.onEnd(this);
    void this.media.destroy().catch((e: unknown) => this.host.failed(e instanceof Error ? e : new Error(String(e))));
  }
}

/** The member is out: `gone`, its `left` settled with why. */
function left(m: Member, reason: LeaveReason): void {
  const s = memberState(m);
  s.gone = true;
  s.settle(reason);
}
