import { SubsystemMissing } from './subsystem-missing';

/** confbridge_join: its subsystem is not built yet (see SubsystemMissing). */
export class ConfbridgeJoin extends SubsystemMissing {}
