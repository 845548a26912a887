/**
 * The functions an AI may call (voipbin's tool names) and the JSON schemas the LLM sees. What each
 * does is up to the host (a call, a flow without a call): it passes an AiActions; tools whose
 * action the host lacks are not offered.
 */
import type { ToolDef } from '../llm/client';

export interface Destination {
  type: string;
  target: string;
  target_name?: string;
}

/** Platform actions the tools map to; each optional. Results are short texts for the LLM. */
export interface AiActions {
  /** Connect (transfer) the caller to these destinations; the AI conversation ends. */
  connect?(destinations: Destination[]): Promise<string>;
  /** Hang up the call and stop the flow. */
  stopFlow?(): Promise<string>;
  sendMessage?(args: { source?: string; destinations: string[]; text: string }): Promise<string>;
  setVariables?(vars: Record<string, string>): string;
  getVariables?(): Record<string, string>;
  /** Stop what the agent is saying. */
  stopMedia?(): Promise<string>;
}

export const TOOL_NAMES = ['connect_call', 'get_aicall_messages', 'get_variables', 'search_knowledge', 'send_message', 'set_variables', 'stop_flow', 'stop_media', 'stop_service'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** Tool names the API accepts (voipbin's list); the ones above are implemented. */
export const API_TOOL_NAMES = [
  'all',
  'connect_call',
  'create_call',
  'get_aicall_messages',
  'get_variables',
  'search_knowledge',
  'send_email',
  'send_message',
  'set_variables',
  'stop_flow',
  'stop_media',
  'stop_service',
  'get_correlation',
  'get_resource',
  'describe_action',
  'case_create',
  'get_contact_interactions',
  'get_conversation_content',
  'get_related_cases',
  'get_case_notes',
] as const;

const obj = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object', properties, required });

const DEFS: Record<ToolName, ToolDef['function']> = {
  connect_call: {
    name: 'connect_call',
    description: 'Transfer the caller to another party (a phone number, an extension, an agent). Ends this conversation.',
    parameters: obj(
      {
        destinations: {
          type: 'array',
          items: obj({ type: { type: 'string', enum: ['tel', 'extension', 'sip', 'agent'] }, target: { type: 'string' } }, ['type', 'target']),
        },
      },
      ['destinations'],
    ),
  },
  get_aicall_messages: { name: 'get_aicall_messages', description: 'The messages of this conversation so far.', parameters: obj({}) },
  get_variables: { name: 'get_variables', description: 'Read the flow variables of this session.', parameters: obj({}) },
  search_knowledge: {
    name: 'search_knowledge',
    description: 'Search the knowledge base for passages relevant to a question.',
    parameters: obj({ query: { type: 'string' } }, ['query']),
  },
  send_message: {
    name: 'send_message',
    description: 'Send an SMS text message.',
    parameters: obj({ source: { type: 'string' }, destinations: { type: 'array', items: { type: 'string' } }, text: { type: 'string' } }, ['destinations', 'text']),
  },
  set_variables: {
    name: 'set_variables',
    description: 'Set flow variables (string values) for the rest of the flow.',
    parameters: obj({ variables: { type: 'object', additionalProperties: { type: 'string' } } }, ['variables']),
  },
  stop_flow: { name: 'stop_flow', description: 'End the call: hang up and stop the flow. Say goodbye first.', parameters: obj({}) },
  stop_media: { name: 'stop_media', description: 'Stop speaking at once.', parameters: obj({}) },
  stop_service: { name: 'stop_service', description: 'End this AI conversation; the flow continues with its next step.', parameters: obj({}) },
};

/** The tools to offer: enabled by name (or "all") and backed by the host. */
export function toolDefs(enabled: readonly string[], available: (n: ToolName) => boolean): ToolDef[] {
  const all = enabled.includes('all');
  return TOOL_NAMES.filter((n) => (all || enabled.includes(n)) && available(n)).map((n) => ({ type: 'function', function: DEFS[n] }));
}
