/**
 * BullMQ commands for this node (core/commands/protocol.ts). Every job is checked against the
 * closed union first: a malformed envelope, an unknown command type or a payload that does not match
 * fails its job at once (UnrecoverableError, no retry) with the reason, logged without the payload's
 * values, and runs nothing; so does a command its handler refuses with a 4xx ApiError. Delivery is at least once, so every
 * handler is idempotent: originate claims each call once; a command for a call that is gone, or
 * already in the asked state, changes nothing.
 *
 * The queue runs many commands at once, but those about one call (or one conference member) act one
 * after another, in the order they were taken (mute then unmute must not land the other way round). A
 * hangup waits for nothing: it ends whatever the call is doing, a re-INVITE still waiting for the phone
 * included. A command that sets a state (mute, hold, music on hold, silence) and was issued before the
 * last one applied for the same state is skipped: a failed command retried by the queue comes back after
 * the ones sent later, and the last one sent wins.
 */
import { UnrecoverableError } from 'bullmq';
import { ApiError } from '../core/errors';
import type { Logger } from 'pino';
import { checkEnvelope, commandCallId, type Command, type CommandEnvelope } from '../core/commands/protocol';
import type { CallFactory } from './call/factory';
import { extractContext, inSpan, SpanKind } from '../core/tracing';
import { startStoredActiveflow } from './call/stored-activeflow';
import type { CommandOf, CommandRegistry, CommandType } from './subsystem';

type MediaCommand = Command;

export class CommandHandler implements CommandRegistry {
  private readonly handlers = new Map<string, (command: MediaCommand) => Promise<void>>();
  /** The last command taken for each call, settled or not (removed once the call has none running). */
  private readonly tails = new Map<string, Promise<void>>();
  /** When the last applied state-setting command of each state was issued (ms since the epoch). */
  private readonly lastIssued = new Map<string, number>();

  constructor(
    private readonly factory: CallFactory,
    private readonly logger: Logger,
  ) {}

  /** A subsystem's handler for its own command type (media-app/subsystem.ts). */
  on<T extends CommandType>(type: T, handler: (command: CommandOf<T>) => Promise<void>): void {
    if (this.handlers.has(type)) throw new Error(`command ${type} already has a handler`);
    // run() calls it only with a command whose type is `type` (the map is keyed by it)
    this.handlers.set(type, handler as (command: MediaCommand) => Promise<void>);
  }

  /** Runs one job's data: refused (the job fails, not retried) unless it is a valid command envelope. */
  handle(data: unknown): Promise<void> {
    const checked = checkEnvelope(data);
    if (!checked.ok) {
      this.logger.warn({ reason: checked.reason, id: commandIdOf(data) }, 'command refused');
      return Promise.reject(new UnrecoverableError(`command refused: ${checked.reason}`));
    }
    const envelope = checked.value;
    const c = envelope.command;
    // a span of its own, a child of the sender's (the REST request that sent it: core/tracing)
    const attributes = { 'openvoice.command.type': c.type, 'openvoice.command.id': envelope.commandId };
    return inSpan(`command ${c.type}`, { kind: SpanKind.CONSUMER, attributes, parent: extractContext(envelope.trace) }, () => this.take(envelope, c)).catch(refusedOnce);
  }

  private take(envelope: CommandEnvelope, c: Command): Promise<void> {
    this.logger.debug({ command: c.type, id: envelope.commandId }, 'command');
    const callId = c.type === 'call.hangup' ? null : orderKey(c);
    if (!callId) return this.run(c);
    const mine = (this.tails.get(callId) ?? Promise.resolve()).then(() => (this.stale(c, callId, envelope.issuedAt) ? undefined : this.run(c)));
    const tail = mine.catch(() => undefined); // a failed command fails its own job, not the next one
    this.tails.set(callId, tail);
    void tail.then(() => {
      if (this.tails.get(callId) === tail) this.tails.delete(callId);
    });
    return mine;
  }

  /** True when `c` sets a state a later-issued command already set (it is then skipped); notes it otherwise. */
  private stale(c: MediaCommand, callId: string, issuedAt: string): boolean {
    if (!STATE_COMMANDS.has(c.type)) return false;
    const at = Date.parse(issuedAt);
    if (!Number.isFinite(at)) return false;
    const key = `${callId}|${c.type}|${'direction' in c ? c.direction : ''}`;
    const last = this.lastIssued.get(key);
    if (last !== undefined && at < last) {
      this.logger.info({ command: c.type, issuedAt }, 'command issued before the last one applied for the same state: skipped');
      return true;
    }
    this.lastIssued.set(key, at);
    if (this.lastIssued.size > 10_000) {
      // a retry comes within seconds: what is older than a minute is forgotten
      const old = at - 60_000;
      for (const [k, t] of this.lastIssued) if (t < old) this.lastIssued.delete(k);
    }
    return false;
  }

  private async run(c: MediaCommand): Promise<void> {
    switch (c.type) {
      case 'call.originate':
        return this.factory.originate(c.callIds);
      case 'call.hangup':
        return this.factory.get(c.callId)?.hangup('normal');
      case 'call.mute': {
        const call = this.factory.get(c.callId);
        if (call) await this.factory.mute(call, c.direction, c.on);
        return;
      }
      case 'call.recording_start': {
        const call = this.factory.get(c.callId);
        if (call && !call.isEnded) await call.recordings.start({ ...c.options, beep_start: false }, c.recordingId);
        return;
      }
      case 'call.recording_stop': {
        const call = this.factory.get(c.callId);
        if (call) await call.recordings.stop();
        return;
      }
      case 'activeflow.start':
        return startStoredActiveflow(this.factory, c.activeflowId, c.customerId);
      case 'activeflow.stop':
        await this.factory.manager.stop(c.activeflowId);
        return;
      case 'activeflow.continue':
        this.factory.manager.continue(c.activeflowId);
        return;
      default: {
        const handler = this.handlers.get(c.type);
        if (handler) return handler(c);
        this.logger.info({ command: c.type }, 'command type not handled on this node');
      }
    }
  }
}

/**
 * A handler's ApiError of a 4xx kind is a refusal (RECORDING_ALREADY_ACTIVE, NOT_FOUND…) that a retry
 * would only repeat: its job fails at once (UnrecoverableError), named by its reason. A 5xx one
 * (SERVICE_UNAVAILABLE: storage, Redis, a closed bus) and any other error may pass (a media server
 * reconnecting, Postgres failing over): the queue retries it.
 */
function refusedOnce(err: unknown): never {
  if (err instanceof ApiError && err.http < 500) throw new UnrecoverableError(`${err.reason}: ${err.message}`);
  throw err;
}

/** Commands that set a state of a call or conference member: the last one issued wins. */
const STATE_COMMANDS = new Set<string>(['call.mute', 'call.hold', 'call.moh', 'call.silence', 'conference.mute']);

/** What a command must keep its order with: the call it is about, or the conference member. */
function orderKey(c: MediaCommand): string | null {
  const callId = commandCallId(c);
  if (callId) return callId;
  return 'conferencecallId' in c ? `conferencecall:${c.conferencecallId}` : null;
}

/** The envelope's commandId for the log, when it has a short string one. */
function commandIdOf(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const id: unknown = Reflect.get(data, 'commandId');
  return typeof id === 'string' ? id.slice(0, 64) : undefined;
}
