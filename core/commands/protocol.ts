/**
 * Commands from control-api to media-app over BullMQ: a closed union checked on both ends. Each
 * command is named by `type` and carries that command's payload (PAYLOADS below, the one definition);
 * a job's data is an envelope around one command. The sender (core/commands/bus.ts) refuses a command
 * that does not match before it is enqueued; the consumer (media-app/commands.ts) checks every job with
 * checkEnvelope and fails one that does not match, with the reason, without running anything.
 *
 * A reason names the command and the fields that are wrong, never their values (a say's text or a
 * talk's words are the customer's, and nothing a job carries is logged whole).
 */
import { z } from 'zod';

export type MuteDirection = 'in' | 'out' | 'both';

const id = z.string().min(1);
const direction = z.enum(['in', 'out', 'both']);
const recordingOptions = z.strictObject({
  format: z.literal('wav'),
  end_of_silence: z.number().int().min(0),
  end_of_key: z.string(),
  duration: z.number().int().min(0),
  on_end_flow_id: z.string(),
});
export type RecordingOptions = z.infer<typeof recordingOptions>;

/** Every command's payload (all but `type`), by name: the commands media-app takes, and no other. */
const PAYLOADS = {
  // calls (media-app/commands.ts)
  'call.originate': { callIds: z.array(id).min(1), customerId: id },
  'call.hangup': { callId: id },
  'call.mute': { callId: id, direction, on: z.boolean() },
  'call.recording_start': { callId: id, recordingId: id, options: recordingOptions },
  'call.recording_stop': { callId: id },
  /** Run an activeflow control-api already wrote (POST /activeflows); skipped unless still running. */
  'activeflow.start': { activeflowId: id, customerId: id },
  'activeflow.stop': { activeflowId: id },
  'activeflow.continue': { activeflowId: id, actionId: id },
  /** Twilio's call update with Url/Twiml: the running action is interrupted and these actions replace the rest (validated by media-app). */
  'activeflow.redirect': { activeflowId: id, actions: z.array(z.record(z.string(), z.unknown())) },
  // a live call's media (media-app/call/controls.ts); each states the wanted end state
  /** Hold by re-INVITE (RFC 3264 §8.4): the party gets a=sendonly (music on hold playing) or a=inactive. */
  /** `music`: what the held party hears ('' none, else a URL); absent: the customer's or the node's (media-app/call/hold-music.ts). */
  'call.hold': { callId: id, on: z.boolean(), music: z.string().max(2048).optional() },
  /** Music on hold played to the party, in a loop, until turned off. */
  'call.moh': { callId: id, on: z.boolean() },
  /** One-way silence: the party hears nothing; its audio is still received, bridged and recorded. */
  'call.silence': { callId: id, on: z.boolean() },
  /** Text spoken into the call by the platform's TTS (after what is already playing). */
  'call.talk': { callId: id, text: z.string(), language: z.string(), provider: z.string(), voiceId: z.string() },
  // conferences (media-app/conference/)
  /** Host a new conference (starting → progressing). */
  'conference.start': { conferenceId: id },
  /** PUT changed the conference (its timeout): the host re-reads it. */
  'conference.refresh': { conferenceId: id },
  /** DELETE: progressing → terminating, every participant is kicked, then terminated. */
  'conference.terminate': { conferenceId: id },
  /** DELETE /conferencecalls/{id}: the participant leaves (leaving → leaved). */
  'conference.kick': { conferenceId: id, conferencecallId: id },
  'conference.mute': { conferenceId: id, conferencecallId: id, direction, on: z.boolean() },
  /** The participant's coach_call_id changed: the host whispers it to that call's participant, or to all again. */
  'conference.coach': { conferenceId: id, conferencecallId: id },
  /** Twilio Participants update changed the participant's row (EndConferenceOnExit, BeepOnExit, Coaching): participant-modify. */
  'conference.modified': { conferenceId: id, conferencecallId: id },
  /** Twilio AnnounceUrl: the document (or audio) played to the whole room (conferencecallId null) or to one participant. */
  'conference.announce': { conferenceId: id, conferencecallId: id.nullable(), url: z.string().regex(/^https?:\/\//i), method: z.enum(['GET', 'POST']) },
  /** The recording row exists (initiating) and holds the conference's recording slot. */
  'conference.recording_start': { conferenceId: id, recordingId: id, options: recordingOptions },
  'conference.recording_stop': { conferenceId: id },
  // groupcalls and transfers (media-app/groupcall/, media-app/transfer/)
  'groupcall.start': { groupcallId: id, customerId: id },
  'groupcall.hangup': { groupcallId: id },
  'transfer.start': { transferId: id, callId: id },
  // call park (media-app/pbx/park.ts): the slot is claimed by control-api (core/pbx/park-slots.ts) before the command
  'park.call': { callId: id, customerId: id, slot: z.number().int().min(0) },
  /** Rings the destination and gives it the call parked in the slot on answer. */
  'park.retrieve': { customerId: id, slot: z.number().int().min(0), destination: z.strictObject({ type: z.string(), target: z.string(), target_name: z.string().optional() }) },
  // supervisor (media-app/pbx/supervise.ts): the supervision is claimed by control-api (core/pbx/supervisions.ts) before the command
  /** Rings the destination; its answer supervises the call in `mode`. */
  'supervise.start': {
    supervisionId: id,
    callId: id,
    customerId: id,
    mode: z.enum(['listen', 'whisper', 'barge']),
    destination: z.strictObject({ type: z.string(), target: z.string(), target_name: z.string().optional() }),
  },
  'supervise.mode': { callId: id, supervisionId: id, mode: z.enum(['listen', 'whisper', 'barge']) },
  /** The supervisor's call is hung up; the supervised call goes on. */
  'supervise.stop': { callId: id, supervisionId: id },
  // queues (media-app/queue/)
  /** Takes the caller out of the queue; its flow goes on with the next action (or ends if in service). */
  'queuecall.kick': { callId: id, queuecallId: id },
  // speech (media-app/speech/): a say carries its number, so a redelivered or reordered say is spoken once and in order
  'speaking.start': { speakingId: id, referenceType: z.enum(['call', 'confbridge']), referenceId: id },
  'speaking.say': { speakingId: id, seq: z.number().int().min(0), text: z.string() },
  'speaking.stop': { speakingId: id },
  /** drop every say numbered up to `upTo` (spoken, speaking or queued); the session stays open */
  'speaking.flush': { speakingId: id, upTo: z.number().int().min(0) },
  /** callId: the call, or the conference of a confbridge transcribe */
  'transcribe.start': { transcribeId: id, callId: id, phrases: z.array(z.string()).optional() },
  'transcribe.stop': { transcribeId: id, callId: id },
  'transcribe.recording': { transcribeId: id },
} as const satisfies Record<string, z.ZodRawShape>;

export type CommandType = keyof typeof PAYLOADS;
/** One command: its `type` and that command's payload. */
export type CommandOf<T extends CommandType> = { type: T } & z.infer<z.ZodObject<(typeof PAYLOADS)[T]>>;
/** The closed union of every command, discriminated by `type`. */
export type Command = { [T in CommandType]: CommandOf<T> }[CommandType];

/** What a job carries: the command, its id (the BullMQ jobId) and when it was issued (ISO 8601). */
export interface CommandEnvelope {
  commandId: string;
  issuedAt: string;
  command: Command;
  /** W3C trace context of the sender (`traceparent`, core/tracing); absent when tracing is off. */
  trace?: { traceparent: string; tracestate?: string };
}

export function isCommandType(name: unknown): name is CommandType {
  return typeof name === 'string' && Object.hasOwn(PAYLOADS, name);
}

const SCHEMAS = new Map<string, z.ZodType>(Object.entries(PAYLOADS).map(([type, shape]) => [type, z.strictObject({ type: z.literal(type), ...shape })]));

const traceSchema = z.strictObject({ traceparent: z.string().regex(/^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/), tracestate: z.string().max(512).optional() });
const envelopeSchema = z.strictObject({ commandId: id, issuedAt: z.iso.datetime({ offset: true }), command: z.unknown(), trace: traceSchema.optional() });

/** A check's answer: the value as typed, or why it was refused. */
export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

/** The longest part of a refused command's name a reason repeats. */
const NAME_MAX = 64;

function describe(error: z.ZodError): string {
  return error.issues
    .map((i) => {
      const at = i.path.length ? i.path.map(String).join('.') : '(command)';
      const keys = i.code === 'unrecognized_keys' ? `: ${i.keys.join(', ')}` : '';
      return `${at}: ${i.code}${keys}`;
    })
    .join('; ');
}

/** `m` as a Command, once its type's schema accepted it (the schema is the union's member of that type). */
function accepted(m: unknown, result: { success: boolean }): m is Command {
  return result.success;
}

/** A command media-app takes (the union above, payload checked), else why not. */
export function checkCommand(m: unknown): Checked<Command> {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return { ok: false, reason: 'a command is an object' };
  const type: unknown = Reflect.get(m, 'type');
  if (typeof type !== 'string') return { ok: false, reason: 'the command has no type' };
  const schema = SCHEMAS.get(type);
  if (!schema) return { ok: false, reason: `unknown command type "${type.slice(0, NAME_MAX)}"` };
  const parsed = schema.safeParse(m);
  if (accepted(m, parsed)) return { ok: true, value: m };
  return { ok: false, reason: `malformed ${type}: ${parsed.error ? describe(parsed.error) : 'refused'}` };
}

/** A job's data media-app runs: an envelope around one valid command, else why not. */
export function checkEnvelope(data: unknown): Checked<CommandEnvelope> {
  const env = envelopeSchema.safeParse(data);
  if (!env.success) return { ok: false, reason: `malformed command envelope: ${describe(env.error)}` };
  const command = checkCommand(env.data.command);
  if (!command.ok) return command;
  const { commandId, issuedAt, trace } = env.data;
  return { ok: true, value: { commandId, issuedAt, command: command.value, ...(trace ? { trace } : {}) } };
}

/** Thrown by the sender for a command that does not match the union: nothing was enqueued. */
export class CommandRefusedError extends Error {
  override readonly name = 'CommandRefusedError';
}

/** The call a command is about, when it is about one live call (its node is then the owner). */
export function commandCallId(c: Command): string | null {
  return 'callId' in c ? c.callId : null;
}
