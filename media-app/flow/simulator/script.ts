/** The scripted virtual call a flow is simulated against (the JSON given to scripts/flow-simulate.ts). */
import { z } from 'zod';

const addressSchema = z.object({
  type: z.string().optional(),
  target: z.string().optional(),
  target_name: z.string().optional(),
  name: z.string().optional(),
  detail: z.string().optional(),
});

const ms = z.number().min(0);

export const simScriptSchema = z.object({
  /** Wall-clock time at which the simulation starts (condition_datetime reads it). */
  start_time: z.string().optional(),
  /** call (default): the flow runs on a virtual call; api: no call, media actions are skipped. */
  reference_type: z.enum(['call', 'api']).optional(),
  call: z
    .object({
      id: z.string().optional(),
      direction: z.enum(['incoming', 'outgoing']).optional(),
      status: z.enum(['dialing', 'ringing', 'progressing']).optional(),
      master_call_id: z.string().optional(),
      source: addressSchema.optional(),
      destination: addressSchema.optional(),
    })
    .optional(),
  variables: z.record(z.string(), z.string()).optional(),
  /** What the caller (or the outside world) does, at virtual ms from the start. */
  events: z
    .array(
      z.object({
        at: ms,
        /** Keys pressed, one every `interval` ms (default 100). */
        dtmf: z.string().regex(/^[0-9A-D#*]+$/).optional(),
        interval: ms.optional(),
        /** The caller hangs up. */
        hangup: z.boolean().optional(),
        reason: z.string().optional(),
        /** POST /activeflows/{id}/stop on the running activeflow. */
        stop: z.boolean().optional(),
        /** The continue request that releases a block action. */
        continue: z.boolean().optional(),
      }),
    )
    .optional(),
  /** When the caller speaks (recording end_of_silence, amd without a scripted result). */
  speech: z.array(z.object({ at: ms, duration: ms })).optional(),
  media: z
    .object({
      talk_ms_per_char: ms.optional(),
      talk_min_ms: ms.optional(),
      play_ms: ms.optional(),
      durations: z.record(z.string(), ms).optional(),
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
      hangup_reason: z.string().optional(),
      ended_by: z.enum(['destination', 'master']).optional(),
    })
    .optional(),
  /** Hangup reasons of other calls (hangup with reference_id). */
  hangup_reasons: z.record(z.string(), z.string()).optional(),
  /** Flows fetch_flow, on_complete_flow_id and on_end_flow_id can load. */
  flows: z.array(z.object({ id: z.string(), actions: z.array(z.unknown()), on_complete_flow_id: z.string().optional() })).optional(),
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
