/** Agent talk (chats, channels, messages), billing accounts, timelines, and the caller's own password (last). */
import type { Step } from '../steps';

export const workspace: Record<string, Step[]> = {
  talk: [
    {
      op: 'post /service_agents/talk_chats',
      body: () => ({ type: 'group', name: 'g', detail: 'd', participants: [] }),
      save: (s, b) => {
        s.chat = String(b.id);
      },
    },
    { op: 'get /service_agents/talk_chats/{id}', url: (s) => `/service_agents/talk_chats/${s.chat}` },
    { op: 'put /service_agents/talk_chats/{id}', url: (s) => `/service_agents/talk_chats/${s.chat}`, body: () => ({ name: 'g2', detail: 'd2' }) },
    {
      op: 'post /service_agents/talk_chats/{id}/participants',
      url: (s) => `/service_agents/talk_chats/${s.chat}/participants`,
      body: (s) => ({ owner_type: 'agent', owner_id: s.peerAgent }),
      save: (s, b) => {
        s.participant = String(b.id);
      },
    },
    { op: 'get /service_agents/talk_chats/{id}/participants', url: (s) => `/service_agents/talk_chats/${s.chat}/participants` },
    { op: 'delete /service_agents/talk_chats/{id}/participants/{participant_id}', url: (s) => `/service_agents/talk_chats/${s.chat}/participants/${s.participant}` },
    {
      op: 'post /service_agents/talk_messages',
      body: (s) => ({ chat_id: s.chat, type: 'normal', text: 'hello' }),
      save: (s, b) => {
        s.talkMessage = String(b.id);
      },
    },
    { op: 'get /service_agents/talk_messages', query: (s) => ({ chat_id: s.chat }) },
    { op: 'get /service_agents/talk_messages/{id}', url: (s) => `/service_agents/talk_messages/${s.talkMessage}` },
    { op: 'post /service_agents/talk_messages/{id}/reactions', url: (s) => `/service_agents/talk_messages/${s.talkMessage}/reactions`, body: () => ({ emoji: '👍' }) },
    { op: 'delete /service_agents/talk_messages/{id}', url: (s) => `/service_agents/talk_messages/${s.talkMessage}` },
    {
      op: 'post /service_agents/talk_chats',
      again: true,
      body: () => ({ type: 'talk', name: 'channel', detail: '' }),
      save: (s, b) => {
        s.channel = String(b.id);
      },
    },
    { op: 'post /service_agents/talk_chats/{id}/join', as: 'peer', url: (s) => `/service_agents/talk_chats/${s.channel}/join` },
    { op: 'delete /service_agents/talk_chats/{id}', url: (s) => `/service_agents/talk_chats/${s.chat}` },
  ],
  billing: [
    {
      op: 'get /billing_accounts',
      again: true,
      save: (s, b) => {
        s.billingAccount = String((b.result as Record<string, unknown>[])[0]?.id);
      },
    },
    { op: 'get /billing_accounts/{id}', url: (s) => `/billing_accounts/${s.billingAccount}` },
    { op: 'post /billing_accounts/{id}/balance_add_force', as: 'superadmin', url: (s) => `/billing_accounts/${s.billingAccount}/balance_add_force`, body: () => ({ balance: 10 }) },
    {
      op: 'get /billings',
      again: true,
      save: (s, b) => {
        s.billing = String((b.result as Record<string, unknown>[])[0]?.id);
      },
    },
    { op: 'get /billings/{billing-id}', url: (s) => `/billings/${s.billing}` },
  ],
  // Sent with the credit added above; without SMTP_URL the platform writes mail to its outbox folder.
  emails: [
    {
      op: 'post /emails',
      body: () => ({ destinations: [{ type: 'email', target: 'alice@example.test', target_name: '', name: '', detail: '' }], subject: 'Hello', content: 'Hi.', attachments: [] }),
      save: (s, b) => {
        s.sentEmail = String(b.id);
      },
    },
    { op: 'get /emails/{id}', url: (s) => `/emails/${s.sentEmail}` },
    { op: 'delete /emails/{id}', url: (s) => `/emails/${s.sentEmail}` },
  ],
  timelines: [
    { op: 'get /timelines/{resource_type}/{resource_id}/events', url: (s) => `/timelines/activeflows/${s.activeflow}/events` },
    { op: 'get /aggregated-events', query: (s) => ({ activeflow_id: s.activeflow }) },
  ],
  last: [{ op: 'put /service_agents/me/password', body: () => ({ password: 'secret-pass-new-1' }) }],
};
