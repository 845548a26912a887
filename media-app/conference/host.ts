/**
 * The conferences this node hosts. Hosting is claimed in Redis (conference-node:<id> → node id,
 * SET NX), like the call → node map: a new conference is claimed by whichever node takes its
 * `conference.start` command, or by the node of the first call that joins when nobody hosts it (or
 * its host's heartbeat expired). A call on another node joins through a signed SIP bridge leg to
 * the host (media-app/xnode/leg.ts; the host's side: accept-leg.ts), see docs/conferences.md.
 */
import type { Redis } from 'ioredis';
import { clock } from '../../core/clock';
import type { Logger } from 'pino';
import { nodeAliveKey } from '../../core/commands/contracts';
import { conferenceNodeKey } from '../../core/conferences/commands';
import { publishConference, publishConferencecall } from '../../core/conferences/events';
import { conferencesRepo, type ConferenceStatusCallback } from '../../core/repos/conferences';
import { conferencecallsRepo, type ConferencecallRow } from '../../core/repos/conferencecalls';
import type { Conference } from '../../media-engine';
import type { CallDeps } from '../call/deps';
import type { CallFactory } from '../call/factory';
import type { CallSession } from '../call/session';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import { sharedSecret } from '../registrar';
import { BridgeLegRefused, joinThroughLeg } from '../xnode/leg';
import { LEG_SECRET_NAME } from '../xnode/token';
import { acceptLeg } from './accept-leg';
import { Room, type LeaveReason } from './room';
import { watchCall } from './party-state';
import { recordingsWriteRepo } from '../../core/repos/recordings';
import { mohFile } from '../kit/moh-source';
import { PolicyHttp } from '../kit/http';
import { ConferenceCallbacks } from '../twiml/conference-callbacks';
import { conferenceRecordingCallbacks } from '../twiml/conference-recording-callbacks';
import { claimTwilioRecord, type TwilioRecord } from '../../core/conferences/twilio-recording';
import { customersRepo } from '../../core/repos/customers';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import { accountSid, callSid, toSid } from '../../core/twilio/sids';
import { announce } from './announce';
import { enterRoom, type EnterRoomResult, type RoomChoice } from './enter-named';
import { engineMix, openMix } from '../media-server/conference';

/** A join or a command that cannot be done here, said plainly (the flow action fails with it). */
export class ConferenceError extends Error {}

/** The conference is hosted by another live node: a call of this node joins it through a bridge leg. */
class HostedElsewhere extends ConferenceError {
  constructor(
    readonly conferenceId: string,
    readonly node: string,
  ) {
    super(`conference ${conferenceId} is hosted on node ${node}`);
  }
}

export interface JoinRequest {
  customerId: string;
  conferenceId: string;
  callId: string;
  activeflowId: string;
}

/** conference_join's participant: how it joins (kept on its conferencecall row, so the host node applies it). */
export interface EnterRequest extends JoinRequest {
  endOnExit?: boolean;
  label?: string;
  startOnEnter?: boolean;
  /** TwiML beep: 'true', 'onEnter', 'onExit' beep into the room; '' or 'false' none. */
  beep?: string;
  /** The call this participant coaches. */
  coachCallId?: string;
  /** The room's status callbacks, unless an earlier participant set them. */
  statusCallback?: ConferenceStatusCallback;
  /** TwiML record="record-from-start": the room is recorded from its start, unless an earlier participant asked. */
  record?: TwilioRecord;
}

/** The room has max_participants in it already (Twilio's 16020): the join is refused, the flow goes on. */
export class ConferenceFull extends ConferenceError {
  constructor(readonly conferenceId: string) {
    super(`conference ${conferenceId} is full`);
  }
}

/** What flow actions (conference_join, confbridge_join) and other subsystems use. */
export interface ConferenceService {
  /** conference_join: the conference is hosted here (claimed if needed) and the call gets a joining participant. */
  enter(req: EnterRequest): Promise<{ conferencecall: ConferencecallRow; pre_flow_id: string; post_flow_id: string }>;
  /**
   * conference_join: enter by id or by name (enter-named.ts), a room found ended by name looked up again,
   * a full room answered as `full`.
   */
  enterRoom(room: RoomChoice, req: Omit<EnterRequest, 'conferenceId'>): Promise<EnterRoomResult>;
  /** The customer's live conference of that name, made (ends_when_empty) when there is none; its id. */
  named(customerId: string, name: string, maxParticipants?: number): Promise<string>;
  /** confbridge_join: the call is in the mix until it leaves; resolves with why it left. */
  join(req: JoinRequest & { signal: AbortSignal }): Promise<LeaveReason>;
  /**
   * The media-engine Conference of a conference hosted on this node, or undefined: its
   * forkAudioStart() gives the whole mix frame by frame and injects audio every member hears
   * (the media_stream WebSocket uses it). A room on another media backend (fsmrf) has none:
   * MediaBackendUnsupported.
   */
  mixOf(conferenceId: string): Conference | undefined;
  /** An INVITE claiming to be a bridge leg from another node (accept-leg.ts): refused unless signed. */
  acceptLeg(req: SrfRequest, res: SrfResponse): Promise<void>;
  /**
   * Resolves once the room has started (a participant entered the mix) or is ending, whichever node
   * hosts it (its row is read); rejects when `signal` aborts.
   */
  waitStarted(conferenceId: string, signal: AbortSignal): Promise<void>;
  /** The node's music on hold, looped to the call until `signal` aborts (a waiting participant's default). */
  holdMusic(callId: string, signal: AbortSignal): Promise<void>;
}

/** How often a waiting participant reads its room's row (it may be hosted on another node). */
const WAIT_POLL_MS = 200;

export class ConferenceHost implements ConferenceService {
  private readonly rooms = new Map<string, Room>();
  private readonly opening = new Map<string, Promise<Room>>();
  /** conference_join's participant per `<conference>:<call>`, until its confbridge_join runs. */
  private readonly entered = new Map<string, string>();

  constructor(
    private readonly deps: CallDeps,
    private readonly factory: CallFactory,
    private readonly nodeId: string,
    private readonly logger: Logger,
  ) {}

  private get redis(): Redis {
    return this.deps.redis;
  }

  private key(k: string): string {
    return this.deps.config.redisKeyPrefix + k;
  }

  room(conferenceId: string): Room | undefined {
    const r = this.rooms.get(conferenceId);
    return r && !r.isOver ? r : undefined;
  }

  mixOf(conferenceId: string): Conference | undefined {
    const room = this.room(conferenceId);
    return room ? engineMix(room.media, "a conference mix's audio stream or transcription") : undefined;
  }

  enterRoom(room: RoomChoice, req: Omit<EnterRequest, 'conferenceId'>): Promise<EnterRoomResult> {
    return enterRoom(this, room, req);
  }

  /** The room of a conference, opened here if this node may host it. */
  ensure(conferenceId: string): Promise<Room> {
    const r = this.room(conferenceId);
    if (r) return Promise.resolve(r);
    let p = this.opening.get(conferenceId);
    if (!p) {
      p = this.open(conferenceId).finally(() => this.opening.delete(conferenceId));
      this.opening.set(conferenceId, p);
    }
    return p;
  }

  /** Claims hosting: free, ours, or held by a node whose heartbeat expired. */
  private async claim(conferenceId: string): Promise<void> {
    const key = this.key(conferenceNodeKey(conferenceId));
    if ((await this.redis.set(key, this.nodeId, 'NX')) === 'OK') return;
    const owner = await this.redis.get(key);
    if (owner === this.nodeId) return;
    if (owner && (await this.redis.exists(this.key(nodeAliveKey(owner))))) {
      throw new HostedElsewhere(conferenceId, owner);
    }
    await this.redis.set(key, this.nodeId);
  }

  private async open(conferenceId: string): Promise<Room> {
    const repo = conferencesRepo(this.deps.db);
    const row = await repo.get(conferenceId);
    if (!row) throw new ConferenceError(`conference ${conferenceId} not found`);
    if (row.status === 'terminating' || row.status === 'terminated') throw new ConferenceError(`conference ${conferenceId} is ${row.status}`);
    await this.claim(conferenceId);
    const media = await openMix(this.deps.media, conferenceId);
    const t = await repo.transition(conferenceId, 'progressing', { node_id: this.nodeId });
    // a room already progressing (its host died, node sweep): this node hosts it now
    if (!t.changed && t.conference?.status === 'progressing' && t.conference.node_id !== this.nodeId) t.conference = (await repo.setNode(conferenceId, this.nodeId)) ?? t.conference;
    if (t.conference?.status !== 'progressing') {
      // ended (DELETE without a host) while we were claiming it: nothing to host
      await media.destroy().catch(() => undefined);
      await this.release(conferenceId);
      throw new ConferenceError(`conference ${conferenceId} is ${t.conference?.status ?? 'gone'}`);
    }
    const callbacks = new ConferenceCallbacks(
      { db: this.deps.db, http: new PolicyHttp(this.deps.egress, this.logger), jwtSecret: this.deps.config.jwtSecret, logger: this.logger, timeoutMs: 10_000 },
      conferenceId,
    );
    const room = new Room(t.conference ?? row, media, {
      db: this.deps.db,
      events: this.deps.events,
      logger: this.logger,
      dataDir: this.deps.config.dataDir,
      startRecordingFlow: async (customerId, flowId, recordingId) => {
        await this.factory.manager.start({ customer_id: customerId, flow_id: flowId, reference_type: 'recording', reference_id: recordingId });
      },
      ended: (r) => this.ended(r),
      report: (h) => callbacks.report(h),
      twilioRecording: (recordingId, record, done) => {
        if (!record.status_callback) return;
        const http = new PolicyHttp(this.deps.egress, this.logger);
        const d = { db: this.deps.db, http, jwtSecret: this.deps.config.jwtSecret, publicUrl: this.deps.config.publicUrl, logger: this.logger, timeoutMs: 10_000 };
        void conferenceRecordingCallbacks(d, conferenceId, recordingId, record.status_callback, done);
      },
    });
    this.rooms.set(conferenceId, room);
    if (t.changed && t.conference) {
      await publishConference(this.deps.events, 'conference_updated', t.conference).catch((err: Error) => this.logger.warn({ err: err.message }, 'could not publish conference_updated'));
    }
    room.arm();
    return room;
  }

  private ended(room: Room): void {
    if (this.rooms.get(room.id) === room) this.rooms.delete(room.id);
    void this.release(room.id);
  }

  /** Drops our hosting claim (only ours). */
  private async release(conferenceId: string): Promise<void> {
    const key = this.key(conferenceNodeKey(conferenceId));
    await this.redis.eval("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0", 1, key, this.nodeId).catch(() => undefined);
  }

  /** Hosting when its start command arrives; a conference hosted elsewhere is left alone. */
  async start(conferenceId: string): Promise<void> {
    await this.ensure(conferenceId).catch((err: Error) => this.logger.debug({ err: err.message, conference: conferenceId }, 'conference not hosted here'));
  }

  async named(customerId: string, name: string, maxParticipants = 0): Promise<string> {
    const { conference, created } = await conferencesRepo(this.deps.db).namedOrCreate(customerId, name, maxParticipants);
    if (created) await publishConference(this.deps.events, 'conference_created', conference).catch(() => undefined);
    return conference.id;
  }

  async enter(req: EnterRequest): Promise<{ conferencecall: ConferencecallRow; pre_flow_id: string; post_flow_id: string }> {
    const row = await conferencesRepo(this.deps.db).getOwned(req.customerId, req.conferenceId);
    if (!row) throw new ConferenceError(`conference ${req.conferenceId} not found`);
    if (row.max_participants > 0) {
      const present = await conferencecallsRepo(this.deps.db).presentIn(req.customerId, row.id);
      if (present.filter((p) => p.reference_id !== req.callId).length >= row.max_participants) throw new ConferenceFull(row.id);
    }
    // hosted on another node: the call joins through a bridge leg in confbridge_join
    const room = await this.ensure(row.id).catch((err: Error) => {
      if (err instanceof HostedElsewhere) return null;
      throw err;
    });
    if (req.statusCallback) await conferencesRepo(this.deps.db).claimStatusCallback(row.id, req.statusCallback);
    if (req.record) await claimTwilioRecord(this.deps.db, row.id, req.record);
    const cc = await this.participant(req);
    const k = `${req.conferenceId}:${req.callId}`;
    this.entered.set(k, cc.id);
    // hung up during the pre-flow: the participant never gets in
    this.factory.get(req.callId)?.once('hangup', () => {
      if (this.entered.get(k) !== cc.id) return;
      this.entered.delete(k);
      void this.kick(req.conferenceId, cc.id).catch(() => undefined);
    });
    const conf = room?.row ?? row;
    return { conferencecall: cc, pre_flow_id: conf.pre_flow_id, post_flow_id: conf.post_flow_id };
  }

  /** The call's joining participant (conference_join made it), or a new one (confbridge_join alone). */
  private async participant(req: EnterRequest): Promise<ConferencecallRow> {
    const repo = conferencecallsRepo(this.deps.db);
    const present = await repo.present(req.conferenceId, req.callId);
    if (present) return present;
    const cc = await repo.create({
      customer_id: req.customerId,
      conference_id: req.conferenceId,
      reference_id: req.callId,
      activeflow_id: req.activeflowId,
      end_on_exit: req.endOnExit ?? false,
      label: req.label ?? '',
      start_on_enter: req.startOnEnter ?? true,
      beep: req.beep ?? '',
      coach_call_id: req.coachCallId ?? null,
    });
    await publishConferencecall(this.deps.events, cc).catch(() => undefined);
    return cc;
  }

  async join(req: JoinRequest & { signal: AbortSignal }): Promise<LeaveReason> {
    const call = this.factory.get(req.callId);
    if (!call || call.isEnded) throw new ConferenceError('the call is not live on this node');
    const row = await conferencesRepo(this.deps.db).get(req.conferenceId);
    if (!row || row.customer_id !== req.customerId) throw new ConferenceError(`conference ${req.conferenceId} not found`);
    const repo = conferencecallsRepo(this.deps.db);
    // the participant conference_join made for this call, if any: kicked during the pre-flow, it stays out
    const entered = this.entered.get(`${req.conferenceId}:${req.callId}`);
    this.entered.delete(`${req.conferenceId}:${req.callId}`);
    const prior = entered ? await repo.get(entered) : null;
    if (prior && (prior.status === 'leaving' || prior.status === 'leaved')) {
      const t = await repo.transition(prior.id, 'leaved');
      if (t.changed && t.conferencecall) await publishConferencecall(this.deps.events, t.conferencecall).catch(() => undefined);
      return 'kicked';
    }
    const cc = prior ?? (await this.participant(req));
    let room: Room;
    try {
      room = await this.ensure(req.conferenceId);
    } catch (err) {
      if (err instanceof HostedElsewhere) return this.joinRemote(call, cc, err.node, req);
      // the participant never gets in: it is out
      const t = await repo.transition(cc.id, 'leaved');
      if (t.changed && t.conferencecall) await publishConferencecall(this.deps.events, t.conferencecall).catch(() => undefined);
      throw err;
    }
    return room.join(call, cc, req.signal, watchCall(call));
  }

  private secret(): Promise<string> {
    return sharedSecret(this.redis, this.deps.config.redisKeyPrefix, LEG_SECRET_NAME);
  }

  /**
   * The call is on this node, the conference on `node`: a bridge leg to it carries the call's audio.
   * The host writes the participant's joined/leaving/leaved; when the host died (or never took the
   * leg) this node writes leaved. A kick while the leg was being set up reads as kicked.
   */
  private async joinRemote(call: CallSession, cc: ConferencecallRow, node: string, req: JoinRequest & { signal: AbortSignal }): Promise<LeaveReason> {
    const repo = conferencecallsRepo(this.deps.db);
    const claims = { conferenceId: req.conferenceId, callId: req.callId, customerId: req.customerId, conferencecallId: cc.id };
    const legDeps = { srf: this.deps.srf, media: this.deps.media, redis: this.redis, keyPrefix: this.deps.config.redisKeyPrefix, logger: this.logger, secret: () => this.secret() };
    const out = async () => {
      const t = await repo.transition(cc.id, 'leaved');
      if (!t.changed || !t.conferencecall) return;
      await publishConferencecall(this.deps.events, t.conferencecall).catch(() => undefined);
      await conferencesRepo(this.deps.db)
        .removeCall(req.conferenceId, cc.id)
        .catch(() => undefined);
    };
    let reason: LeaveReason;
    try {
      reason = await joinThroughLeg(legDeps, call, node, claims, req.signal);
    } catch (err) {
      const now = await repo.get(cc.id);
      if (now && (now.status === 'leaving' || now.status === 'leaved')) {
        await out();
        return 'kicked';
      }
      await out();
      throw err instanceof BridgeLegRefused ? new ConferenceError(err.message) : err;
    }
    if (reason === 'host_lost') await out();
    return reason;
  }

  async waitStarted(conferenceId: string, signal: AbortSignal): Promise<void> {
    const repo = conferencesRepo(this.deps.db);
    for (;;) {
      signal.throwIfAborted();
      const row = await repo.get(conferenceId);
      if (!row || row.tm_start || row.status === 'terminating' || row.status === 'terminated') return;
      await new Promise<void>((resolve) => {
        const t = setTimeout(done, WAIT_POLL_MS);
        function done() {
          clearTimeout(t);
          signal.removeEventListener('abort', done);
          resolve();
        }
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }

  async holdMusic(callId: string, signal: AbortSignal): Promise<void> {
    const call = this.factory.get(callId);
    const file = await mohFile(this.deps.config.dataDir);
    while (call && !call.isEnded && !signal.aborted) {
      const ep = call.endpoint;
      if (!ep) return;
      const stop = () => void ep.stopPlayback().catch(() => undefined);
      signal.addEventListener('abort', stop, { once: true });
      try {
        const r = await ep.play(file);
        // stopped by something else: do not spin
        if (r.interrupted && !signal.aborted) await new Promise((res) => setTimeout(res, 200));
      } finally {
        signal.removeEventListener('abort', stop);
      }
    }
  }

  /** The host's side of a bridge leg (accept-leg.ts). */
  acceptLeg(req: SrfRequest, res: SrfResponse): Promise<void> {
    return acceptLeg({ deps: this.deps, logger: this.logger, secret: () => this.secret(), room: (id) => this.room(id) }, req, res);
  }

  // ---- commands from control-api (at least once: every one is idempotent)

  async terminate(conferenceId: string): Promise<void> {
    const room = this.room(conferenceId);
    if (room) return room.terminate();
    // not hosted any more (node restarted): nobody is in the mix
    const repo = conferencesRepo(this.deps.db);
    const row = await repo.get(conferenceId);
    if (!row || row.status === 'terminated') return;
    for (const id of row.conferencecall_ids) await conferencecallsRepo(this.deps.db).transition(id, 'leaved');
    const t = await repo.transition(conferenceId, 'terminated');
    if (t.changed && t.conference) await publishConference(this.deps.events, 'conference_updated', t.conference).catch(() => undefined);
  }

  /** Twilio AnnounceUrl (announce.ts) in the room hosted here, to all or to one participant; the callback says how it went. */
  async announce(c: { conferenceId: string; conferencecallId: string | null; url: string; method: 'GET' | 'POST' }): Promise<void> {
    const room = this.room(c.conferenceId);
    if (!room) return;
    const cc = c.conferencecallId ? room.memberRow(c.conferencecallId) : null;
    if (c.conferencecallId && !cc) return room.announced(c.url, null, 'the participant is not in the conference');
    const customer = await customersRepo(this.deps.db).get(room.row.customer_id);
    if (!customer) return;
    const params: Record<string, string> = {
      AccountSid: accountSid(customer.id),
      ConferenceSid: toSid('CF', room.id),
      FriendlyName: room.row.name,
      ...(cc ? { CallSid: callSid(cc.reference_id) } : {}),
    };
    const authToken = twilioAuthToken(this.deps.config.jwtSecret, customer.id, customer.twilio_token_generation);
    const failed = await announce({ http: new PolicyHttp(this.deps.egress, this.logger), timeoutMs: 10_000 }, { url: c.url, method: c.method, params, authToken }, room.audience(c.conferencecallId));
    if (failed) this.logger.info({ conference: room.id, reason: failed }, 'conference announcement failed');
    room.announced(c.url, cc, failed);
  }

  async kick(conferenceId: string, conferencecallId: string): Promise<void> {
    const room = this.room(conferenceId);
    if (room) return room.kick(conferencecallId);
    const t = await conferencecallsRepo(this.deps.db).transition(conferencecallId, 'leaved');
    if (t.changed && t.conferencecall) {
      await publishConferencecall(this.deps.events, t.conferencecall).catch(() => undefined);
      await conferencesRepo(this.deps.db).removeCall(conferenceId, conferencecallId);
    }
  }

  /** A recording command for a conference not hosted here any more: its recording ends, the slot frees. */
  async abandonRecording(conferenceId: string, recordingId: string | null): Promise<void> {
    const repo = conferencesRepo(this.deps.db);
    const id = recordingId ?? (await repo.get(conferenceId))?.recording_id;
    if (!id) return;
    const now = clock.now();
    await recordingsWriteRepo(this.deps.db).endUnlessEnded(id, now);
    await repo.releaseRecording(conferenceId, id);
  }

  async stop(): Promise<void> {
    await Promise.allSettled([...this.rooms.values()].map((r) => r.stop()));
  }
}
