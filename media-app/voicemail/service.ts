/**
 * The voicemail subsystem's service (services.voicemail): what the `voicemail` and `voicemail_main`
 * actions need beyond their call: the database, Redis (the MWI notice), events, the mail path, the
 * call's endpoint for local audio (greetings, messages), and speech for the transcript when running.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../../core/config';
import type { Knex } from '../../core/db/knex';
import type { EventPublisher } from '../../core/events/bus';
import type { EmailDeps } from '../../core/email/send';
import type { EgressPolicy } from '../../core/net';
import type { PinLockout } from '../../core/voicemail/pin-lockout';
import type { Endpoint } from '../../media-engine';
import type { SpeechService } from '../speech/service';

export interface VoicemailService {
  readonly db: Knex;
  readonly redis: Redis;
  readonly events: EventPublisher;
  readonly config: Readonly<Config>;
  readonly logger: Logger;
  /** The mail path (core/email) for notifications with the audio attached. */
  readonly email: EmailDeps;
  /** The call's endpoint while it is live (local files are played on it, never through play's URLs). */
  endpointOf(callId: string): Endpoint | null;
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
