/**
 * Every route of the versioned API, one group a line: each `routes/<group>.ts` exports `routes` (an
 * array of defineRoute results) and is listed here, in file-name order. A new group adds its import
 * and its line (test/control-api/route-index.test.ts fails on a group file missing here). Paths with a
 * literal segment must not be shadowed by a `:param` route of another file.
 */
import type { AnyRoute } from '../route';
import { routes as accesskeys } from './accesskeys';
import { routes as activeflows } from './activeflows';
import { routes as agents } from './agents';
import { routes as aiaudits } from './aiaudits';
import { routes as aicalls } from './aicalls';
import { routes as aimessages } from './aimessages';
import { routes as aipromptproposals } from './aipromptproposals';
import { routes as aisInsight } from './ais-insight';
import { routes as aisVersions } from './ais-versions';
import { routes as ais } from './ais';
import { routes as aisummaries } from './aisummaries';
import { routes as billingAccount } from './billing-account';
import { routes as billing } from './billing';
import { routes as callsControls } from './calls-controls';
import { routes as callsExport } from './calls-export';
import { routes as calls } from './calls';
import { routes as campaigncalls } from './campaigncalls';
import { routes as campaigns } from './campaigns';
import { routes as conferencecalls } from './conferencecalls';
import { routes as conferencesTranscribe } from './conferences-transcribe';
import { routes as conferences } from './conferences';
import { routes as contactAddresses } from './contact-addresses';
import { routes as contactCases } from './contact-cases';
import { routes as contactInteractions } from './contact-interactions';
import { routes as contacts } from './contacts';
import { routes as conversationAccounts } from './conversation-accounts';
import { routes as conversations } from './conversations';
import { routes as customer } from './customer';
import { routes as customers } from './customers';
import { routes as dashboard } from './dashboard';
import { routes as qualityAlarms } from './quality-alarms';
import { routes as emails } from './emails';
import { routes as evalRuns } from './eval-runs';
import { routes as evalScenarios } from './eval-scenarios';
import { routes as extensions } from './extensions';
import { routes as flowsSimulate } from './flows-simulate';
import { routes as flows } from './flows';
import { routes as groupcalls } from './groupcalls';
import { routes as mediaStreams } from './media-streams';
import { routes as messages } from './messages';
import { routes as numbers } from './numbers';
import { routes as outboundConfigs } from './outbound-configs';
import { routes as outdials } from './outdials';
import { routes as outplans } from './outplans';
import { routes as pbx } from './pbx';
import { routes as providercalls } from './providercalls';
import { routes as providersSetup } from './providers-setup';
import { routes as providers } from './providers';
import { routes as provisioning } from './provisioning';
import { routes as queuecalls } from './queuecalls';
import { routes as queues } from './queues';
import { routes as rags } from './rags';
import { routes as recordings } from './recordings';
import { routes as serviceAgentsCases } from './service-agents-cases';
import { routes as serviceAgentsContacts } from './service-agents-contacts';
import { routes as serviceAgentsCreate } from './service-agents-create';
import { routes as serviceAgentsFiles } from './service-agents-files';
import { routes as serviceAgentsInteractions } from './service-agents-interactions';
import { routes as serviceAgentsShared } from './service-agents-shared';
import { routes as serviceAgentsSip } from './service-agents-sip';
import { routes as serviceAgentsTalk } from './service-agents-talk';
import { routes as serviceAgents } from './service-agents';
import { routes as sipRoutes } from './sip-routes';
import { routes as speakings } from './speakings';
import { routes as storageAccounts } from './storage-accounts';
import { routes as storage } from './storage';
import { routes as summaries } from './summaries';
import { routes as supervise } from './supervise';
import { routes as tags } from './tags';
import { routes as teams } from './teams';
import { routes as timelineAnalyses } from './timeline-analyses';
import { routes as timelineSip } from './timeline-sip';
import { routes as timelines } from './timelines';
import { routes as transcribes } from './transcribes';
import { routes as transcripts } from './transcripts';
import { routes as transfers } from './transfers';
import { routes as trunks } from './trunks';
import { routes as twilio } from './twilio';
import { routes as voicemailBoxes } from './voicemail-boxes';
import { routes as voicemailGreetings } from './voicemail-greetings';
import { routes as voicemailMessages } from './voicemail-messages';
import { routes as webchatMessages } from './webchat-messages';
import { routes as webchatSessions } from './webchat-sessions';
import { routes as webchatWidgets } from './webchat-widgets';
import { routes as webhookDeliveries } from './webhook-deliveries';

export const ROUTE_GROUPS: readonly (readonly AnyRoute[])[] = [
  accesskeys,
  activeflows,
  agents,
  aiaudits,
  aicalls,
  aimessages,
  aipromptproposals,
  aisInsight,
  aisVersions,
  ais,
  aisummaries,
  billingAccount,
  billing,
  callsControls,
  callsExport,
  calls,
  campaigncalls,
  campaigns,
  conferencecalls,
  conferencesTranscribe,
  conferences,
  contactAddresses,
  contactCases,
  contactInteractions,
  contacts,
  conversationAccounts,
  conversations,
  customer,
  customers,
  dashboard,
  emails,
  evalRuns,
  evalScenarios,
  extensions,
  flowsSimulate,
  flows,
  groupcalls,
  mediaStreams,
  messages,
  numbers,
  outboundConfigs,
  outdials,
  outplans,
  pbx,
  providercalls,
  providersSetup,
  providers,
  provisioning,
  qualityAlarms,
  queuecalls,
  queues,
  rags,
  recordings,
  serviceAgentsCases,
  serviceAgentsContacts,
  serviceAgentsCreate,
  serviceAgentsFiles,
  serviceAgentsInteractions,
  serviceAgentsShared,
  serviceAgentsSip,
  serviceAgentsTalk,
  serviceAgents,
  sipRoutes,
  speakings,
  storageAccounts,
  storage,
  summaries,
  supervise,
  tags,
  teams,
  timelineAnalyses,
  timelineSip,
  timelines,
  transcribes,
  transcripts,
  transfers,
  trunks,
  twilio,
  voicemailBoxes,
  voicemailGreetings,
  voicemailMessages,
  webchatMessages,
  webchatSessions,
  webchatWidgets,
  webhookDeliveries,
];

let cached: AnyRoute[] | null = null;

export function loadRoutes(): AnyRoute[] {
  cached ??= ROUTE_GROUPS.flat();
  return cached;
}
