/** Lists of records the platform makes itself (calls, recordings, billings...): read empty or as they are. */
import type { Step } from '../steps';
import { PAGINATED } from './common';

const list = (op: string, query?: Record<string, string>): Step => ({ op: `get ${op}`, ...(query ? { query: () => query } : {}) });

export const lists: Record<string, Step[]> = {
  lists: [
    list('/calls'),
    list('/groupcalls'),
    list('/conferencecalls'),
    list('/queuecalls'),
    list('/campaigncalls'),
    list('/recordings'),
    { ...list('/speakings'), differs: PAGINATED },
    list('/transcribes'),
    list('/emails'),
    list('/messages'),
    list('/billing_accounts'),
    list('/billings'),
    list('/storage_account'),
    list('/aisummaries'),
    list('/contact_cases'),
    list('/contact_cases/unresolved'),
    { op: 'get /contact_interactions', query: (s) => ({ contact_id: s.contact2 }) },
    { op: 'get /contact_peer_events', query: (s) => ({ contact_id: s.contact2 }) },
  ],
};
