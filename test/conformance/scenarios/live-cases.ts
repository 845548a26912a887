/**
 * Contact cases opened by a live call: the call's flow runs case_create (the case takes the call as
 * its reference), then the case is worked through the API: by the admin (contact, notes, close,
 * continue) and by a service agent who takes it (get, contact, notes, close).
 */
import type { Step, State } from '../steps';

const SRC = { type: 'tel', target: '+899100000002' };
/** Ids the list waits find (an `until` sees only the response body). */
const ids: Record<string, string> = {};
const caseOf = (callKey: string, k: string) => ({
  url: () => '/contact_cases',
  done: (b: Record<string, unknown>) => {
    const c = ((b.result ?? []) as Record<string, unknown>[]).find((r) => r.reference_id === ids[callKey]);
    if (c) ids[k] = String(c.id);
    return !!c;
  },
});
const c =
  (tail = '') =>
  () =>
    `/contact_cases/${ids.case}${tail}`;
const sa =
  (tail = '') =>
  () =>
    `/service_agents/contact_cases/${ids.case}${tail}`;

export const liveCases: Record<string, Step[]> = {
  live_contact_cases: [
    {
      op: 'post /calls',
      again: true,
      prepare: async (s, live) => {
        s.caseParty = await live.party('case');
      },
      body: (s) => ({
        source: SRC,
        destinations: [{ type: 'sip', target: s.caseParty }],
        actions: [
          { type: 'case_create', option: { name: 'call back', note: 'opened by the flow' } },
          { type: 'sleep', option: { duration: 90_000 } },
        ],
      }),
      save: (s, b) => {
        s.caseCall = String((b.calls as { id: string }[])[0]!.id);
        ids.caseCall = s.caseCall;
      },
    },
    { op: 'get /contact_cases/{id}', url: c(), until: caseOf('caseCall', 'case') },
    { op: 'put /contact_cases/{id}', url: c(), body: () => ({ contact_id: null }) },
    {
      op: 'post /contact_cases/{id}/notes',
      url: c('/notes'),
      body: () => ({ text: 'called back' }),
      save: (_s, b) => {
        ids.note = String(b.id);
      },
    },
    { op: 'get /contact_cases/{id}/notes', url: c('/notes') },
    { op: 'delete /contact_cases/{id}/notes/{note_id}', url: () => `/contact_cases/${ids.case}/notes/${ids.note}` },
    // a service agent takes the case and works it
    { op: 'post /service_agents/contact_cases/{id}/assign', as: 'peer', url: sa('/assign'), body: (s: State) => ({ owner_id: s.peerAgent }) },
    { op: 'get /service_agents/contact_cases/{id}', as: 'peer', url: sa() },
    { op: 'put /service_agents/contact_cases/{id}', as: 'peer', url: sa(), body: () => ({ contact_id: null }) },
    {
      op: 'post /service_agents/contact_cases/{id}/notes',
      as: 'peer',
      url: sa('/notes'),
      body: () => ({ text: 'left a voicemail' }),
      save: (_s, b) => {
        ids.saNote = String(b.id);
      },
    },
    { op: 'get /service_agents/contact_cases/{id}/notes', as: 'peer', url: sa('/notes') },
    { op: 'delete /service_agents/contact_cases/{id}/notes/{note_id}', as: 'peer', url: () => `/service_agents/contact_cases/${ids.case}/notes/${ids.saNote}` },
    { op: 'post /service_agents/contact_cases/{id}/close', as: 'peer', url: sa('/close') },
    // the closed case continued (a new open case), which the admin closes
    {
      op: 'post /contact_cases/{id}/continue',
      url: c('/continue'),
      save: (_s, b) => {
        ids.case = String(b.id);
      },
    },
    { op: 'post /contact_cases/{id}/close', url: c('/close') },
    { op: 'post /calls/{id}/hangup', again: true, url: (s) => `/calls/${s.caseCall}/hangup` },
  ],
};
