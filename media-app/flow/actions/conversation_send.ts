import { SubsystemMissing } from './subsystem-missing';

/** conversation_send: its subsystem is not built yet (see SubsystemMissing). */
export class ConversationSend extends SubsystemMissing {}
