/**
 * Operations on live calls: the platform dials sipp parties on loopback (live.ts) through its real
 * call plane, then each operation is sent while the call is up (mute, recording, speaking,
 * transcribe, transfer, groupcalls) or after it ended (the SIP ladder, deletes). A call's flow
 * sleeps, so it stays up until the API hangs it up.
 */
import type { Known, Step, State } from '../steps';
import { CALLER, dialParty } from './common';

/** A transcribe's provider is the engine that runs it here. */
const STT_PROVIDER: Known = {
  reason: "a transcribe's provider is the engine that runs it: pocketsphinx (offline, the default) or deepgram; the reference's gcp and aws are not engines of this platform",
  shows: /^body does not match the reference schema: \/provider must be equal to one of the allowed values \S+$/,
};

const STT_PROVIDER_LIST: Known = { ...STT_PROVIDER, shows: /^body does not match the reference schema: \/result\/\d+\/provider must be equal to one of the allowed values \S+$/ };

const HOLD = [{ type: 'sleep', option: { duration: 90_000 } }];
const callUrl =
  (k: string, tail = '') =>
  (s: State) =>
    `/calls/${s[k]}${tail}`;
const up = (k: string) => ({ url: (s: State) => `/calls/${s[k]}`, done: (b: Record<string, unknown>) => b.status === 'progressing' });
const ended = (k: string) => ({ url: (s: State) => `/calls/${s[k]}`, done: (b: Record<string, unknown>) => b.status === 'hangup' });
/** A call to a fresh sipp party, its id kept under `k`. */
const dial = (k: string, again?: true): Step => ({
  op: 'post /calls',
  ...(again ? { again } : {}),
  prepare: async (s, live) => {
    s[`${k}Party`] = await live.party(k);
  },
  body: (s) => ({ source: CALLER, destinations: [{ type: 'sip', target: s[`${k}Party`] }], actions: HOLD }),
  save: (s, b) => {
    s[k] = String((b.calls as { id: string }[])[0]!.id);
  },
});

export const liveCalls: Record<string, Step[]> = {
  live_calls: [
    dial('call'),
    { op: 'get /calls/{id}', url: callUrl('call'), until: up('call') },
    { op: 'post /calls/{id}/mute', url: callUrl('call', '/mute'), body: () => ({ direction: 'both' }) },
    { op: 'delete /calls/{id}/mute', url: callUrl('call', '/mute'), body: () => ({ direction: 'both' }) },
    {
      op: 'post /calls/{id}/recording_start',
      url: callUrl('call', '/recording_start'),
      body: () => ({ format: 'wav', end_of_silence: 0, end_of_key: '', duration: 0, on_end_flow_id: '00000000-0000-0000-0000-000000000000' }),
    },
    {
      op: 'post /calls/{id}/recording_stop',
      url: callUrl('call', '/recording_stop'),
      until: { url: (s) => `/calls/${s.call}`, done: (b) => typeof b.recording_id === 'string' && !/^0{8}-/.test(b.recording_id) },
      save: (s, b) => {
        s.recording = String(b.recording_id);
      },
    },
    {
      op: 'post /speakings',
      body: (s) => ({ reference_type: 'call', reference_id: s.call, language: 'en-US' }),
      save: (s, b) => {
        s.speaking = String(b.id);
      },
    },
    { op: 'get /speakings/{id}', url: (s) => `/speakings/${s.speaking}` },
    { op: 'post /speakings/{id}/say', url: (s) => `/speakings/${s.speaking}/say`, body: () => ({ text: 'Hello from the conformance suite.' }) },
    { op: 'post /speakings/{id}/flush', url: (s) => `/speakings/${s.speaking}/flush` },
    { op: 'post /speakings/{id}/stop', url: (s) => `/speakings/${s.speaking}/stop` },
    { op: 'delete /speakings/{id}', url: (s) => `/speakings/${s.speaking}` },
    {
      op: 'post /transcribes',
      differs: STT_PROVIDER,
      body: (s) => ({ reference_type: 'call', reference_id: s.call, language: 'en-US', direction: 'both' }),
      save: (s, b) => {
        s.transcribe = String(b.id);
      },
    },
    { op: 'get /transcribes/{id}', differs: STT_PROVIDER, url: (s) => `/transcribes/${s.transcribe}` },
    { op: 'get /transcripts', query: (s) => ({ transcribe_id: s.transcribe }) },
    { op: 'post /transcribes/{id}/stop', differs: STT_PROVIDER, url: (s) => `/transcribes/${s.transcribe}/stop` },
    { op: 'delete /transcribes/{id}', differs: STT_PROVIDER, url: (s) => `/transcribes/${s.transcribe}` },
    // a blind transfer of the party to another one
    {
      op: 'post /transfers',
      prepare: async (s, live) => {
        s.transferParty = await live.party('target');
      },
      body: (s) => ({ transfer_type: 'blind', transferer_call_id: s.call, transferee_addresses: [{ type: 'sip', target: s.transferParty }] }),
    },
    dial('call2', true),
    { op: 'post /calls/{id}/hangup', url: callUrl('call2', '/hangup'), until: up('call2') },
    { op: 'get /timelines/calls/{call_id}/sip-analysis', url: (s) => `/timelines/calls/${s.call2}/sip-analysis`, until: ended('call2') },
    { op: 'get /timelines/calls/{call_id}/pcap', url: (s) => `/timelines/calls/${s.call2}/pcap` },
    { op: 'delete /calls/{id}', url: callUrl('call2') },
    { op: 'get /recordings/{id}', url: (s) => `/recordings/${s.recording}`, until: { url: (s) => `/recordings/${s.recording}`, done: (b) => b.status === 'ended' } },
    { op: 'delete /recordings/{id}', url: (s) => `/recordings/${s.recording}` },
  ],
  live_groupcalls: [
    {
      op: 'post /groupcalls',
      prepare: async (s, live) => {
        s.g1 = await live.party('g1');
        s.g2 = await live.party('g2');
      },
      body: (s) => ({
        source: CALLER,
        destinations: [
          { type: 'sip', target: s.g1 },
          { type: 'sip', target: s.g2 },
        ],
        actions: HOLD,
        ring_method: 'ring_all',
        answer_method: 'hangup_others',
      }),
      save: (s, b) => {
        s.groupcall = String(b.id);
      },
    },
    { op: 'get /groupcalls/{id}', url: (s) => `/groupcalls/${s.groupcall}` },
    { op: 'post /groupcalls/{id}/hangup', url: (s) => `/groupcalls/${s.groupcall}/hangup` },
    { op: 'delete /groupcalls/{id}', url: (s) => `/groupcalls/${s.groupcall}`, until: { url: (s) => `/groupcalls/${s.groupcall}`, done: (b) => b.status === 'hangup' } },
  ],
  timeline_analyses: [
    {
      op: 'post /timeline-analyses',
      body: (s) => ({ activeflow_id: s.activeflow }),
      save: (s, b) => {
        s.analysis = String(b.id);
      },
    },
    { op: 'get /timeline-analyses', query: (s) => ({ activeflow_id: s.activeflow }) },
    { op: 'get /timeline-analyses/{id}', url: (s) => `/timeline-analyses/${s.analysis}`, until: { url: (s) => `/timeline-analyses/${s.analysis}`, done: (b) => b.status !== 'progressing' } },
    { op: 'delete /timeline-analyses/{id}', url: (s) => `/timeline-analyses/${s.analysis}` },
  ],
};

/** Waits for the first row of list `path` (query by `q`) whose `match` holds, keeping its id under `k`. */
const found: Record<string, string> = {};
const firstOf = (path: string, q: (s: State) => string, k: string, match: (r: Record<string, unknown>) => boolean) => ({
  url: (s: State) => `${path}${q(s) ? `?${q(s)}` : ''}`,
  done: (b: Record<string, unknown>) => {
    const r = ((b.result ?? []) as Record<string, unknown>[]).find(match);
    if (r) found[k] = String(r.id);
    return !!r;
  },
});
/** The room and the waiters the scenarios made (firstOf's match has no state). */
let room = '';
let waiter1 = '';
let waiter2 = '';

export const liveRooms: Record<string, Step[]> = {
  live_conferences: [
    {
      op: 'post /conferences',
      again: true,
      body: () => ({ type: 'conference', name: 'live', detail: '', timeout: 0, data: {}, pre_flow_id: '00000000-0000-0000-0000-000000000000', post_flow_id: '00000000-0000-0000-0000-000000000000' }),
      save: (s, b) => {
        s.room = String(b.id);
        room = s.room;
      },
    },
    dialParty('roomCall', (s) => [{ type: 'conference_join', option: { conference_id: s.room } }]),
    {
      op: 'get /conferencecalls/{id}',
      url: () => `/conferencecalls/${found.roomCc}`,
      until: firstOf(
        '/conferencecalls',
        () => '',
        'roomCc',
        (r) => r.conference_id === room && r.status === 'joined',
      ),
    },
    {
      op: 'post /conferences/{id}/recording_start',
      url: (s) => `/conferences/${s.room}/recording_start`,
      body: () => ({ format: 'wav', duration: 0, on_end_flow_id: '00000000-0000-0000-0000-000000000000' }),
    },
    { op: 'post /conferences/{id}/recording_stop', url: (s) => `/conferences/${s.room}/recording_stop` },
    { op: 'delete /conferencecalls/{id}', url: () => `/conferencecalls/${found.roomCc}` },
    { op: 'post /calls/{id}/hangup', again: true, url: (s) => `/calls/${s.roomCall}/hangup` },
  ],
  live_queues: [
    {
      op: 'post /queues',
      again: true,
      body: () => ({ name: 'live', detail: '', routing_method: 'random', tag_ids: [], wait_flow_id: '00000000-0000-0000-0000-000000000000', wait_timeout: 600000, service_timeout: 600000 }),
      save: (s, b) => {
        s.liveQueue = String(b.id);
      },
    },
    {
      ...dialParty('waiter1', (s) => [{ type: 'queue_join', option: { queue_id: s.liveQueue } }]),
      save: (s, b) => {
        s.waiter1 = String((b.calls as { id: string }[])[0]!.id);
        waiter1 = s.waiter1;
      },
    },
    {
      ...dialParty('waiter2', (s) => [{ type: 'queue_join', option: { queue_id: s.liveQueue } }]),
      save: (s, b) => {
        s.waiter2 = String((b.calls as { id: string }[])[0]!.id);
        waiter2 = s.waiter2;
      },
    },
    {
      op: 'get /queuecalls/{id}',
      url: () => `/queuecalls/${found.qc1}`,
      until: firstOf(
        '/queuecalls',
        (s) => `queue_id=${s.liveQueue}`,
        'qc1',
        // the first waiter's own row: the two calls are answered in either order, and the second's,
        // kicked here, would never be waiting for the kick by reference_id below (seen on a loaded CI)
        (r) => r.reference_id === waiter1 && r.status === 'waiting',
      ),
    },
    { op: 'post /queuecalls/{id}/kick', url: () => `/queuecalls/${found.qc1}` + '/kick' },
    {
      op: 'post /queuecalls/reference_id/{id}/kick',
      url: (s) => `/queuecalls/reference_id/${s.waiter2}/kick`,
      until: firstOf(
        '/queuecalls',
        (s) => `queue_id=${s.liveQueue}`,
        'qc2',
        (r) => r.reference_id === waiter2 && r.status === 'waiting',
      ),
    },
    { op: 'delete /queuecalls/{id}', url: () => `/queuecalls/${found.qc1}` },
    // a kicked caller's flow goes on after queue_join: here it ends, and the call with it
  ],
};

/** A call placed for a service agent (its source is the agent), seen and transcribed through /service_agents. */
export const liveAgentCalls: Record<string, Step[]> = {
  live_service_agent_calls: [
    {
      op: 'post /calls',
      again: true,
      prepare: async (s, live) => {
        s.saParty = await live.party('customer');
      },
      body: (s) => ({ source: { type: 'agent', target: s.peerAgent }, destinations: [{ type: 'sip', target: s.saParty }], actions: HOLD }),
      save: (s, b) => {
        s.saCall = String((b.calls as { id: string }[])[0]!.id);
      },
    },
    {
      op: 'get /service_agents/calls/{id}',
      as: 'peer',
      url: (s) => `/service_agents/calls/${s.saCall}`,
      until: { url: (s) => `/service_agents/calls/${s.saCall}`, done: (b) => b.status === 'progressing' },
    },
    {
      op: 'post /transcribes',
      again: true,
      differs: STT_PROVIDER,
      body: (s) => ({ reference_type: 'call', reference_id: s.saCall, language: 'en-US', direction: 'both' }),
      save: (s, b) => {
        s.saTranscribe = String(b.id);
      },
    },
    { op: 'get /service_agents/transcribes', as: 'peer', differs: STT_PROVIDER_LIST, query: (s) => ({ reference_id: s.saCall }) },
    { op: 'get /service_agents/transcripts', as: 'peer', query: (s) => ({ transcribe_id: s.saTranscribe }) },
    { op: 'post /calls/{id}/hangup', again: true, url: callUrl('saCall', '/hangup') },
  ],
};
