import { SubsystemMissing } from './subsystem-missing';

/** case_create: its subsystem is not built yet (see SubsystemMissing). */
export class CaseCreate extends SubsystemMissing {}
