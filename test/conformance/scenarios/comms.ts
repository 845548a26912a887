/** Activeflows, webchat widgets/sessions/messages, conversation accounts, and the clean-up of kept prerequisites. */
import { crud, type Known, type Step } from '../steps';
import { ANSWER } from './common';

const ACTIVEFLOW_201: Known = {
  reason: 'spec governs: "Create operations return 200 or 201 with the created resource (activeflow creation returns 201)"; the reference documents 200',
  shows: /^status 201, the reference documents 200/,
};

const WEBCHAT_LOCAL: Known = {
  reason:
    'a session\'s local address has type "webchat", as the reference\'s own description of WebchatManagerSession.local says ("type is always \\"webchat\\""), though its CommonAddress enum lacks the value',
  shows: /^body does not match the reference schema: (\/result\/\d+)?\/local\/type must be equal to one of the allowed values \S+$/,
};

export const comms: Record<string, Step[]> = {
  activeflows: [
    {
      op: 'post /activeflows',
      differs: ACTIVEFLOW_201,
      body: (s) => ({ flow_id: s.flow }),
      save: (s, b) => {
        s.activeflow = String(b.id);
      },
    },
    // run by the suite's media-app node (live.ts): once ended, current_action is the last action it ran
    { op: 'get /activeflows', until: { url: (s) => `/activeflows/${s.activeflow}`, done: (b) => b.status === 'ended' } },
    { op: 'get /activeflows/{id}', url: (s) => `/activeflows/${s.activeflow}` },
    { op: 'post /activeflows/{id}/stop', url: (s) => `/activeflows/${s.activeflow}/stop` },
    // A second run to delete (the first is a prerequisite of the timeline scenarios).
    {
      op: 'post /activeflows',
      again: true,
      differs: ACTIVEFLOW_201,
      body: (s) => ({ flow_id: s.flow }),
      save: (s, b) => {
        s.activeflowGone = String(b.id);
      },
    },
    { op: 'delete /activeflows/{id}', url: (s) => `/activeflows/${s.activeflowGone}` },
  ],
  webchat: crud({
    collection: '/webchat_widgets',
    name: 'widget',
    create: (s) => ({ name: 'w', session_flow_id: s.flow, message_flow_id: s.flow, session_idle_timeout: 600 }),
    update: (s) => ({ name: 'w2', session_flow_id: s.flow }),
    extra: [
      { op: 'post /webchat_widgets/{id}/direct_hash_regenerate', url: (s) => `/webchat_widgets/${s.widget}/direct_hash_regenerate` },
      {
        op: 'post /webchat_sessions',
        differs: WEBCHAT_LOCAL,
        body: (s) => ({ widget_id: s.widget, page_url: 'https://shop.example.test/', referrer: '' }),
        save: (s, b) => {
          s.wsession = String(b.id);
        },
      },
      { op: 'get /webchat_sessions', differs: WEBCHAT_LOCAL, query: (s) => ({ widget_id: s.widget }) },
      { op: 'get /webchat_sessions/{id}', differs: WEBCHAT_LOCAL, url: (s) => `/webchat_sessions/${s.wsession}` },
      {
        op: 'post /webchat_messages',
        body: (s) => ({ session_id: s.wsession, direction: 'outbound', text: 'hello' }),
        save: (s, b) => {
          s.wmessage = String(b.id);
        },
      },
      { op: 'get /webchat_messages', query: (s) => ({ session_id: s.wsession }) },
      { op: 'get /webchat_messages/{id}', url: (s) => `/webchat_messages/${s.wmessage}` },
      { op: 'delete /webchat_messages/{id}', url: (s) => `/webchat_messages/${s.wmessage}` },
      { op: 'post /webchat_sessions/{id}/end', differs: WEBCHAT_LOCAL, url: (s) => `/webchat_sessions/${s.wsession}/end` },
      { op: 'delete /webchat_sessions/{id}', differs: WEBCHAT_LOCAL, url: (s) => `/webchat_sessions/${s.wsession}` },
    ],
  }),
  conversation_accounts: crud({
    collection: '/conversation_accounts',
    name: 'convAccount',
    create: (s) => ({ type: 'line', name: 'ca', detail: 'd', secret: 'line-secret-0123', token: 'line-token-0123', message_flow_id: s.flow }),
    update: () => ({ name: 'ca2', detail: 'd2' }),
  }),
  cleanup: [
    {
      op: 'post /flows',
      again: true,
      body: () => ({ name: 'spare', detail: '', actions: ANSWER }),
      save: (s, b) => {
        s.spareFlow = String(b.id);
      },
    },
    { op: 'delete /flows/{id}', url: (s) => `/flows/${s.spareFlow}` },
    { op: 'delete /queues/{id}', url: (s) => `/queues/${s.queue}` },
    { op: 'delete /outdials/{id}', url: (s) => `/outdials/${s.outdial}` },
    { op: 'delete /outplans/{id}', url: (s) => `/outplans/${s.outplan}` },
    { op: 'delete /tags/{id}', url: (s) => `/tags/${s.tag}` },
    { op: 'delete /storage_files/{id}', url: (s) => `/storage_files/${s.file}` },
    { op: 'delete /ais/{id}', url: (s) => `/ais/${s.ai}` },
    { op: 'delete /providers/{id}', url: (s) => `/providers/${s.provider}`, as: 'superadmin' },
  ],
};
