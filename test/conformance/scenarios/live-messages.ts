/**
 * SMS through a Twilio-speaking server on loopback (the suite's FakeTwilio): a message sent from a
 * normal number of the customer opens a conversation per destination, which is then worked through
 * the API by the admin and by the service agent it is given to.
 */
import type { Known, Step } from '../steps';

const WEBCHAT_CONVERSATION: Known = {
  reason: 'a webchat session\'s conversation (the webchat scenario made one) has type "webchat" and a "webchat" self address: the spec names webchat; the reference\'s enums lack it',
  shows: /^body does not match the reference schema: \/result\/\d+\/type must be equal to one of the allowed values \S+; \/result\/\d+\/self\/type must be equal to one of the allowed values \S+$/,
};

const ids: Record<string, string> = {};
const conv =
  (tail = '') =>
  () =>
    `/conversations/${ids.conv}${tail}`;
const saConv =
  (tail = '') =>
  () =>
    `/service_agents/conversations/${ids.conv}${tail}`;

export const liveMessages: Record<string, Step[]> = {
  live_messages: [
    {
      op: 'post /messages',
      prepare: async (s, live) => {
        s.smsNumber = await live.number(s.customer!);
      },
      body: (s) => ({ source: { type: 'tel', target: s.smsNumber }, destinations: [{ type: 'tel', target: '+15557771234' }], text: 'hello from the conformance suite' }),
      save: (s, b) => {
        s.message = String(b.id);
      },
    },
    { op: 'get /messages/{id}', url: (s) => `/messages/${s.message}` },
    {
      op: 'get /conversations/{id}',
      url: conv(),
      until: {
        url: () => '/conversations',
        done: (b) => {
          const c = ((b.result ?? []) as Record<string, unknown>[]).find((r) => (r.peer as { target?: string } | undefined)?.target === '+15557771234');
          if (c) ids.conv = String(c.id);
          return !!c;
        },
      },
    },
    { op: 'get /conversations', differs: WEBCHAT_CONVERSATION },
    { op: 'get /conversations/{id}/messages', url: conv('/messages') },
    { op: 'post /conversations/{id}/messages', url: conv('/messages'), body: () => ({ text: 'a follow-up' }) },
    { op: 'put /conversations/{id}', url: conv(), body: (s) => ({ owner_type: 'agent', owner_id: s.peerAgent }) },
    { op: 'get /service_agents/conversations/{id}', as: 'peer', url: saConv() },
    { op: 'get /service_agents/conversations/{id}/messages', as: 'peer', url: saConv('/messages') },
    { op: 'post /service_agents/conversations/{id}/messages', as: 'peer', url: saConv('/messages'), body: () => ({ text: 'the agent answers' }) },
    { op: 'put /service_agents/conversations/{id}', as: 'peer', url: saConv(), body: () => ({ name: 'sms thread' }) },
    { op: 'post /service_agents/conversations/{id}/unassign', as: 'peer', url: saConv('/unassign') },
    { op: 'post /conversations/{id}/unassign', url: conv('/unassign') },
    { op: 'delete /messages/{id}', url: (s) => `/messages/${s.message}` },
  ],
};
