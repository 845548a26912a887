import { SubsystemMissing } from './subsystem-missing';

/** queue_join: its subsystem is not built yet (see SubsystemMissing). */
export class QueueJoin extends SubsystemMissing {}
