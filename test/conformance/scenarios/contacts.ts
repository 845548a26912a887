/** Contact addresses, and the service-agent (logged-in agent) forms of contacts, tags, files and the agent itself. */
import { crud, type Step } from '../steps';
import { DOWNLOAD_200 } from './common';

export const contacts: Record<string, Step[]> = {
  contact_addresses: crud({
    collection: '/contact_addresses',
    name: 'contactAddress',
    create: () => ({ type: 'tel', target: '+15550106000', name: 'seen', detail: 'd', is_primary: false }),
    update: () => ({ name: 'seen2', detail: 'd2' }),
    extra: [
      {
        op: 'post /contacts',
        again: true,
        body: () => ({ first_name: 'Grace' }),
        save: (s, b) => {
          s.contact2 = String(b.id);
        },
      },
      { op: 'post /contact_addresses/{id}/claim', url: (s) => `/contact_addresses/${s.contactAddress}/claim`, body: (s) => ({ contact_id: s.contact2 }) },
    ],
  }),
  service_agent_self: [
    { op: 'get /service_agents/me' },
    { op: 'put /service_agents/me', body: () => ({ name: 'me', detail: 'd', ring_method: 'ringall' }) },
    { op: 'put /service_agents/me/addresses', body: () => ({ addresses: [{ type: 'tel', target: '+15550107777', target_name: '', name: '', detail: '' }] }) },
    { op: 'put /service_agents/me/status', body: () => ({ status: 'available' }) },
    { op: 'get /service_agents/customer' },
    {
      op: 'get /service_agents/agents',
      save: (s, b) => {
        s.saAgent = String((b.result as Record<string, unknown>[])[0]?.id);
      },
    },
    { op: 'get /service_agents/agents/{id}', url: (s) => `/service_agents/agents/${s.saAgent}` },
    { op: 'get /service_agents/tags' },
    { op: 'get /service_agents/tags/{id}', url: (s) => `/service_agents/tags/${s.tag}` },
    { op: 'get /service_agents/extensions' },
    { op: 'get /service_agents/calls' },
    { op: 'get /service_agents/conversations' },
    { op: 'get /service_agents/contact_cases' },
    { op: 'get /service_agents/talk_channels' },
    { op: 'get /service_agents/talk_chats' },
  ],
  service_agent_contacts: [
    {
      op: 'post /service_agents/contacts',
      body: () => ({
        first_name: 'Linus',
        last_name: 'T',
        display_name: 'Linus',
        company: '',
        job_title: '',
        source: 'manual',
        notes: '',
        addresses: [{ type: 'tel', target: '+15550108888', name: '', is_primary: true }],
        tag_ids: [],
      }),
      save: (s, b) => {
        s.saContact = String(b.id);
      },
    },
    { op: 'get /service_agents/contacts' },
    { op: 'get /service_agents/contacts/{id}', url: (s) => `/service_agents/contacts/${s.saContact}` },
    { op: 'put /service_agents/contacts/{id}', url: (s) => `/service_agents/contacts/${s.saContact}`, body: () => ({ notes: 'n' }) },
    { op: 'get /service_agents/contacts/lookup', query: () => ({ phone: '+15550108888' }) },
    {
      op: 'post /service_agents/contacts/{id}/addresses',
      url: (s) => `/service_agents/contacts/${s.saContact}/addresses`,
      body: () => ({ type: 'email', target: 'linus@example.test', name: '', is_primary: false }),
      save: (s, b) => {
        s.saAddress = String(((b.addresses as Record<string, unknown>[]) ?? []).find((a) => a.type === 'email')?.id);
      },
    },
    { op: 'put /service_agents/contacts/{id}/addresses/{address_id}', url: (s) => `/service_agents/contacts/${s.saContact}/addresses/${s.saAddress}`, body: () => ({ name: 'mail' }) },
    { op: 'delete /service_agents/contacts/{id}/addresses/{address_id}', url: (s) => `/service_agents/contacts/${s.saContact}/addresses/${s.saAddress}` },
    { op: 'post /service_agents/contacts/{id}/tags', url: (s) => `/service_agents/contacts/${s.saContact}/tags`, body: (s) => ({ tag_id: s.tag }) },
    { op: 'delete /service_agents/contacts/{id}/tags/{tag_id}', url: (s) => `/service_agents/contacts/${s.saContact}/tags/${s.tag}` },
    {
      op: 'post /service_agents/contact_addresses',
      body: () => ({ type: 'tel', target: '+15550109999', name: '', detail: '', is_primary: false }),
      save: (s, b) => {
        s.saContactAddress = String(b.id);
      },
    },
    { op: 'get /service_agents/contact_addresses' },
    { op: 'get /service_agents/contact_addresses/{id}', url: (s) => `/service_agents/contact_addresses/${s.saContactAddress}` },
    { op: 'put /service_agents/contact_addresses/{id}', url: (s) => `/service_agents/contact_addresses/${s.saContactAddress}`, body: () => ({ name: 'n' }) },
    { op: 'post /service_agents/contact_addresses/{id}/claim', url: (s) => `/service_agents/contact_addresses/${s.saContactAddress}/claim`, body: (s) => ({ contact_id: s.saContact }) },
    { op: 'delete /service_agents/contact_addresses/{id}', url: (s) => `/service_agents/contact_addresses/${s.saContactAddress}` },
    { op: 'get /service_agents/contact_interactions', query: (s) => ({ contact_id: s.saContact }) },
    { op: 'get /service_agents/contact_peer_events', query: (s) => ({ contact_id: s.saContact }) },
    { op: 'delete /service_agents/contacts/{id}', url: (s) => `/service_agents/contacts/${s.saContact}` },
  ],
  service_agent_files: [
    {
      op: 'post /service_agents/files',
      multipart: () => ({ fields: {}, file: { field: 'file', name: 'note.txt', type: 'text/plain', content: Buffer.from('hello') } }),
      save: (s, b) => {
        s.saFile = String(b.id);
      },
    },
    { op: 'get /service_agents/files' },
    { op: 'get /service_agents/files/{id}', url: (s) => `/service_agents/files/${s.saFile}` },
    { op: 'get /service_agents/files/{id}/file', differs: DOWNLOAD_200, url: (s) => `/service_agents/files/${s.saFile}/file` },
    { op: 'delete /service_agents/files/{id}', url: (s) => `/service_agents/files/${s.saFile}` },
  ],
};
