/**
 * A conference room on the switch (README.md beside, "Conferences"): a ConferenceMix over drachtio-fsmrf's
 * Conference (unmodified). The room is `ms.createConference(name)` (its control leg joins with
 * endconf, so destroying it ends the room); a member enters with its endpoint's joinConference
 * (fsmrf's Endpoint.join) and leaves with `conference <name> kick <id>`; mute and deaf, recording
 * start/stop are `conference <name> …` commands on the control leg; the switch's start-/stop-talking
 * events are the members' 'speaker'; the beep is `conference <name> play tone_stream://…`; coaching is
 * `conference <name> relate … nospeak` (coaching.ts). What only the engine's mixer does (the mix's raw
 * frames) has no engine here: conference.ts's engineMix refuses it by name.
 */
import { EventEmitter } from 'node:events';
import type { Conference as FsConference, EslEvent, MediaServer as FsMediaServer } from 'drachtio-fsmrf';
import type { AnnounceTarget, ConferenceMix, MixDirection, MixEvents } from '../conference';
import type { CallEndpoint } from '../endpoint';
import { MediaBackendUnsupported } from '../port';
import { RoomCoaching } from './coaching';
import { MemberSay, type MemberSayRoom } from './conference-say';
import { MemberHold } from './member-hold';
import { FsmrfCallEndpoint } from './endpoint';
import { eslArg, replyText } from './esl-arg';
import { LegSocket } from './leg-socket';
import { endLeg } from './leg-end';
import { memberOp, SIDES } from './member-mute';
import type { SharedPrompts } from './shared-prompts';
import { REAL_TIMERS, type LinkTimers } from './switch-link';

/** A room's name on the switch: `conference` reads spaces, `@profile`, `+flags` and `{vars}` in it; ours are ids. */
const ROOM_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** TwiML's beep as the switch plays it: 300 ms of 1 kHz (mod_tone_stream's teletone). */
const BEEP_TONE = 'tone_stream://%(300,0,1000)';
/** The switch's reply to `conference <room> play <file>`: conference_api_sub_play's `(play) Playing file <file>` (with `+OK ` before it in some builds). */
const PLAYING = /^(\+OK )?\(play\) Playing file /;

/** A recording of the room: its path, how its end is told, its duration timer. */
interface Recording {
  file: string;
  ended: () => void;
  /** the duration timer's handle on the mix's timers, null when none is armed */
  timer: unknown;
}

export class FsmrfMix extends EventEmitter<MixEvents> implements ConferenceMix {
  readonly engine = null;
  destroyed = false;
  /** member id on the switch by endpoint uuid, while the member is in */
  private readonly members = new Map<string, number>();
  /** the room's hold of each member (member-hold.ts), lent to its leg as its music port (leg-music.ts), by uuid */
  private readonly holds = new Map<string, { ep: FsmrfCallEndpoint; hold: MemberHold }>();
  /** the members the room made deaf (mute `out`), by uuid: a hold's end leaves them deaf (member-hold.ts) */
  private readonly deafened = new Set<string>();
  private recording: Recording | null = null;
  /** the control leg's channel socket: its end rejects a command in flight (modesl would leave it pending) */
  private readonly socket: LegSocket;
  /** who coaches whom, as the switch's relate (coaching.ts) */
  private readonly coaching: RoomCoaching;

  private constructor(
    private readonly conf: FsConference,
    /** where the recording-duration timer is armed (backend.ts: the process's, or a test's virtual ones) */
    private readonly timers: LinkTimers,
    /** where an announcement's <Play> is fetched for the switch (backend.ts: FsmrfBackend.promptsIn; null: refused) */
    private readonly prompts: SharedPrompts | null,
  ) {
    super();
    this.socket = new LegSocket(conf.endpoint);
    const relate = async (args: string) => (await this.socket.run('conference relate', () => conf.endpoint.api('conference', `${conf.name} relate ${args}`))).getBody();
    this.coaching = new RoomCoaching(conf.name, relate, () => this.members);
    conf.on('startTalking', (e: EslEvent) => this.talking(e, true));
    conf.on('stopTalking', (e: EslEvent) => this.talking(e, false));
    conf.on('delMember', (e: EslEvent) => this.memberGone(e));
    conf.on('stopRecording', (e: EslEvent) => this.recordingStopped(e.getHeader('Path')));
    // the control leg gone (the switch ended it, its socket lost): the room is gone with it
    conf.endpoint.on('destroy', () => this.gone('worker-died'));
  }

  /** A new room called `name` on the switch; one the switch already has (left by an earlier run) is refused. */
  static async create(ms: FsMediaServer, name: string, timers: LinkTimers = REAL_TIMERS, prompts: SharedPrompts | null = null): Promise<FsmrfMix> {
    // stricter than eslArg (no line break or NUL passes it): the name goes to the switch as it is
    if (!ROOM_NAME.test(name)) throw new Error(`a conference name on the switch is 1-128 of A-Z a-z 0-9 _ . - (got ${JSON.stringify(name.slice(0, 40))})`);
    try {
      return new FsmrfMix(await ms.createConference(name), timers, prompts);
    } catch (err) {
      // fsmrf rejects with the bare string 'conference exists' when `conference <name> list count` finds the room
      if (err instanceof Error) throw err;
      throw new Error(`the switch could not make conference ${name}: ${String(err)}`);
    }
  }

  get name(): string {
    return this.conf.name;
  }

  /** the switch's channel of the room's control leg (its commands go on that channel's socket) */
  get controlLegUuid(): string {
    return this.conf.endpoint.uuid;
  }

  async join(ep: CallEndpoint, opts: { mute?: MixDirection } = {}): Promise<void> {
    if (!(ep instanceof FsmrfCallEndpoint)) throw new MediaBackendUnsupported('fsmrf', 'a conference member whose media is on another media server');
    if (this.destroyed) throw new Error(`conference ${this.name} has ended`);
    const { memberId } = await ep.joinConference({ switchRoom: this.conf.name }, opts);
    // the room ended while the member entered: the switch made a new one of that name for it alone
    if (this.destroyed) {
      await ep.leaveConference().catch(() => undefined);
      throw new Error(`conference ${this.name} has ended`);
    }
    this.members.set(ep.uuid, Number(memberId));
    // a hold of the member is the room's (member-hold.ts), lent to its leg until it leaves or the room ends
    this.holds.get(ep.uuid)?.hold.close();
    const hold = new MemberHold(this.memberRoom(ep), this.timers, this.prompts, () => this.deafened.has(ep.uuid) || ep.deafWanted());
    this.holds.set(ep.uuid, { ep, hold });
    ep.lendMusic(this, hold);
    // a coach already in the room is not heard by the newcomer (unless it is the one coached); a relate
    // that failed is told (the room logs it), not a failed join of a member that is in
    await this.coaching.joined(ep.uuid).catch((err: Error) => void this.emit('coachingFailed', { memberId: ep.uuid, err }));
  }

  async leave(ep: CallEndpoint): Promise<void> {
    this.coaching.left(ep.uuid);
    this.holdEnded(ep.uuid);
    if (!this.members.delete(ep.uuid) || this.destroyed) return;
    await ep.leaveConference();
  }

  async mute(ep: CallEndpoint, direction: MixDirection, on: boolean): Promise<void> {
    const id = this.members.get(ep.uuid);
    if (id === undefined) return;
    const api = (op: string, args: string) => this.socket.run(`conference ${op}`, () => this.conf.endpoint.api('conference', args));
    for (const side of SIDES[direction]) await memberOp(api, this.conf.name, id, side, on);
    if (SIDES[direction].includes('out')) this.deafened[on ? 'add' : 'delete'](ep.uuid);
  }

  /** `ep` heard by `to` only (null: by all again): the switch's relate (coaching.ts). */
  async coach(ep: CallEndpoint, to: CallEndpoint | null): Promise<void> {
    if (this.destroyed) throw new Error(`conference ${this.name} has ended`);
    await this.coaching.coach(ep.uuid, to?.uuid ?? null);
  }

  /**
   * `recording start <path>` (the switch writes the WAV: the path must be one it may write); resolves at
   * its stop-recording (stopRecording, `duration`, the room's end). A file the switch cannot open
   * (start-recording with an Error) rejects.
   */
  async startRecording(path: string, opts: { duration?: number } = {}): Promise<void> {
    if (this.recording) throw new Error(`conference ${this.name} is already recording`);
    const file = eslArg('conference recording file', path);
    const r: Recording = { file, timer: null, ended: () => undefined };
    const done = new Promise<void>((resolve, reject) => {
      const failed = (e: EslEvent) => {
        if (e.getHeader('Path') !== file || !e.getHeader('Error')) return;
        this.recordingStopped(file);
        reject(new Error(`the switch could not record ${file}: ${e.getHeader('Error')}`));
      };
      this.conf.on('startRecording', failed);
      r.ended = () => {
        this.conf.off('startRecording', failed);
        resolve();
      };
    });
    // a start-recording Error may come before the +OK's reply is read: handled until returned
    done.catch(() => undefined);
    this.recording = r;
    try {
      await this.socket.run('conference recording start', () => this.conf.startRecording(file));
    } catch (err) {
      this.recordingStopped(file);
      throw err;
    }
    if (this.recording === r && opts.duration && opts.duration > 0) r.timer = this.timers.set(opts.duration * 1000, () => void this.stopRecording().catch(() => undefined));
    return done;
  }

  async stopRecording(): Promise<void> {
    const r = this.recording;
    if (!r || this.destroyed) return;
    await this.socket.run('conference recording stop', () => this.conf.stopRecording(r.file));
    this.recordingStopped(r.file);
  }

  /** An announcement to the member of `ep` goes through the room (conference-say.ts): its own prompt would wait behind the `conference` application. */
  announceTo(ep: CallEndpoint): AnnounceTarget {
    return new MemberSay(this.memberRoom(ep), ep, this.timers, this.prompts);
  }

  /** The room as one member's announcement or hold sees it. */
  private memberRoom(ep: CallEndpoint): MemberSayRoom {
    return { memberId: () => this.members.get(ep.uuid), command: (args: string, ok: RegExp) => this.command(args, ok), conn: () => this.conf.endpoint.conn };
  }

  /** The member of `uuid` is out (left, gone, the room ended): its hold by the room ends with nothing sent, taken back from its leg. */
  private holdEnded(uuid: string): void {
    this.deafened.delete(uuid);
    const h = this.holds.get(uuid);
    if (!h) return;
    this.holds.delete(uuid);
    h.hold.close();
    h.ep.takeMusicBack(this);
  }

  /** The beep: `conference <name> play tone_stream://…` (the switch's room queues it; every member hears it). */
  async beep(): Promise<void> {
    await this.command(`play ${BEEP_TONE}`, PLAYING);
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.gone('destroyed');
    // not on the control leg's socket: hanging the leg up ends that socket, as it should (the BYE goes by SIP);
    // bounded by that socket's end, the hangup event or a deadline on the mix's timers (leg-end.ts)
    await endLeg(this.conf.endpoint, this.timers);
  }

  /** `conference <name> <args>` on the control leg's socket; a reply `ok` does not match rejects with it. */
  private async command(args: string, ok: RegExp): Promise<void> {
    const evt = await this.socket.run(`conference ${args.split(' ')[0]}`, () => this.conf.endpoint.api('conference', `${this.conf.name} ${args}`));
    const body = evt.getBody();
    if (!ok.test(body)) throw new Error(`conference ${this.name} ${args}: ${replyText(body)}`);
  }

  private talking(e: EslEvent, talking: boolean): void {
    const uuid = e.getHeader('Channel-Call-UUID');
    if (uuid && this.members.has(uuid)) this.emit('speaker', { memberId: uuid, talking });
  }

  /** A member the switch let go by itself (its channel hung up, a kick from elsewhere): no leave is sent for it; the room is told (memberLeft). */
  private memberGone(e: EslEvent): void {
    const uuid = e.getHeader('Channel-Call-UUID');
    if (!uuid || this.members.get(uuid) !== Number(e.getHeader('Member-ID'))) return;
    this.members.delete(uuid);
    this.coaching.left(uuid);
    this.holdEnded(uuid);
    // the member's channel down as it left (switch_channel_event_set_basic_data's Answer-State): it hung up,
    // whether or not the leg's BYE has reached media-app yet
    this.emit('memberLeft', { memberId: uuid, hungUp: e.getHeader('Answer-State') === 'hangup' });
  }

  /** The recording of `file` has ended: its timer cleared, its promise resolved (once). */
  private recordingStopped(file: string | undefined): void {
    const r = this.recording;
    if (!r || r.file !== file) return;
    this.recording = null;
    if (r.timer !== null) this.timers.clear(r.timer);
    r.ended();
  }

  /**
   * The switch's event socket was lost (backend.ts): the room ends now, its control leg hung up if it still
   * can be, that end bounded as destroy's (leg-end.ts: media-app's dialog of the leg forgotten at the deadline).
   */
  serverLost(): void {
    if (this.destroyed) return;
    this.gone('worker-died');
    void endLeg(this.conf.endpoint, this.timers);
  }

  private gone(reason: 'destroyed' | 'worker-died'): void {
    if (this.destroyed) return;
    this.destroyed = true;
    const r = this.recording;
    if (r) this.recordingStopped(r.file);
    this.members.clear();
    for (const uuid of [...this.holds.keys()]) this.holdEnded(uuid);
    this.emit('destroy', { reason });
  }
}
