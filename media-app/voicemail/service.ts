/**
 * The voicemail subsystem's service (services.voicemail): the two things a flow asks of it, leaving a
 * message and the box's voice menu, each run on the caller's call. What those need beyond the call
 * (the database, Redis for the MWI notice, events, the mail path, the call's endpoint for local audio,
 * speech for the transcript when running) is `VoicemailDeps`, which stays inside the subsystem.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../../core/config';
import type { Knex } from '../../core/db/knex';
import type { EventPublisher } from '../../core/events/bus';
import type { EmailDeps } from '../../core/email/send';
import type { EgressPolicy } from '../../core/net';
import type { PinLockout } from '../../core/voicemail/pin-lockout';
import type { CallEndpoint } from '../media-server/endpoint';
import type { SpeechService } from '../speech/service';
import type { CallPort } from '../flow/call-port';
import type { LeaveOptions, LeaveResult } from './leave';
import type { MenuResult } from './menu';

export interface VoicemailService {
  /** The `voicemail` action: greeting, beep and the caller's message in a box (leave.ts). */
  leave(customerId: string, call: CallPort, o: LeaveOptions, signal: AbortSignal): Promise<LeaveResult>;
  /** The `voicemail_main` action: the box's voice menu (menu.ts). */
  menu(customerId: string, call: CallPort, o: { boxId: string; skipPin: boolean }, signal: AbortSignal): Promise<MenuResult>;
}

/** What the subsystem's parts (leave, menu, login, notify, audio) share. */
export interface VoicemailDeps {
  readonly db: Knex;
  readonly redis: Redis;
  readonly events: EventPublisher;
  readonly config: Readonly<Config>;
  readonly logger: Logger;
  /** The mail path (core/email) for notifications with the audio attached. */
  readonly email: EmailDeps;
  /** The call's endpoint while it is live (local files are played on it, never through play's URLs). */
  endpointOf(callId: string): CallEndpoint | null;
  /** What the AI summary's LLM requests go through (core/net). */
  readonly egress: EgressPolicy;
  /** Wrong PINs across calls, per box and per caller (core/voicemail/pin-lockout.ts). */
  readonly pinLockout: PinLockout;
  /** The node's speech service when it runs (transcripts of messages). */
  speech(): SpeechService | undefined;
  /** Work that outlives the action (transcript, mail): awaited on stop, and by tests. */
  track(work: Promise<unknown>): void;
  /** Resolves when the tracked work is done. */
  idle(): Promise<void>;
}

declare module '../flow/services' {
  interface FlowServices {
    voicemail?: VoicemailService;
  }
}
