/** Account, flows, contacts, tags, extensions, agents, queues, campaigns, numbers, trunks, providers, routes. */
import { crud, type Known, type Step } from '../steps';

import { EMPTY, tel, ANSWER } from './common';
const UNSET_DESTINATION: Known = {
  reason: 'an unset destination_1..4 of an outdial target is null; the reference types it as an Address object (test/campaigns/api.test.ts holds the null)',
  shows: /^body does not match the reference schema: (\/result\/\d+)?\/destination_[1-4] must be object .*$/,
};

export const basic: Record<string, Step[]> = {
  account: [
    { op: 'get /customer' },
    { op: 'put /customer', body: (s) => ({ name: 'conformance', detail: 'd', email: s.email, phone_number: '', address: '', webhook_method: 'POST', webhook_uri: '' }) },
    { op: 'get /me' },
  ],
  accesskeys: crud({ collection: '/accesskeys', name: 'accesskey', create: () => ({ name: 'k', detail: 'd', expire: 86400 }), update: () => ({ name: 'k2', detail: 'd2' }) }),
  outbound_configs: crud({
    collection: '/outbound_configs',
    name: 'outboundConfig',
    create: () => ({ name: 'oc', detail: 'd', destination_whitelist: ['us'], codecs: '' }),
    update: () => ({ name: 'oc2' }),
  }),
  flows: crud({
    collection: '/flows',
    name: 'flow',
    keep: true,
    create: () => ({ name: 'f', detail: 'd', actions: ANSWER }),
    update: () => ({ name: 'f2', detail: 'd2', actions: ANSWER }),
    extra: [{ op: 'post /flows/{id}/direct-hash-regenerate', url: (s) => `/flows/${s.flow}/direct-hash-regenerate` }],
  }),
  tags: crud({ collection: '/tags', name: 'tag', keep: true, create: () => ({ name: 'sales', detail: 'd' }), update: () => ({ name: 'sales2', detail: 'd2' }) }),
  contacts: crud({
    collection: '/contacts',
    name: 'contact',
    create: () => ({
      first_name: 'Ada',
      last_name: 'Lovelace',
      display_name: 'Ada',
      company: 'c',
      job_title: 'j',
      source: 'manual',
      notes: '',
      addresses: [{ type: 'tel', target: '+15550001111', name: 'work', is_primary: true }],
      tag_ids: [],
    }),
    update: () => ({ notes: 'n' }),
    extra: [
      { op: 'get /contacts/lookup', query: () => ({ phone: '+15550001111' }) },
      {
        op: 'post /contacts/{id}/addresses',
        url: (s) => `/contacts/${s.contact}/addresses`,
        body: () => ({ type: 'email', target: 'ada@example.test', name: 'mail', is_primary: false }),
        save: (s, b) => {
          s.address = String(((b.addresses as Record<string, unknown>[]) ?? []).find((a) => a.type === 'email')?.id);
        },
      },
      { op: 'put /contacts/{id}/addresses/{address_id}', url: (s) => `/contacts/${s.contact}/addresses/${s.address}`, body: () => ({ name: 'mail2' }) },
      { op: 'delete /contacts/{id}/addresses/{address_id}', url: (s) => `/contacts/${s.contact}/addresses/${s.address}` },
      { op: 'post /contacts/{id}/tags', url: (s) => `/contacts/${s.contact}/tags`, body: (s) => ({ tag_id: s.tag }) },
      { op: 'delete /contacts/{id}/tags/{tag_id}', url: (s) => `/contacts/${s.contact}/tags/${s.tag}` },
    ],
  }),
  extensions: crud({
    collection: '/extensions',
    name: 'extension',
    create: () => ({ extension: '2001', password: 'secret-pass-1', name: 'e', detail: 'd' }),
    update: () => ({ name: 'e2', detail: 'd2', password: 'secret-pass-2' }),
    extra: [
      { op: 'post /extensions/{id}/direct-hash-regenerate', url: (s) => `/extensions/${s.extension}/direct-hash-regenerate` },
      // A service agent sees the extensions among its own addresses.
      { op: 'put /service_agents/me/addresses', again: true, body: () => ({ addresses: [{ type: 'extension', target: '2001', target_name: '', name: '', detail: '' }] }) },
      { op: 'get /service_agents/extensions/{id}', url: (s) => `/service_agents/extensions/${s.extension}` },
    ],
  }),
  agents: crud({
    collection: '/agents',
    name: 'agent',
    create: (s) => ({
      username: `agent-${s.run}@example.test`,
      password: 'secret-pass-1',
      name: 'a',
      detail: 'd',
      ring_method: 'ringall',
      permission: 32,
      tag_ids: [],
      addresses: [tel('+15550002222')],
    }),
    update: () => ({ name: 'a2', detail: 'd2', ring_method: 'ringall' }),
    extra: [
      { op: 'put /agents/{id}/addresses', url: (s) => `/agents/${s.agent}/addresses`, body: () => ({ addresses: [tel('+15550003333')] }) },
      { op: 'put /agents/{id}/tag_ids', url: (s) => `/agents/${s.agent}/tag_ids`, body: (s) => ({ tag_ids: [s.tag] }) },
      { op: 'put /agents/{id}/permission', url: (s) => `/agents/${s.agent}/permission`, body: () => ({ permission: 64 }) },
      { op: 'put /agents/{id}/status', url: (s) => `/agents/${s.agent}/status`, body: () => ({ status: 'available' }) },
      { op: 'put /agents/{id}/password', url: (s) => `/agents/${s.agent}/password`, body: () => ({ password: 'secret-pass-2' }) },
      { op: 'post /agents/{id}/direct-hash-regenerate', url: (s) => `/agents/${s.agent}/direct-hash-regenerate` },
    ],
  }),
  queues: crud({
    collection: '/queues',
    name: 'queue',
    keep: true,
    create: (s) => ({ name: 'q', detail: 'd', routing_method: 'random', tag_ids: [s.tag], wait_flow_id: s.flow, wait_timeout: 60000, service_timeout: 600000 }),
    update: (s) => ({ name: 'q2', detail: 'd2', routing_method: 'random', tag_ids: [s.tag], wait_flow_id: s.flow, wait_timeout: 60000, service_timeout: 600000 }),
    extra: [
      { op: 'put /queues/{id}/routing_method', url: (s) => `/queues/${s.queue}/routing_method`, body: () => ({ routing_method: 'random' }) },
      { op: 'put /queues/{id}/tag_ids', url: (s) => `/queues/${s.queue}/tag_ids`, body: (s) => ({ tag_ids: [s.tag] }) },
      { op: 'post /queues/{id}/direct-hash-regenerate', url: (s) => `/queues/${s.queue}/direct-hash-regenerate` },
    ],
  }),
  outplans: crud({
    collection: '/outplans',
    name: 'outplan',
    keep: true,
    create: () => ({
      name: 'op',
      detail: 'd',
      source: tel('+15550004444'),
      dial_timeout: 30000,
      try_interval: 60000,
      max_try_count_0: 1,
      max_try_count_1: 1,
      max_try_count_2: 1,
      max_try_count_3: 1,
      max_try_count_4: 1,
    }),
    update: () => ({ name: 'op2', detail: 'd2' }),
    extra: [
      {
        op: 'put /outplans/{id}/dial_info',
        url: (s) => `/outplans/${s.outplan}/dial_info`,
        body: () => ({ source: tel('+15550004444'), dial_timeout: 30000, try_interval: 60000, max_try_count_0: 2, max_try_count_1: 1, max_try_count_2: 1, max_try_count_3: 1, max_try_count_4: 1 }),
      },
    ],
  }),
  outdials: crud({
    collection: '/outdials',
    name: 'outdial',
    keep: true,
    create: () => ({ campaign_id: EMPTY, name: 'od', detail: 'd', data: 'x' }),
    update: () => ({ name: 'od2', detail: 'd2' }),
    extra: [
      { op: 'put /outdials/{id}/data', url: (s) => `/outdials/${s.outdial}/data`, body: () => ({ data: 'y' }) },
      {
        op: 'post /outdials/{id}/targets',
        differs: UNSET_DESTINATION,
        url: (s) => `/outdials/${s.outdial}/targets`,
        body: () => ({ name: 't', detail: 'd', data: '', destination_0: tel('+15550005555') }),
        save: (s, b) => {
          s.target = String(b.id);
        },
      },
      { op: 'get /outdials/{id}/targets', differs: UNSET_DESTINATION, url: (s) => `/outdials/${s.outdial}/targets` },
      { op: 'get /outdials/{id}/targets/{target_id}', differs: UNSET_DESTINATION, url: (s) => `/outdials/${s.outdial}/targets/${s.target}` },
      { op: 'delete /outdials/{id}/targets/{target_id}', differs: UNSET_DESTINATION, url: (s) => `/outdials/${s.outdial}/targets/${s.target}` },
    ],
  }),
  campaigns: crud({
    collection: '/campaigns',
    name: 'campaign',
    create: (s) => ({
      name: 'c',
      detail: 'd',
      type: 'call',
      service_level: 100,
      end_handle: 'stop',
      actions: ANSWER,
      outplan_id: s.outplan,
      outdial_id: s.outdial,
      queue_id: s.queue,
      next_campaign_id: EMPTY,
    }),
    update: () => ({ name: 'c2', detail: 'd2' }),
    extra: [
      { op: 'put /campaigns/{id}/status', url: (s) => `/campaigns/${s.campaign}/status`, body: () => ({ status: 'stop' }) },
      { op: 'put /campaigns/{id}/actions', url: (s) => `/campaigns/${s.campaign}/actions`, body: () => ({ actions: ANSWER }) },
      { op: 'put /campaigns/{id}/service_level', url: (s) => `/campaigns/${s.campaign}/service_level`, body: () => ({ service_level: 90 }) },
      { op: 'put /campaigns/{id}/next_campaign_id', url: (s) => `/campaigns/${s.campaign}/next_campaign_id`, body: () => ({ next_campaign_id: EMPTY }) },
      {
        op: 'put /campaigns/{id}/resource_info',
        url: (s) => `/campaigns/${s.campaign}/resource_info`,
        body: (s) => ({ outplan_id: s.outplan, outdial_id: s.outdial, queue_id: s.queue, next_campaign_id: EMPTY }),
      },
      { op: 'get /campaigns/{id}/campaigncalls', url: (s) => `/campaigns/${s.campaign}/campaigncalls` },
      { op: 'put /outdials/{id}/campaign_id', url: (s) => `/outdials/${s.outdial}/campaign_id`, body: (s) => ({ campaign_id: s.campaign }) },
    ],
  }),
  conferences: crud({
    collection: '/conferences',
    name: 'conference',
    create: () => ({ type: 'conference', name: 'conf', detail: 'd', timeout: 0, data: {}, pre_flow_id: EMPTY, post_flow_id: EMPTY }),
    update: () => ({ name: 'conf2', detail: 'd2', timeout: 0, data: {}, pre_flow_id: EMPTY, post_flow_id: EMPTY }),
    extra: [{ op: 'post /conferences/{id}/direct-hash-regenerate', url: (s) => `/conferences/${s.conference}/direct-hash-regenerate` }],
  }),
  numbers: crud({
    collection: '/numbers',
    name: 'number',
    create: (s) => ({ number: '+899100000001', call_flow_id: s.flow, message_flow_id: EMPTY, name: 'n', detail: 'd' }),
    update: (s) => ({ call_flow_id: s.flow, message_flow_id: EMPTY, name: 'n2', detail: 'd2' }),
    extra: [
      { op: 'get /available_numbers', query: () => ({ type: 'virtual', page_size: '3' }) },
      { op: 'post /numbers/renew', body: () => ({ tm_renew: '2999-01-01 00:00:00' }) },
      { op: 'put /numbers/{id}/flow_ids', url: (s) => `/numbers/${s.number}/flow_ids`, body: (s) => ({ call_flow_id: s.flow, message_flow_id: EMPTY }) },
      { op: 'put /numbers/{id}/metadata', url: (s) => `/numbers/${s.number}/metadata`, body: () => ({ rtp_debug: true }) },
    ],
  }),
  trunks: crud({
    collection: '/trunks',
    name: 'trunk',
    create: (s) => ({ name: 't', detail: 'd', domain_name: `trunk${s.run}`, auth_types: ['basic'], username: 'user1', password: 'secret-pass-1', allowed_ips: [] }),
    update: () => ({ name: 't2', detail: 'd2', auth_types: ['basic'], username: 'user1', password: 'secret-pass-2', allowed_ips: [] }),
  }),
  providers: crud({
    collection: '/providers',
    name: 'provider',
    keep: true,
    as: 'superadmin',
    create: () => ({ type: 'sip', hostname: 'gw.example.test', tech_prefix: '', tech_postfix: '', tech_headers: {}, name: 'p', detail: 'd' }),
    update: () => ({ type: 'sip', hostname: 'gw2.example.test', tech_prefix: '', tech_postfix: '', tech_headers: {}, name: 'p2', detail: 'd2' }),
  }),
  routes: crud({
    collection: '/routes',
    name: 'route',
    as: 'superadmin',
    create: (s) => ({ customer_id: s.customer, name: 'r', detail: 'd', provider_id: s.provider, priority: 1, target: 'all' }),
    update: (s) => ({ name: 'r2', detail: 'd2', provider_id: s.provider, priority: 2, target: 'all' }),
  }),
};
