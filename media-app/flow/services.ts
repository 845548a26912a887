/**
 * Subsystems that flow actions reach beyond their own call: conferences, queues, media streams,
 * speech, AI and so on. Each subsystem declares its member from its own module, so adding one never
 * edits a shared file:
 *
 *   declare module '../flow/services' {
 *     interface FlowServices { conferences?: ConferenceService }
 *   }
 *
 * Members are optional: the simulator and tests run without most of them, and an action whose
 * subsystem is absent fails with a clear message (see actions/subsystem-missing.ts).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- empty on purpose: each subsystem adds its service by augmentation
export interface FlowServices {}
