/**
 * The table types of every table the migrations create (core/db/migrations), declared once through knex's
 * `Tables` augmentation: `db('calls')` is a query builder over `CallRow`, its inserts and updates are checked
 * against the columns, and a cast is needed nowhere. Each table maps to the row type its repository exports,
 * declared in core/db/rows/ (one file per repository, which re-exports it), so this registry imports none of
 * the repositories that query through it (test/architecture/table-registry.test.ts); nullability and column
 * types as in the schema (test/architecture/tables.test.ts checks that every table of a migrated database is
 * declared here). Tables no repository describes have their row type below.
 *
 * Writes: every column is optional (the schema's defaults and NOT NULL constraints decide at run time) and may be
 * a `Knex.Raw` (`array_append`, `coalesce`, ...). The columns named in `Table`'s second parameter may also be
 * written as text: every jsonb column (pg writes a JS array as a Postgres array, so a json array goes only
 * as `JSON.stringify(...)`), and events.timestamp (the event's own timestamp text, microseconds kept).
 */
import type { Knex } from 'knex';
import type { ChatMessageRow, ChatRow, ParticipantRow as ChatParticipantRow } from './rows/chats';
import type { AccesskeyRow } from './rows/accesskeys';
import type { ActiveflowRow } from './rows/activeflows';
import type { AgentRow } from './rows/agents';
import type { AiAuditRow } from './rows/ai-audits';
import type { AicallRow, AimessageRow } from './rows/ai-calls';
import type { ProposalRow } from './rows/ai-proposals';
import type { AiRow, AiVersionRow, PromptHistoryRow } from './rows/ais';
import type { BillingAccountRow } from './rows/billing-accounts';
import type { BillingRow } from './rows/billings';
import type { CallRow } from './rows/calls';
import type { CampaigncallRow } from './rows/campaigncalls';
import type { CampaignRow } from './rows/campaigns';
import type { ConferencecallRow } from './rows/conferencecalls';
import type { ConferenceRow } from './rows/conferences';
import type { CaseNoteRow, ContactCaseRow } from './rows/contact-cases';
import type { ContactRow } from './rows/contacts';
import type { ResetTokenRow, VerificationTokenRow } from './rows/mail-tokens';
import type { ConversationAccountRow } from './rows/conversation-accounts';
import type { ConversationMessageRow, ConversationRow } from './rows/conversations';
import type { CustomerRow } from './rows/customers';
import type { EmailRow } from './rows/emails';
import type { ExtensionRow, ProvisioningCustomerSecretRow, ProvisioningTokenRow } from './rows/extensions';
import type { PbxSettingsRow } from './rows/pbx-settings';
import type { FlowRow } from './rows/flows';
import type { GroupcallRow } from './rows/groupcalls';
import type { MessageRow, TargetRow } from './rows/messages';
import type { NumberRow } from './rows/numbers';
import type { OutboundConfigRow } from './rows/outbound-configs';
import type { OutboundRegistrationRow } from './rows/outbound-registrations';
import type { OutdialRow, OutdialtargetRow } from './rows/outdials';
import type { OutplanRow } from './rows/outplans';
import type { ProvidercallRow } from './rows/providercalls';
import type { ProviderRow } from './rows/providers';
import type { QueuecallRow } from './rows/queuecalls';
import type { QueueRow } from './rows/queues';
import type { RagRow, RagSourceRow } from './rows/rags';
import type { RecordingRow } from './rows/recordings';
import type { RouteRow } from './rows/routes';
import type { SpeakingRow } from './rows/speakings';
import type { StorageAccountRow, StorageFileRow } from './rows/storage';
import type { SummaryRow } from './rows/summaries';
import type { TagRow } from './rows/tags';
import type { EvalAudioDeletionRow, EvalCallPinRow, EvalRunRow, EvalScenarioRow, RelayLineLossRow, RelayLineRow } from './rows/evals';
import type { TeamRow } from './rows/teams';
import type { TimelineAnalysisRow } from './rows/timeline-analyses';
import type { TranscribeRow } from './rows/transcribes';
import type { TranscriptRow } from './rows/transcripts';
import type { TransferRow } from './rows/transfers';
import type { TrunkRow } from './rows/trunks';
import type { TwilioAlertRow, TwilioDebuggerWebhookRow } from './rows/twilio-alerts';
import type { VoicemailBoxRow } from './rows/voicemail-boxes';
import type { VoicemailMessageRow } from './rows/voicemail-messages';
import type { WebhookDeliveryRow } from './rows/webhook-deliveries';
import type { SessionRow, WebchatMessageRow, WidgetRow } from './rows/webchat';
import type { AddressRow } from './rows/workspace-contact-addresses';
import type { PeerEventRow } from './rows/workspace-peer-events';

/** call_sip_ids. */
export interface CallSipIdsRow {
  call_id: string;
  sip_call_id: string;
  tm_create: Date;
}

/** contact_tags. */
export interface ContactTagsRow {
  contact_id: string;
  tag_id: string;
  tm_create: Date;
}

/** customer_domains. */
export interface CustomerDomainsRow {
  customer_id: string;
  label: string;
  tm_create: Date;
}

/** events. */
export interface EventsRow {
  id: string;
  seq: number;
  customer_id: string;
  event_type: string;
  resource: string;
  resource_id: string;
  activeflow_id: string | null;
  timestamp: Date;
  data: unknown;
  tm_create: Date;
}

/** rag_chunks. */
export interface RagChunksRow {
  id: string;
  rag_id: string;
  source_id: string;
  seq: number;
  content: string;
  embedding: number[] | null;
  tsv: string | null;
}

/**
 * What an insert or update may write: any subset of the columns, as values or raw SQL; the `AsText` columns
 * also as text, and an `AsText` column that holds an array only as text (pg would write the JS array as a
 * Postgres array literal, which a jsonb column refuses).
 */
export type Write<Row, AsText extends keyof Row = never> = {
  [K in keyof Row]?: (K extends AsText ? (NonNullable<Row[K]> extends readonly unknown[] ? string | Extract<Row[K], null> : Row[K] | string) : Row[K]) | Knex.Raw;
};

/**
 * The `peer_events` view (migration 0761) as it reads: the repository selects `"timestamp" as tm_create`
 * (core/workspace/peer-events.ts). Its columns come from NOT NULL columns of events or from coalesce().
 */
export type PeerEventsViewRow = Omit<PeerEventRow, 'tm_create'> & { seq: number; timestamp: Date };

/** A view: read only (an insert or update does not compile). */
export type View<Row> = Knex.CompositeTableType<Row, never, never>;

/** One table: reads give `Row`, inserts and updates take `Write<Row, AsText>`. */
export type Table<Row, AsText extends keyof Row = never> = Knex.CompositeTableType<Row, Write<Row, AsText>, Write<Row, AsText>>;

declare module 'knex/types/tables' {
  interface Tables {
    accesskeys: Table<AccesskeyRow>;
    activeflows: Table<ActiveflowRow, 'current_action' | 'executed_actions' | 'variables'>;
    agents: Table<AgentRow, 'tag_ids' | 'addresses'>;
    ai_prompt_histories: Table<PromptHistoryRow>;
    ai_prompt_proposals: Table<ProposalRow, 'audit_ids'>;
    ai_versions: Table<AiVersionRow, 'config' | 'parameter' | 'changed' | 'keys_withheld'>;
    aiaudits: Table<AiAuditRow, 'evaluation' | 'message_ids'>;
    aicalls: Table<AicallRow, 'ai_vad_config' | 'parameter' | 'metadata'>;
    aimessages: Table<AimessageRow, 'tool_calls' | 'metadata'>;
    ais: Table<AiRow, 'parameter' | 'vad_config' | 'tool_names'>;
    billing_accounts: Table<BillingAccountRow>;
    billings: Table<BillingRow>;
    call_sip_ids: Table<CallSipIdsRow>;
    calls: Table<CallRow, 'source' | 'destination' | 'data' | 'metadata' | 'quality'>;
    campaigncalls: Table<CampaigncallRow, 'source' | 'destination'>;
    campaigns: Table<CampaignRow, 'actions' | 'amd'>;
    conferencecalls: Table<ConferencecallRow>;
    conferences: Table<ConferenceRow, 'data'>;
    contact_addresses: Table<AddressRow>;
    contact_case_notes: Table<CaseNoteRow>;
    contact_cases: Table<ContactCaseRow, 'peer' | 'local'>;
    contact_tags: Table<ContactTagsRow>;
    contacts: Table<ContactRow>;
    conversation_accounts: Table<ConversationAccountRow, 'provider_data'>;
    conversation_messages: Table<ConversationMessageRow, 'source' | 'destination' | 'medias'>;
    conversations: Table<ConversationRow, 'self' | 'peer'>;
    customer_domains: Table<CustomerDomainsRow>;
    customers: Table<CustomerRow, 'metadata'>;
    email_verification_tokens: Table<VerificationTokenRow>;
    emails: Table<EmailRow, 'source' | 'destinations' | 'attachments'>;
    eval_audio_deletions: Table<EvalAudioDeletionRow>;
    eval_call_pins: Table<EvalCallPinRow>;
    eval_runs: Table<EvalRunRow, 'scenarios' | 'results' | 'versions'>;
    eval_scenarios: Table<EvalScenarioRow, 'target' | 'caller' | 'checks'>;
    events: Table<EventsRow, 'data' | 'timestamp'>;
    extensions: Table<ExtensionRow>;
    flows: Table<FlowRow, 'actions'>;
    groupcalls: Table<GroupcallRow, 'source' | 'destinations' | 'data'>;
    message_targets: Table<TargetRow, 'destination'>;
    messages: Table<MessageRow, 'source'>;
    numbers: Table<NumberRow, 'metadata'>;
    outbound_configs: Table<OutboundConfigRow, 'destination_whitelist'>;
    outbound_registrations: Table<OutboundRegistrationRow>;
    outdials: Table<OutdialRow>;
    outdialtargets: Table<OutdialtargetRow, 'destination_0' | 'destination_1' | 'destination_2' | 'destination_3' | 'destination_4'>;
    outplans: Table<OutplanRow, 'source' | 'dial_windows'>;
    password_reset_tokens: Table<ResetTokenRow>;
    pbx_settings: Table<PbxSettingsRow, 'feature_codes'>;
    peer_events: View<PeerEventsViewRow>;
    providercalls: Table<ProvidercallRow, 'source' | 'destinations'>;
    providers: Table<ProviderRow, 'tech_headers' | 'metadata'>;
    provisioning_customer_secrets: Table<ProvisioningCustomerSecretRow>;
    provisioning_tokens: Table<ProvisioningTokenRow>;
    queuecalls: Table<QueuecallRow>;
    queues: Table<QueueRow, 'tag_ids'>;
    rag_chunks: Table<RagChunksRow, 'embedding'>;
    rag_sources: Table<RagSourceRow>;
    rags: Table<RagRow>;
    recordings: Table<RecordingRow, 'options'>;
    relay_line_losses: Table<RelayLineLossRow>;
    relay_lines: Table<RelayLineRow>;
    routes: Table<RouteRow>;
    speakings: Table<SpeakingRow>;
    storage_accounts: Table<StorageAccountRow>;
    storage_files: Table<StorageFileRow>;
    summaries: Table<SummaryRow>;
    tags: Table<TagRow>;
    talk_chats: Table<Omit<ChatRow, 'member_count'>>; // member_count is counted by the query, not stored
    talk_messages: Table<ChatMessageRow, 'medias' | 'metadata'>;
    talk_participants: Table<ChatParticipantRow>;
    teams: Table<TeamRow, 'members' | 'parameter'>;
    timeline_analyses: Table<TimelineAnalysisRow, 'result'>;
    transcribes: Table<TranscribeRow>;
    transcripts: Table<TranscriptRow>;
    transfers: Table<TransferRow, 'transferee_addresses'>;
    trunks: Table<TrunkRow>;
    twilio_alerts: Table<TwilioAlertRow>;
    twilio_debugger_webhooks: Table<TwilioDebuggerWebhookRow>;
    voicemail_boxes: Table<VoicemailBoxRow>;
    voicemail_messages: Table<VoicemailMessageRow>;
    webchat_messages: Table<WebchatMessageRow>;
    webchat_sessions: Table<SessionRow>;
    webchat_widgets: Table<WidgetRow, 'theme_config'>;
    webhook_deliveries: Table<WebhookDeliveryRow>;
  }
}
