/**
 * What control-api does to a conference beyond plain reads: create (and ask a node to host it),
 * terminate, kick, mute, recordings. Commands go to the hosting node; when no live node hosts the
 * conference, what the node would have written is written here, so nothing stays half-way.
 */
import type { Redis } from 'ioredis';
import type { Db } from '../db/knex';
import { ApiError, serviceUnavailable } from '../errors';
import { EMPTY_UUID, newId } from '../ids';
import { clock } from '../clock';
import { claimClientId } from '../client-ids';
import { CommandBus } from '../commands/bus';
import { EventPublisher, eventStreamKey } from '../events/bus';
import type { MuteDirection, RecordingOptions } from '../commands/contracts';
import { conferencesRepo, type ConferenceCreate, type ConferenceRow } from '../repos/conferences';
import { conferencecallsRepo, type ConferencecallRow } from '../repos/conferencecalls';
import type { RecordingRow } from '../repos/recordings';
import { ConferenceCommands } from './commands';
import { publishConference, publishConferencecall, publishRecording } from './events';
import { isPresent } from './model';

export interface ConferenceApiDeps {
  db: Db;
  redis: Redis;
  bus: CommandBus;
  keyPrefix: string;
  logger: { warn(obj: object, msg: string): void };
}

export const conferenceNotFound = () => new ApiError('RESOURCE_NOT_FOUND', 'conference not found');
export const conferencecallNotFound = () => new ApiError('RESOURCE_NOT_FOUND', 'conferencecall not found');

export class ConferenceApi {
  private readonly commands: ConferenceCommands;
  private readonly events: EventPublisher;

  constructor(private readonly d: ConferenceApiDeps) {
    this.commands = new ConferenceCommands(d.bus, d.redis, d.keyPrefix);
    this.events = new EventPublisher(d.redis, eventStreamKey(d.keyPrefix));
  }

  private get conferences() {
    return conferencesRepo(this.d.db);
  }

  private get calls() {
    return conferencecallsRepo(this.d.db);
  }

  /** Publishing never fails a request whose write is done. */
  private async publish(what: string, p: Promise<unknown>): Promise<void> {
    await p.catch((err: Error) => this.d.logger.warn({ err: err.message }, `could not publish ${what}`));
  }

  async create(input: ConferenceCreate): Promise<ConferenceRow> {
    const id = await claimClientId(this.d.db, 'conferences', input.customer_id, input.id, 'conference');
    const row = await this.conferences.create({ ...input, id, status: 'starting' });
    await this.publish('conference_created', publishConference(this.events, 'conference_created', row));
    try {
      await this.commands.start(row.id);
    } catch (err) {
      // nobody will host it: end it rather than leave it starting forever
      const t = await this.conferences.transition(row.id, 'terminated');
      if (t.changed && t.conference) await this.publish('conference_updated', publishConference(this.events, 'conference_updated', t.conference));
      throw err instanceof ApiError ? err : serviceUnavailable();
    }
    return row;
  }

  /** After PUT: the host re-reads the row (a changed timeout is armed again). Best effort. */
  async refresh(id: string): Promise<void> {
    await this.commands.toHost({ type: 'conference.refresh', conferenceId: id }).catch(() => null);
  }

  /** DELETE: the record goes (404 from now on) and the room ends: terminating, everyone kicked, terminated. */
  async remove(customerId: string, id: string): Promise<ConferenceRow> {
    const row = await this.conferences.softDelete(customerId, id);
    if (!row) throw conferenceNotFound();
    await this.publish('conference_deleted', publishConference(this.events, 'conference_deleted', row));
    if (row.status === 'terminated') return row;
    const sent = await this.commands.toHost({ type: 'conference.terminate', conferenceId: id });
    if (sent) return row;
    // no live host: nobody is in the room any more
    for (const ccId of row.conferencecall_ids) await this.leaved(ccId);
    const t = await this.conferences.transition(id, 'terminated');
    return t.conference ?? row;
  }

  /**
   * Ends the room but keeps the record (Twilio's Conference update Status=completed): terminating,
   * every participant taken out, terminated. An ended one is answered as it is.
   */
  async end(customerId: string, id: string): Promise<ConferenceRow> {
    const row = await this.conferences.getOwned(customerId, id);
    if (!row) throw conferenceNotFound();
    if (row.status === 'terminated' || row.status === 'terminating') return row;
    const sent = await this.commands.toHost({ type: 'conference.terminate', conferenceId: id });
    if (sent) return row;
    for (const ccId of row.conferencecall_ids) await this.leaved(ccId);
    const t = await this.conferences.transition(id, 'terminated');
    if (t.changed && t.conference) await this.publish('conference_updated', publishConference(this.events, 'conference_updated', t.conference));
    return t.conference ?? row;
  }

  private async leaved(conferencecallId: string): Promise<ConferencecallRow | null> {
    const t = await this.calls.transition(conferencecallId, 'leaved');
    if (t.changed && t.conferencecall) {
      await this.publish('conferencecall_leaved', publishConferencecall(this.events, t.conferencecall));
      await this.conferences.removeCall(t.conferencecall.conference_id, conferencecallId);
    }
    return t.conferencecall;
  }

  /** DELETE /conferencecalls/{id}: joining or joined → leaving; the host completes the leave. */
  async kick(customerId: string, id: string): Promise<ConferencecallRow> {
    const cc = await this.calls.getOwned(customerId, id);
    if (!cc) throw conferencecallNotFound();
    if (!isPresent(cc.status)) throw new ApiError('STATE_INVALID', `the conferencecall is ${cc.status}; only a joining or joined one can be removed`);
    const t = await this.calls.transition(id, 'leaving');
    if (!t.changed || !t.conferencecall) throw new ApiError('STATE_INVALID', `the conferencecall is ${t.conferencecall?.status ?? 'gone'}`);
    await this.publish('conferencecall_leaving', publishConferencecall(this.events, t.conferencecall));
    const sent = await this.commands.toHost({ type: 'conference.kick', conferenceId: cc.conference_id, conferencecallId: id });
    if (!sent) return (await this.leaved(id)) ?? t.conferencecall;
    return t.conferencecall;
  }

  /**
   * A joined participant coaches another joined one of its conference (only that one hears it: the
   * mixer's whisper), or no one (null: all hear it again). Kept on its row; the host applies it.
   */
  async coach(customerId: string, id: string, coachCallId: string | null): Promise<ConferencecallRow> {
    const cc = await this.calls.getOwned(customerId, id);
    if (!cc) throw conferencecallNotFound();
    if (cc.status !== 'joined') throw new ApiError('STATE_INVALID', `the conferencecall is ${cc.status}, not joined`);
    const row = await this.calls.setCoach(id, coachCallId);
    if (!row) throw new ApiError('STATE_INVALID', 'the conferencecall is no longer joined');
    const sent = await this.commands.toHost({ type: 'conference.coach', conferenceId: cc.conference_id, conferencecallId: id });
    if (!sent) throw serviceUnavailable('the node hosting the conference is not running');
    return row;
  }

  /** The participant's row was changed (Twilio Participants update): the host reports it (participant-modify); no host, nothing to report. */
  async modified(conferenceId: string, conferencecallId: string): Promise<void> {
    await this.commands.toHost({ type: 'conference.modified', conferenceId, conferencecallId });
  }

  /** Twilio AnnounceUrl: the host plays it to the room (conferencecallId null) or to that participant. */
  async announce(conferenceId: string, conferencecallId: string | null, url: string, method: 'GET' | 'POST'): Promise<void> {
    const sent = await this.commands.toHost({ type: 'conference.announce', conferenceId, conferencecallId, url, method });
    if (!sent) throw serviceUnavailable('the node hosting the conference is not running');
  }

  async mute(customerId: string, id: string, direction: MuteDirection, on: boolean): Promise<ConferencecallRow> {
    const cc = await this.calls.getOwned(customerId, id);
    if (!cc) throw conferencecallNotFound();
    if (cc.status !== 'joined') throw new ApiError('STATE_INVALID', `the conferencecall is ${cc.status}, not joined`);
    const sent = await this.commands.toHost({ type: 'conference.mute', conferenceId: cc.conference_id, conferencecallId: id, direction, on });
    if (!sent) throw serviceUnavailable('the node hosting the conference is not running');
    return cc;
  }

  async recordingStart(customerId: string, id: string, options: RecordingOptions): Promise<ConferenceRow> {
    const c = await this.conferences.getOwned(customerId, id);
    if (!c) throw conferenceNotFound();
    if (c.status !== 'progressing') throw new ApiError('STATE_INVALID', `the conference is ${c.status}, not progressing`);
    const recordingId = newId();
    const claimed = await this.d.db.transaction(async (trx) => {
      const row = await conferencesRepo(trx).claimRecording(id, recordingId);
      if (!row) return null;
      const now = clock.now();
      await trx('recordings').insert({
        id: recordingId,
        customer_id: customerId,
        owner_id: EMPTY_UUID,
        owner_type: '',
        activeflow_id: EMPTY_UUID,
        reference_type: 'conference',
        reference_id: id,
        status: 'initiating',
        format: 'wav',
        on_end_flow_id: options.on_end_flow_id || EMPTY_UUID,
        options: JSON.stringify(options),
        filenames: [],
        tm_create: now,
      });
      return row;
    });
    if (!claimed) throw new ApiError('RECORDING_ALREADY_ACTIVE', 'the conference is already being recorded');
    const sent = await this.commands.toHost({ type: 'conference.recording_start', conferenceId: id, recordingId, options });
    if (!sent) {
      await this.endRecording(id, recordingId);
      throw serviceUnavailable('the node hosting the conference is not running');
    }
    return claimed;
  }

  private async endRecording(conferenceId: string, recordingId: string): Promise<void> {
    const now = clock.now();
    const [rec] = await this.d.db('recordings').where({ id: recordingId }).whereNot({ status: 'ended' }).update({ status: 'ended', tm_end: now, tm_update: now }).returning('*');
    await this.conferences.releaseRecording(conferenceId, recordingId);
    if (rec) await this.publish('recording_finished', publishRecording(this.events, 'recording_finished', rec as RecordingRow));
  }

  async recordingStop(customerId: string, id: string): Promise<ConferenceRow> {
    const c = await this.conferences.getOwned(customerId, id);
    if (!c) throw conferenceNotFound();
    if (!c.recording_id || c.recording_id === EMPTY_UUID) throw new ApiError('RECORDING_NOT_ACTIVE', 'the conference has no active recording');
    const sent = await this.commands.toHost({ type: 'conference.recording_stop', conferenceId: id });
    if (!sent) await this.endRecording(id, c.recording_id);
    return c;
  }
}
