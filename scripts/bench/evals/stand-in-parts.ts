/** The vendors of the evals benchmark's agent, a stand-in process each (stand-ins.ts, started by run.ts). */
export const STAND_IN_PARTS = ['llm', 'stt', 'tts'] as const;
export type StandInPart = (typeof STAND_IN_PARTS)[number];
