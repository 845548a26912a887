import { SubsystemMissing } from './subsystem-missing';

/** ai_summary: its subsystem is not built yet (see SubsystemMissing). */
export class AiSummary extends SubsystemMissing {}
