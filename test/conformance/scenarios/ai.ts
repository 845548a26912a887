/** Storage files, RAG knowledge bases, AIs, teams, AI calls and messages, prompt proposals. */
import { crud, type Known, type Step, type State } from '../steps';
import { EMPTY, PAGINATED, DOWNLOAD_200 } from './common';

const KEY = 'sk-test-0123456789abcdef';
const FILE_SOURCE_URL: Known = {
  reason: 'a storage-file source has source_url "" (it has no URL); the reference types source_url as format uri, which refuses the empty string',
  shows: /^body does not match the reference schema: \/sources\/\d+\/source_url must match format "uri" \S+$/,
};

const aiBody = (s: State, name: string) => ({
  name,
  detail: 'd',
  engine_model: 'openai.gpt-5',
  engine_url: s.llm,
  parameter: {},
  engine_key: KEY,
  init_prompt: 'You are helpful.',
  tts_type: '',
  tts_voice_id: '',
  stt_type: '',
});
const kbFile = (name: string) => ({ fields: { type: 'rag' }, file: { field: 'file', name, type: 'text/plain', content: Buffer.from('The shop opens at nine.\n\nParking is behind the building.') } });

export const ai: Record<string, Step[]> = {
  storage_files: crud({
    collection: '/storage_files',
    name: 'file',
    keep: true,
    create: () => undefined,
    extra: [{ op: 'get /storage_files/{id}/file', differs: DOWNLOAD_200, url: (s) => `/storage_files/${s.file}/file` }],
  }).map((st) => (st.op === 'post /storage_files' ? { ...st, body: undefined, multipart: () => kbFile('kb.txt') } : st)),
  rags: crud({
    collection: '/rags',
    name: 'rag',
    create: () => ({ name: 'kb', description: 'd' }),
    update: () => ({ name: 'kb2', description: 'd2' }),
    extra: [
      {
        op: 'post /rags/{id}/sources',
        differs: FILE_SOURCE_URL,
        url: (s) => `/rags/${s.rag}/sources`,
        body: (s) => ({ storage_file_ids: [s.file] }),
        save: (s, b) => {
          s.ragSource = String((b.sources as Record<string, unknown>[] | undefined)?.[0]?.id);
        },
      },
      { op: 'delete /rags/{id}/sources/{source_id}', url: (s) => `/rags/${s.rag}/sources/${s.ragSource}` },
    ],
  }),
  ais: crud({
    collection: '/ais',
    name: 'ai',
    keep: true,
    create: (s) => aiBody(s, 'bot'),
    update: (s) => ({ ...aiBody(s, 'bot2'), init_prompt: 'You are brief.' }),
    extra: [
      { op: 'post /ais/{id}/direct-hash-regenerate', url: (s) => `/ais/${s.ai}/direct-hash-regenerate` },
      {
        op: 'get /ais/{id}/prompt_histories',
        differs: PAGINATED,
        url: (s) => `/ais/${s.ai}/prompt_histories`,
        save: (s, b) => {
          s.promptHistory = String((b.result as Record<string, unknown>[])[0]?.id);
        },
      },
      { op: 'get /ais/{id}/prompt_histories/{history_id}', url: (s) => `/ais/${s.ai}/prompt_histories/${s.promptHistory}` },
    ],
  }),
  teams: crud({
    collection: '/teams',
    name: 'team',
    create: (s) => ({ name: 'desk', detail: 'd', start_member_id: '11111111-1111-4111-8111-111111111111', members: [{ id: '11111111-1111-4111-8111-111111111111', name: 'greeter', ai_id: s.ai }] }),
    update: (s) => ({ name: 'desk2', detail: 'd2', start_member_id: '11111111-1111-4111-8111-111111111111', members: [{ id: '11111111-1111-4111-8111-111111111111', name: 'greeter', ai_id: s.ai }] }),
    extra: [{ op: 'post /teams/{id}/direct-hash-regenerate', url: (s) => `/teams/${s.team}/direct-hash-regenerate` }],
  }),
  aicalls: [
    {
      op: 'post /aicalls',
      body: (s) => ({ assistance_type: 'ai', assistance_id: s.ai, reference_type: 'conversation', reference_id: EMPTY }),
      save: (s, b) => {
        s.aicall = String(b.id);
      },
    },
    { op: 'get /aicalls' },
    { op: 'get /aicalls/{id}', url: (s) => `/aicalls/${s.aicall}` },
    {
      op: 'post /aimessages',
      body: (s) => ({ aicall_id: s.aicall, role: 'user', content: 'When do you open?' }),
      save: (s, b) => {
        s.aimessage = String(b.id);
      },
    },
    { op: 'get /aimessages', query: (s) => ({ aicall_id: s.aicall }) },
    { op: 'get /aimessages/{id}', url: (s) => `/aimessages/${s.aimessage}` },
    { op: 'get /service_agents/aicalls' },
    { op: 'delete /aimessages/{id}', url: (s) => `/aimessages/${s.aimessage}` },
    { op: 'get /aicalls/{id}/participants', url: (s) => `/aicalls/${s.aicall}/participants` },
    { op: 'get /ais/{id}/participants', url: (s) => `/ais/${s.ai}/participants` },
    { op: 'post /aicalls/{id}/terminate', url: (s) => `/aicalls/${s.aicall}/terminate` },
    {
      op: 'post /aiaudits',
      body: (s) => ({ aicall_id: s.aicall, language: 'en-US' }),
      save: (s, b) => {
        s.aiaudit = String((b.result as Record<string, unknown>[])[0]?.id);
      },
    },
    { op: 'get /aiaudits/{id}', url: (s) => `/aiaudits/${s.aiaudit}`, until: { url: (s) => `/aiaudits/${s.aiaudit}`, done: (b) => b.status !== 'progressing' } },
    { op: 'get /aiaudits', query: (s) => ({ aicall_id: s.aicall }) },
    { op: 'delete /aiaudits/{id}', url: (s) => `/aiaudits/${s.aiaudit}` },
    { op: 'delete /aicalls/{id}', url: (s) => `/aicalls/${s.aicall}` },
  ],
  // A summary of a conference (made through the API; it has no transcript yet, so the summary may end failed later).
  aisummaries: [
    {
      op: 'post /conferences',
      again: true,
      body: () => ({ type: 'conference', name: 'sum', detail: '', timeout: 0, data: {}, pre_flow_id: EMPTY, post_flow_id: EMPTY }),
      save: (s, b) => {
        s.sumConference = String(b.id);
      },
    },
    {
      op: 'post /aisummaries',
      body: (s) => ({ on_end_flow_id: EMPTY, reference_type: 'conference', reference_id: s.sumConference, language: 'en-US' }),
      save: (s, b) => {
        s.summary = String(b.id);
      },
    },
    { op: 'get /aisummaries/{id}', url: (s) => `/aisummaries/${s.summary}` },
    { op: 'delete /aisummaries/{id}', url: (s) => `/aisummaries/${s.summary}` },
  ],
  aipromptproposals: [
    {
      op: 'post /aipromptproposals',
      body: (s) => ({ ai_id: s.ai, audit_ids: [], language: 'en-US' }),
      save: (s, b) => {
        s.proposal = String(b.id);
      },
    },
    { op: 'get /aipromptproposals', query: (s) => ({ ai_id: s.ai }) },
    { op: 'get /aipromptproposals/{id}', url: (s) => `/aipromptproposals/${s.proposal}` },
    {
      op: 'post /aipromptproposals/{id}/accept',
      url: (s) => `/aipromptproposals/${s.proposal}/accept`,
      until: { url: (s) => `/aipromptproposals/${s.proposal}`, done: (b) => b.status === 'completed' },
    },
    // A second proposal, to be rejected and deleted (/aiaudits is missing, so audit_ids stays empty).
    {
      op: 'post /aipromptproposals',
      again: true,
      body: (s) => ({ ai_id: s.ai, audit_ids: [], language: 'en-US' }),
      save: (s, b) => {
        s.proposal2 = String(b.id);
      },
    },
    {
      op: 'post /aipromptproposals/{id}/reject',
      url: (s) => `/aipromptproposals/${s.proposal2}/reject`,
      until: { url: (s) => `/aipromptproposals/${s.proposal2}`, done: (b) => b.status === 'completed' },
    },
    { op: 'delete /aipromptproposals/{id}', url: (s) => `/aipromptproposals/${s.proposal2}` },
  ],
};
