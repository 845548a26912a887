/**
 * Hold, music on hold, silence and talk on a live call (a sipp party on loopback, live.ts), the
 * transcription of a live conference's mix, insight activation, the operator's provider calls,
 * storage account deletion and the Paddle portal of a linked billing account (a stand-in of Paddle's
 * API on loopback). The service-agent creation routes need a conversation, case or call of the agent
 * and /providers/setup the carrier's API: listed in coverage.json with the suites that run them.
 */
import type { State, Step } from '../steps';
import { dialParty } from './common';

const su = { as: 'superadmin' as const };
const VIRTUAL = '+899100000077';

const EMPTY = '00000000-0000-0000-0000-000000000000';
const url =
  (k: string, tail = '') =>
  (s: State) =>
    `/calls/${s[k]}${tail}`;
const up = (k: string) => ({ url: (s: State) => `/calls/${s[k]}`, done: (b: Record<string, unknown>) => b.status === 'progressing' });

export const apicalls: Record<string, Step[]> = {
  live_call_controls: [
    dialParty('heldCall', () => [{ type: 'sleep', option: { duration: 90_000 } }]),
    { op: 'post /calls/{id}/hold', url: url('heldCall', '/hold'), until: up('heldCall') },
    { op: 'post /calls/{id}/moh', url: url('heldCall', '/moh') },
    { op: 'delete /calls/{id}/moh', url: url('heldCall', '/moh') },
    { op: 'delete /calls/{id}/hold', url: url('heldCall', '/hold') },
    { op: 'post /calls/{id}/silence', url: url('heldCall', '/silence') },
    { op: 'delete /calls/{id}/silence', url: url('heldCall', '/silence') },
    { op: 'post /calls/{id}/talk', url: url('heldCall', '/talk'), body: () => ({ text: 'Thank you for holding.', language: 'en-US', provider: '', voice_id: '' }) },
    { op: 'post /calls/{id}/hangup', again: true, url: url('heldCall', '/hangup') },
  ],
  live_conference_transcribe: [
    {
      op: 'post /conferences',
      again: true,
      body: () => ({ type: 'conference', name: 'tr', detail: '', timeout: 0, data: {}, pre_flow_id: EMPTY, post_flow_id: EMPTY }),
      save: (s, b) => {
        s.trRoom = String(b.id);
      },
    },
    dialParty('trRoomCall', (s) => [{ type: 'conference_join', option: { conference_id: s.trRoom } }]),
    {
      op: 'post /conferences/{id}/transcribe_start',
      url: (s) => `/conferences/${s.trRoom}/transcribe_start`,
      body: () => ({ language: 'en-US' }),
      until: { url: (s) => `/conferences/${s.trRoom}`, done: (b) => b.status === 'progressing' && Array.isArray(b.conferencecall_ids) && b.conferencecall_ids.length > 0 },
    },
    { op: 'post /conferences/{id}/transcribe_stop', url: (s) => `/conferences/${s.trRoom}/transcribe_stop` },
    { op: 'post /calls/{id}/hangup', again: true, url: url('trRoomCall', '/hangup') },
  ],
  insight: [
    {
      op: 'post /ais',
      again: true,
      body: (s) => ({
        name: 'insight',
        detail: 'd',
        type: 'insight',
        engine_model: 'openai.gpt-5',
        engine_url: s.llm,
        parameter: {},
        engine_key: 'sk-test-0123456789abcdef',
        init_prompt: 'Analyse the case.',
        tts_type: '',
        tts_voice_id: '',
        stt_type: '',
      }),
      save: (s, b) => {
        s.insightAi = String(b.id);
      },
    },
    { op: 'post /ais/{id}/activate_insight', url: (s) => `/ais/${s.insightAi}/activate_insight` },
    { op: 'delete /ais/{id}', again: true, url: (s) => `/ais/${s.insightAi}` },
  ],
  providercalls: [
    {
      op: 'post /providers',
      again: true,
      body: () => ({ type: 'sip', hostname: 'pc.example.test', tech_prefix: '', tech_postfix: '', tech_headers: {}, name: 'pc', detail: 'd' }),
      save: (s, b) => {
        s.pcProvider = String(b.id);
      },
      ...su,
    },
    {
      op: 'post /numbers',
      again: true,
      body: () => ({ number: VIRTUAL, call_flow_id: '00000000-0000-0000-0000-000000000000', message_flow_id: '00000000-0000-0000-0000-000000000000', name: 'pc', detail: 'd' }),
      ...su,
    },
    {
      op: 'post /providercalls',
      ...su,
      body: (s) => ({ provider_id: s.pcProvider, source: { type: 'tel', target: VIRTUAL }, destinations: [{ type: 'tel', target: VIRTUAL }], actions: [{ type: 'hangup' }], anonymous: 'auto' }),
      save: (s, b) => {
        s.providercall = String(b.id);
      },
    },
    { op: 'get /providercalls', query: (s) => ({ provider_id: s.pcProvider }), ...su },
    { op: 'get /providercalls/{id}', url: (s) => `/providercalls/${s.providercall}`, ...su },
    { op: 'delete /providercalls/{id}', url: (s) => `/providercalls/${s.providercall}`, ...su },
    { op: 'delete /providers/{id}', again: true, url: (s) => `/providers/${s.pcProvider}`, ...su },
  ],
  // the operator links the customer's billing account (accounts.ts) to a Paddle customer; the customer's
  // admin opens its portal (a stand-in of Paddle's API on loopback, test/support/paddle-server.ts)
  paddle_portal: [
    { op: 'put /billing_accounts/{id}', again: true, url: (s) => `/billing_accounts/${s.billingAccount}`, body: () => ({ paddle_customer_id: 'ctm_01h8bxq9f3e4t5a6g7h8j9k0' }), ...su },
    { op: 'post /billing_account/paddle_portal_session' },
    { op: 'put /billing_accounts/{id}', again: true, url: (s) => `/billing_accounts/${s.billingAccount}`, body: () => ({ paddle_customer_id: '' }), ...su },
  ],
  // the operator's own customer's account (made on first use), deleted with its (no) files
  storage_account_delete: [
    {
      op: 'get /storage_account',
      again: true,
      save: (s, b) => {
        s.ownStorageAccount = String(b.id);
      },
      ...su,
    },
    { op: 'delete /storage_accounts/{id}', url: (s) => `/storage_accounts/${s.ownStorageAccount}`, ...su },
  ],
};
