/**
 * The scripted virtual call a flow is simulated against: the JSON given to scripts/flow-simulate.ts
 * and the body of POST /flows/{id}/simulate and /flows/simulate. Shared here so control-api
 * validates exactly what media-app's simulator (media-app/flow/simulator/) runs. Every list and
 * string is bounded: the same script can arrive from any customer.
 */
import { z } from 'zod';

const str = (max = 256) => z.string().max(max);

const addressSchema = z.object({
  type: str(32).optional(),
  target: str().optional(),
  target_name: str().optional(),
  name: str().optional(),
  detail: str().optional(),
});

const ms = z.number().min(0);

/** A canned answer for a flow HTTP request (fetch, webhook_send) when the simulation sends none. */
export const simHttpAnswerSchema = z.object({
  /** The request URL after ${var} substitution; a trailing `*` matches any rest. */
  url: str(2048),
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).optional(),
  status: z.number().int().min(100).max(599).optional(),
  /** The response body (fetch reads it as a JSON array of actions). */
  body: str(65_536).optional(),
});

export const simScriptSchema = z.object({
  /** Wall-clock time at which the simulation starts (condition_datetime reads it). */
  start_time: str(64).optional(),
  /** call (default): the flow runs on a virtual call; api: no call, media actions are skipped. */
  reference_type: z.enum(['call', 'api']).optional(),
  call: z
    .object({
      id: str(64).optional(),
      direction: z.enum(['incoming', 'outgoing']).optional(),
      status: z.enum(['dialing', 'ringing', 'progressing']).optional(),
      master_call_id: str(64).optional(),
      source: addressSchema.optional(),
      destination: addressSchema.optional(),
    })
    .optional(),
  variables: z
    .record(str(128), str(4096))
    .refine((v) => Object.keys(v).length <= 100, 'at most 100 variables')
    .optional(),
  /** What the caller (or the outside world) does, at virtual ms from the start. */
  events: z
    .array(
      z.object({
        at: ms,
        /** Keys pressed, one every `interval` ms (default 100). */
        dtmf: z
          .string()
          .max(64)
          .regex(/^[0-9A-D#*]+$/)
          .optional(),
        interval: ms.optional(),
        /** The caller hangs up. */
        hangup: z.boolean().optional(),
        reason: str(64).optional(),
        /** POST /activeflows/{id}/stop on the running activeflow. */
        stop: z.boolean().optional(),
        /** The continue request that releases a block action. */
        continue: z.boolean().optional(),
      }),
    )
    .max(200)
    .optional(),
  /** When the caller speaks (recording end_of_silence, amd without a scripted result). */
  speech: z
    .array(z.object({ at: ms, duration: ms }))
    .max(200)
    .optional(),
  media: z
    .object({
      talk_ms_per_char: ms.optional(),
      talk_min_ms: ms.optional(),
      play_ms: ms.optional(),
      durations: z
        .record(str(2048), ms)
        .refine((v) => Object.keys(v).length <= 100, 'at most 100 durations')
        .optional(),
      beep_ms: ms.optional(),
      answer_ms: ms.optional(),
    })
    .optional(),
  amd: z.object({ result: z.enum(['human', 'machine', 'notsure']), after_ms: ms.optional() }).optional(),
  connect: z
    .object({
      answer: z.boolean(),
      answer_after_ms: ms.optional(),
      duration_ms: ms.optional(),
      hangup_reason: str(64).optional(),
      ended_by: z.enum(['destination', 'master']).optional(),
    })
    .optional(),
  /** Hangup reasons of other calls (hangup with reference_id). */
  hangup_reasons: z
    .record(str(64), str(64))
    .refine((v) => Object.keys(v).length <= 100, 'at most 100 reasons')
    .optional(),
  /** Flows fetch_flow, on_complete_flow_id and on_end_flow_id can load. */
  flows: z
    .array(z.object({ id: str(64), actions: z.array(z.unknown()).max(1000), on_complete_flow_id: str(64).optional() }))
    .max(20)
    .optional(),
  /** Answers for fetch / webhook_send when the simulation sends no HTTP (the API's simulations never do). */
  http: z.array(simHttpAnswerSchema).max(50).optional(),
  limits: z
    .object({
      maxExecutedActions: z.number().int().min(1).optional(),
      maxLoopCount: z.number().int().min(0).optional(),
      maxCompleteChain: z.number().int().min(0).optional(),
    })
    .optional(),
  /** Virtual time limit; default one hour (the call duration cap). */
  max_ms: ms.optional(),
});

export type SimScript = z.infer<typeof simScriptSchema>;
export type SimHttpAnswer = z.infer<typeof simHttpAnswerSchema>;
