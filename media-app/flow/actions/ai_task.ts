import { SubsystemMissing } from './subsystem-missing';

/** ai_task: its subsystem is not built yet (see SubsystemMissing). */
export class AiTask extends SubsystemMissing {}
