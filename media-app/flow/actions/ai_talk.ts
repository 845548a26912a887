import { SubsystemMissing } from './subsystem-missing';

/** ai_talk: its subsystem is not built yet (see SubsystemMissing). */
export class AiTalk extends SubsystemMissing {}
