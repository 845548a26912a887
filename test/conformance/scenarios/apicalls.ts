/**
 * Insight activation, the operator's provider calls and storage account deletion. Hold, music on
 * hold, silence and talk need a live call, conference transcription a conference hosted on a node,
 * and the service-agent creation routes a conversation, case or call of the agent: those are listed
 * in coverage.json and run end to end in their own suites (docs/api-fidelity.md).
 */
import type { Step } from '../steps';

const su = { as: 'superadmin' as const };
const VIRTUAL = '+899100000077';

export const apicalls: Record<string, Step[]> = {
  insight: [
    {
      op: 'post /ais', again: true,
      body: (s) => ({ name: 'insight', detail: 'd', type: 'insight', engine_model: 'openai.gpt-5', engine_url: s.llm, parameter: {}, engine_key: 'sk-test-0123456789abcdef', init_prompt: 'Analyse the case.', tts_type: '', tts_voice_id: '', stt_type: '' }),
      save: (s, b) => { s.insightAi = String(b.id); },
    },
    { op: 'post /ais/{id}/activate_insight', url: (s) => `/ais/${s.insightAi}/activate_insight` },
    { op: 'delete /ais/{id}', again: true, url: (s) => `/ais/${s.insightAi}` },
  ],
  providercalls: [
    { op: 'post /providers', again: true, body: () => ({ type: 'sip', hostname: 'pc.example.test', tech_prefix: '', tech_postfix: '', tech_headers: {}, name: 'pc', detail: 'd' }), save: (s, b) => { s.pcProvider = String(b.id); }, ...su },
    { op: 'post /numbers', again: true, body: () => ({ number: VIRTUAL, call_flow_id: '00000000-0000-0000-0000-000000000000', message_flow_id: '00000000-0000-0000-0000-000000000000', name: 'pc', detail: 'd' }), ...su },
    {
      op: 'post /providercalls', ...su,
      body: (s) => ({ provider_id: s.pcProvider, source: { type: 'tel', target: VIRTUAL }, destinations: [{ type: 'tel', target: VIRTUAL }], actions: [{ type: 'hangup' }], anonymous: 'auto' }),
      save: (s, b) => { s.providercall = String(b.id); },
    },
    { op: 'get /providercalls', query: (s) => ({ provider_id: s.pcProvider }), ...su },
    { op: 'get /providercalls/{id}', url: (s) => `/providercalls/${s.providercall}`, ...su },
    { op: 'delete /providercalls/{id}', url: (s) => `/providercalls/${s.providercall}`, ...su },
    { op: 'delete /providers/{id}', again: true, url: (s) => `/providers/${s.pcProvider}`, ...su },
  ],
  // the operator's own customer's account (made on first use), deleted with its (no) files
  storage_account_delete: [
    { op: 'get /storage_account', again: true, save: (s, b) => { s.ownStorageAccount = String(b.id); }, ...su },
    { op: 'delete /storage_accounts/{id}', url: (s) => `/storage_accounts/${s.ownStorageAccount}`, ...su },
  ],
};
