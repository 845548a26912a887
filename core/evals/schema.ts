/**
 * Voice agent evals (issue 56, docs/evals.md): the scenario a simulated caller plays, the run that
 * places its calls, and the result each call reports. Declared once here in zod: control-api validates
 * requests and documents them (OpenAPI) with these schemas, the runner (evals/) reads the stored
 * scenarios through the same ones, so what the API accepts is exactly what the runner can play.
 */
import { z } from 'zod';

/**
 * The target of a scenario: a number of the customer's, or a flow or an AI configuration of theirs, each
 * reached through the SIP edge under the customer's number that routes to it (core/evals/targets.ts).
 */
export const evalTargetSchema = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('number'),
      target: z.string().regex(/^\+\d{3,20}$/, 'an E.164 number (+ and 3 to 20 digits)'),
    })
    .strict(),
  z.object({ type: z.literal('flow'), target: z.guid().describe("a flow of the customer's, reached under a number whose call flow it is") }).strict(),
  z.object({ type: z.literal('ai'), target: z.guid().describe("an AI configuration of the customer's, reached under a number whose call flow runs it with ai_talk") }).strict(),
]);

/** One scripted caller turn: exactly one of these fields. */
export const evalTurnSchema = z.union([
  z.object({ wait_ms: z.number().int().min(0).max(600_000).describe('stay silent this long') }).strict(),
  z
    .object({
      say: z.string().trim().min(1).max(1000).describe('speak this (espeak-ng) into the call'),
      after_agent_ms: z.number().int().min(0).max(60_000).optional().describe("talk over the agent: start this long after the agent's current (or next) utterance started, as the caller hears it"),
    })
    .strict(),
  z
    .object({
      dtmf: z
        .string()
        .regex(/^[0-9*#A-D]{1,32}$/, 'digits 0-9, *, #, A-D')
        .describe('press these digits (RFC 4733 events)'),
    })
    .strict(),
  z.object({ hangup: z.literal(true).describe('hang up (BYE)') }).strict(),
]);

/** STT providers the caller can hear the agent with (media-engine/stt's names). */
export const EVAL_HEAR_PROVIDERS = ['pocketsphinx', 'deepgram', 'cartesia', 'elevenlabs'] as const;

/** The caller transcribes what it heard of the agent with one of the platform's recognisers. */
export const evalHearSchema = z
  .object({
    provider: z.enum(EVAL_HEAR_PROVIDERS).default('pocketsphinx').describe("the platform's recogniser (a cloud one with the platform's key, through the egress policy)"),
    phrases: z
      .array(z.string().trim().min(1).max(200))
      .min(1)
      .max(200)
      .optional()
      .describe('restrict recognition to these phrases (pocketsphinx: a grammar, each utterance heard as the closest phrase)'),
  })
  .strict();

/** What is mixed into the audio the caller sends, all through the call. */
export const evalBackgroundSchema = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('noise'),
      level_db: z.number().min(-90).max(0).default(-45).describe('RMS level, dBFS'),
      color: z.enum(['white', 'pink']).default('pink'),
    })
    .strict(),
  z
    .object({
      type: z.literal('babble'),
      level_db: z.number().min(-90).max(0).default(-35).describe('RMS level of the summed voices, dBFS'),
      voices: z.number().int().min(2).max(8).default(4).describe('espeak-ng voices talking at once'),
    })
    .strict(),
  z
    .object({
      type: z.literal('echo'),
      gain_db: z.number().min(-60).max(0).default(-20).describe("the agent's audio as heard, fed back at this gain (a speakerphone: -30 to -15)"),
      delay_ms: z.number().int().min(0).max(2000).default(60).describe('after this delay'),
    })
    .strict(),
]);

/** Where the goal caller's LLM is: an AI configuration of the customer's (its vendor and model); absent: the AI ai_talk runs on the call. */
export const evalCallerLlmSchema = z.object({ ai_id: z.guid().describe("an AI configuration of the customer's whose LLM vendor plays the caller") }).strict();

export const EVAL_GOAL_MAX_TURNS = 50;

/**
 * The caller's voices: espeak-ng's variants of the caller's language (m1…m8 male talkers, f1…f5 female,
 * klatt… the Klatt synthesiser's, whisper, croak), every one in espeak-ng's Debian package. Unset: the
 * language's own voice.
 */
export const EVAL_CALLER_VOICES = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8', 'f1', 'f2', 'f3', 'f4', 'f5', 'klatt', 'klatt2', 'klatt3', 'klatt4', 'whisper', 'whisperf', 'croak'] as const;

export const evalCallerSchema = z
  .object({
    language: z
      .string()
      .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'a BCP 47 tag such as en-US')
      .default('en-US'),
    voice: z.enum(EVAL_CALLER_VOICES).optional().describe("the caller's voice: a variant of the language's espeak-ng voice (unset: the language's own)"),
    turns: z.array(evalTurnSchema).min(1).max(100).optional().describe('a scripted caller (or goal)'),
    goal: z.string().trim().min(1).max(2000).optional().describe('an LLM plays the caller turn by turn until it says this is reached (or turns)'),
    persona: z.string().trim().min(1).max(2000).optional().describe('who the goal caller is and how it talks'),
    max_turns: z.number().int().min(1).max(EVAL_GOAL_MAX_TURNS).optional().describe('the goal caller hangs up after this many lines of its own (default 8)'),
    llm: evalCallerLlmSchema.optional(),
    hear: evalHearSchema.optional().describe('transcribe what the caller heard of the agent (a goal caller always hears: pocketsphinx by default)'),
    background: evalBackgroundSchema.optional(),
  })
  .strict()
  .refine((c) => (c.turns === undefined) !== (c.goal === undefined), { message: 'exactly one of turns and goal', path: ['turns'] })
  .refine((c) => c.goal !== undefined || (c.max_turns === undefined && c.llm === undefined), { message: 'max_turns and llm go with goal', path: ['goal'] });

const role = z.enum(['caller', 'agent']);

export const evalCheckSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('transcript_contains'), role, text: z.string().trim().min(1).max(1000) }).strict(),
  z.object({ type: z.literal('transcript_not_contains'), role, text: z.string().trim().min(1).max(1000) }).strict(),
  z.object({ type: z.literal('latency_under'), ms: z.number().int().min(1).max(600_000).describe('every agent turn answers within this (first_rtp_ms)') }).strict(),
  z
    .object({
      type: z.literal('barge_in_within'),
      ms: z.number().int().min(1).max(60_000).describe('after each talk-over starts, the agent audio the caller hears stops within this'),
    })
    .strict(),
  z.object({ type: z.literal('no_self_interruption') }).strict(),
  z
    .object({
      type: z.literal('tool_called'),
      name: z.string().trim().min(1).max(128),
      arguments: z.record(z.string(), z.unknown()).optional().describe("a subset the call's arguments must match"),
    })
    .strict(),
  z.object({ type: z.literal('ended_by'), by: z.enum(['agent', 'caller']).describe("who hung up, by the call's record") }).strict(),
  z.object({ type: z.literal('transferred') }).strict(),
  z
    .object({ type: z.literal('transcript_heard_contains'), text: z.string().trim().min(1).max(1000) })
    .strict()
    .describe("what the caller's recogniser heard of the agent contains this (needs caller.hear or a goal)"),
  z.object({ type: z.literal('judge'), rubric: z.string().trim().min(1).max(4000).describe("what the customer's LLM judges the transcript on") }).strict(),
]);

/** The body of POST /eval_scenarios, and of PUT (every field given again). */
export const evalScenarioInput = z
  .object({
    name: z.string().trim().min(1).max(255),
    target: evalTargetSchema,
    caller: evalCallerSchema,
    checks: z.array(evalCheckSchema).max(50).default([]),
  })
  .strict();

export type EvalTarget = z.output<typeof evalTargetSchema>;
export type EvalTurn = z.output<typeof evalTurnSchema>;
export type EvalCaller = z.output<typeof evalCallerSchema>;
export type EvalHear = z.output<typeof evalHearSchema>;
export type EvalBackground = z.output<typeof evalBackgroundSchema>;
export type EvalCheck = z.output<typeof evalCheckSchema>;
export type EvalScenarioInput = z.output<typeof evalScenarioInput>;

/** Bounds of a run: calls per scenario and calls at once. */
export const EVAL_MAX_CALLS = 50;
export const evalRunInput = z
  .object({
    scenario_ids: z.array(z.guid()).min(1).max(20),
    calls: z.number().int().min(1).max(EVAL_MAX_CALLS).default(1),
    concurrency: z.number().int().min(1).max(EVAL_MAX_CALLS).default(1),
    ai_id: z.guid().optional().describe('the AI whose versions the calls run (with versions): every ai_talk of it on a call of the run'),
    versions: z
      .array(z.number().int().min(1))
      .min(1)
      .max(2)
      .refine((v) => new Set(v).size === v.length, 'versions must differ')
      .optional()
      .describe('run every scenario × calls once per version, side by side (needs ai_id); two versions are compared'),
    baseline_run_id: z.guid().optional().describe('an earlier run of the customer this one is compared with'),
  })
  .strict()
  .refine((r) => (r.ai_id === undefined) === (r.versions === undefined), { message: 'ai_id and versions go together', path: ['versions'] });
export type EvalRunInput = z.output<typeof evalRunInput>;

export const EVAL_RUN_STATUSES = ['running', 'finished', 'failed'] as const;
export type EvalRunStatus = (typeof EVAL_RUN_STATUSES)[number];

export const evalTranscriptLine = z.object({
  role,
  text: z.string(),
  t_ms: z.number().describe('ms after the call was answered (the caller saw its 200 OK)'),
  heard_text: z.string().optional().describe("an agent line: what the caller's recogniser heard of it (caller.hear or a goal caller)"),
  heard_t_ms: z.number().optional().describe('an agent line: when the caller started hearing it, ms after the answer'),
  interrupted: z.boolean().optional().describe("a ConversationRelay app's line: the caller cut it before all of it was said"),
});

/** One stretch of the agent's audio as the caller heard it and its recogniser transcribed it. */
export const evalHeardSegment = z.object({
  t_ms: z.number().describe('its first voiced packet, ms after the answer'),
  end_ms: z.number().describe('its last voiced packet'),
  text: z.string().describe("what the caller's recogniser made of it ('' when nothing)"),
});

/** One agent turn: latency_ms (caller speech end → the reply's first audio out) and the stages ai_talk records. */
export const evalTurnResult = z
  .object({
    latency_ms: z.number().nullable(),
    end_of_turn_wait_ms: z.number().nullable(),
    stt_final_ms: z.number().nullable(),
    llm_first_token_ms: z.number().nullable(),
    tts_first_byte_ms: z.number().nullable(),
    interrupted: z.boolean(),
  })
  .catchall(z.union([z.number(), z.string(), z.boolean(), z.null()]));

export const evalCheckResult = z.object({
  type: z.string(),
  passed: z.boolean(),
  evidence: z.string().describe('what the verdict rests on: the line found, the turns over budget, ...'),
});

/** The most of a tool's result a call's result keeps (characters): the run's results are one row, read whole. */
export const EVAL_TOOL_RESULT_MAX = 4096;

/** One tool the agent called on the call, as ai_talk recorded it (its assistant message's tool call, and the tool message with its result). */
export const evalToolCall = z.object({
  id: z.string().describe("the tool call's id as the LLM gave it"),
  name: z.string(),
  arguments: z.unknown().describe('as recorded: parsed from JSON, or the recorded string when it is not JSON'),
  t_ms: z.number().describe('when ai_talk recorded the assistant message carrying the call, ms after the answer'),
  result: z.string().nullable().describe(`the tool's result as ai_talk recorded it (its tool message), its first ${EVAL_TOOL_RESULT_MAX} characters; null when none was recorded`),
  result_truncated: z.boolean().optional().describe(`true when the recorded result was longer than ${EVAL_TOOL_RESULT_MAX} characters`),
});

/**
 * One overlap of the two sides as the caller had them: the caller's speech (a `say` line, from its first
 * to its last packet) and the agent's audio as heard (voiced packets; an utterance ends at 1 s of silence).
 */
export const evalInterruption = z.object({
  by: z.enum(['caller', 'agent']).describe('who talked over whom: caller, it started while the agent was heard; agent, it started while the caller spoke'),
  t_ms: z.number().describe('when the overlap started (the later side to start), ms after the answer'),
  agent_from_ms: z.number().describe("when the agent's utterance started, as heard"),
  caller_end_ms: z.number().describe("when the caller's speech ended (its last packet)"),
  agent_stopped_after_ms: z.number().describe("from t_ms to the agent's last voiced packet before 1 s of silence or the call's end (barge_in_within's measure)"),
  agent_stopped: z
    .boolean()
    .describe("the agent fell silent before the caller's speech ended and was not heard again while it went on: a barge-in honoured (false: the agent talked on over the caller)"),
  agent_resumed_ms: z.number().nullable().describe('when the agent was heard again while the caller still spoke (after 1 s of silence); null: it was not'),
});

/** Above this much dead air (ms) on both sides, a gap is one of a call's `silences` (exactly this long is not). */
export const EVAL_SILENCE_MS = 2000;

/** A stretch longer than EVAL_SILENCE_MS in which neither side was heard: no caller speech or digits, no voiced agent packet. */
export const evalSilence = z.object({
  t_ms: z.number().describe('when it started, ms after the answer'),
  duration_ms: z.number(),
  after: z.enum(['answer', 'caller', 'agent']).describe('what came before it: the answer, or the side heard last'),
  before: z.enum(['caller', 'agent', 'end']).describe('what ended it: the side heard next, or the end of the call'),
});

/** Both tracks of a call as the caller had them (docs/evals.md "Both tracks of a call"). */
export const evalCallAudio = z.object({
  caller_url: z.string().describe('what the caller sent (its speech, background, digits as their tones): a mono WAV served by GET /eval_runs/{id}/audio/{file}'),
  agent_url: z.string().describe('what the caller heard (the agent): the same'),
  format: z.literal('wav').describe('16-bit PCM, mono'),
  sample_rate: z.literal(8000),
  duration_ms: z.number().describe("each track's length: sample i is i/8 ms after the answer (the transcript's t_ms)"),
  call_ms: z.number().describe('the call from its answer to its end'),
  truncated: z.boolean().describe('the call was longer than the cap (EVALS_AUDIO_MAX_S): its first duration_ms are kept'),
  note: z.string().optional().describe('when truncated, what was kept'),
});

export const evalCallResult = z.object({
  scenario_id: z.string(),
  /** the platform's call (found by the SIP Call-ID the simulated caller sent); '' if none was made */
  call_id: z.string(),
  sip_call_id: z.string(),
  /** what ended the call: caller (its hangup turn), agent (BYE from the platform), refused (a final error response), error */
  ended_by: z.enum(['caller', 'agent', 'refused', 'error']),
  /** the AI version the call was pinned to (a run over versions) */
  ai_version: z.number().int().optional(),
  error: z.string().optional(),
  transcript: z.array(evalTranscriptLine),
  heard: z.array(evalHeardSegment).optional().describe("the agent's audio as the caller heard and transcribed it (caller.hear or a goal caller)"),
  goal: z
    .object({ reached: z.boolean().describe('the caller LLM said the goal was reached (its goal_reached tool)'), turns: z.number().int().describe("the caller's lines said"), reason: z.string() })
    .optional()
    .describe('a goal caller: how it ended'),
  audio: evalCallAudio.optional().describe('both tracks of the call (absent: not answered, or not kept: audio_error)'),
  audio_error: z.string().optional().describe('why the tracks of an answered call were not kept (object storage failing), or are no longer (removed past the retention)'),
  turns: z.array(evalTurnResult),
  tool_calls: z.array(evalToolCall).optional().describe('each tool the agent called, in order ([] for an agent with no ai_talk; absent in results written before they were kept)'),
  interruptions: z.array(evalInterruption).optional().describe('each time one side talked over the other, in order (absent in results written before they were kept)'),
  silences: z.array(evalSilence).optional().describe(`each gap over ${EVAL_SILENCE_MS} ms in which neither side was heard, in order (absent in results written before they were kept)`),
  checks: z.array(evalCheckResult),
  passed: z.boolean().describe('every check passed and the call was placed'),
});

export type EvalTranscriptLine = z.output<typeof evalTranscriptLine>;
export type EvalTurnResult = z.output<typeof evalTurnResult>;
export type EvalCheckResult = z.output<typeof evalCheckResult>;
export type EvalCallResult = z.output<typeof evalCallResult>;
export type EvalHeardSegment = z.output<typeof evalHeardSegment>;
export type EvalCallAudio = z.output<typeof evalCallAudio>;
export type EvalToolCall = z.output<typeof evalToolCall>;
export type EvalInterruption = z.output<typeof evalInterruption>;
export type EvalSilence = z.output<typeof evalSilence>;
