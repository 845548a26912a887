/**
 * One AI conversation (an aicall): the messages, the LLM stream, tool calls mapped to platform
 * actions, team hand-offs, RAG context, and an aimessage (with its event) per message. Audio is
 * not its business: ai_talk feeds it recognised speech and speaks what it yields; ai_task feeds it
 * text.
 */
import type { Db } from '../db/knex';
import type { EventPublisher } from '../events/bus';
import { publishResourceEvent, type EventType, type ResourcePayload } from '../events/catalogue';
import { EMPTY_UUID } from '../ids';
import { LlmError, type ChatLlm, type ChatMessage, type ToolCall, type ToolDef } from '../llm/client';
import { FallbackLlm, llmFallbackOf, type LlmFallbackInfo } from '../llm/fallback';
import { realtimeModel } from '../speech/voices';
import { llmFor } from '../llm/endpoint';
import type { EgressPolicy } from '../net';
import { retrieve, knowledgeMessage } from '../rag/search';
import { aisRepo, type AiRow } from '../repos/ais';
import { AICALL_EVENT, aicallJson, aicallsRepo, aimessageJson, type AicallRow, type AicallStatus, type AimessageRow } from '../repos/ai-calls';
import { teamsRepo, type TeamMember, type TeamRow } from '../repos/teams';
import { toolDefs, type AiActions, type ToolName } from './tools';
import { AiNotFound, assistanceOf, atVersion } from './session-assistance';
export { AiNotFound };
import { Prefetch } from './prefetch';
import { jsonText } from '../json-text';
export { EMPTY_UUID as NO_ID };

export interface AiDeps {
  db: Db;
  events: EventPublisher | null;
  env?: NodeJS.ProcessEnv;
  /** The policy LLM and RAG requests go through (default: the policy of `env`). */
  egress?: EgressPolicy;
}

export interface StartOptions {
  customerId: string;
  assistanceType: 'ai' | 'team';
  assistanceId: string;
  referenceType: 'call' | 'conversation' | 'task' | '';
  referenceId: string;
  activeflowId: string;
  /** replaces ${var} in the prompt */
  variables?: Record<string, string>;
  actions?: AiActions;
  /** the host talks to a speech-to-speech engine_model itself (ai_talk); anyone else is refused one */
  speechToSpeech?: boolean;
  /** run this version of the AI (an assistance of type ai), never its latest instead (issue 56); undefined: the latest */
  aiVersion?: number;
}

/** Why the conversation ended, when a tool ended it. */
export type EndRequest = { kind: 'stop_service' } | { kind: 'stop_flow' } | { kind: 'connect'; destinations: { type: string; target: string }[] };

const MAX_TOOL_ROUNDS = 5;

/**
 * The AI's chat LLM (with its fallback by choice, `parameter.llm_fallback`); none for a
 * speech-to-speech model, which only a host that speaks with it may use.
 */
function chatLlmFor(ai: AiRow, deps: AiDeps, speechToSpeech = false, onFallback: (f: LlmFallbackInfo) => void = () => undefined): ChatLlm | null {
  if (!realtimeModel(ai.engine_model)) {
    const first = llmFor(ai, deps.env, deps.egress);
    const fb = llmFallbackOf(ai.parameter);
    return fb ? new FallbackLlm(first, () => llmFor(fb.fallback, deps.env, deps.egress), fb.firstTokenMs, onFallback) : first;
  }
  if (!speechToSpeech) throw new LlmError('NOT_CONFIGURED', `engine_model ${ai.engine_model} is a speech-to-speech model: it talks only in ai_talk on a call`);
  return null;
}

function substitute(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\{([^}]+)\}/g, (_m, k: string) => vars[k.trim()] ?? '');
}

export class AiSession {
  /** Set when a tool asked to end the conversation. */
  endRequest: EndRequest | null = null;
  private readonly history: ChatMessage[] = [];
  private member: TeamMember | null;
  private ended = false;
  /** turn records (recordTurn) in flight: end() waits for them before it says terminated */
  private readonly turnRecords = new Set<Promise<void>>();
  private terminated = false;

  private constructor(
    private readonly deps: AiDeps,
    public aicall: AicallRow,
    private ai: AiRow,
    private readonly team: TeamRow | null,
    private readonly opts: StartOptions,
    private llm: ChatLlm | null,
    /** the version the session runs (StartOptions.aiVersion, or the one looked up); undefined: the AI's latest */
    readonly aiVersion?: number,
  ) {
    this.member = team ? (team.members.find((m) => m.id === team.start_member_id) ?? team.members[0] ?? null) : null;
  }

  /**
   * Loads the AI (or team), checks its endpoint, writes the aicall (progressing; its initializing and
   * progressing events in order). `versionLookup`: the version to run when it is still being read (ai_talk's
   * eval run pin), read beside the AI's row; undefined from it: StartOptions.aiVersion.
   */
  static async start(deps: AiDeps, opts: StartOptions, versionLookup?: Promise<number | undefined>): Promise<AiSession> {
    // the AI's row and the version to run are read together (neither waits for the other)
    const [found, looked] = await Promise.all([assistanceOf(deps, opts), versionLookup]);
    const version = looked ?? opts.aiVersion;
    const team = found.team;
    let ai = found.ai;
    if (version !== undefined) ai = await atVersion(deps, { ...opts, aiVersion: version }, ai);
    // throws LlmError NOT_CONFIGURED before anything is written
    const holder: { s: AiSession | null } = { s: null };
    const llm = chatLlmFor(ai, deps, opts.speechToSpeech, (f) => holder.s?.fellBack(f));
    // written as progressing in one statement (the start's one round trip to the database); its two
    // status events go out in order, the first with the row as it was initiating
    const aicall = await aicallsRepo(deps.db).create(
      opts.customerId,
      {
        assistance_type: opts.assistanceType,
        assistance_id: opts.assistanceId,
        ai_engine_model: ai.engine_model,
        ai_tts_type: ai.tts_type,
        ai_tts_voice_id: ai.tts_voice_id,
        ai_stt_type: ai.stt_type,
        ai_vad_config: ai.vad_config,
        parameter: team?.parameter ?? ai.parameter,
        activeflow_id: opts.activeflowId || null,
        reference_type: opts.referenceType,
        reference_id: opts.referenceId || null,
        current_member_id: team?.start_member_id ?? null,
        stt_language: ai.stt_language,
      },
      { progressing: true },
    );
    const s = new AiSession(deps, aicall, ai, team, opts, llm, version);
    holder.s = s;
    await s.publish(AICALL_EVENT.initiating as EventType, aicallJson({ ...aicall, status: 'initiating', tm_update: null }));
    await s.publish(AICALL_EVENT.progressing as EventType);
    return s;
  }

  /** Picks up an existing aicall (text conversations through the API): its AI or current member, its messages. */
  static async resume(deps: AiDeps, aicall: AicallRow, actions: AiActions = {}): Promise<AiSession> {
    let team: TeamRow | null = null;
    let aiId = aicall.assistance_id;
    if (aicall.assistance_type === 'team') {
      team = await teamsRepo(deps.db).get(aicall.customer_id, aicall.assistance_id);
      if (!team) throw new AiNotFound(`team ${aicall.assistance_id} not found`);
      const m = team.members.find((x) => x.id === (aicall.current_member_id ?? team!.start_member_id)) ?? team.members[0];
      if (!m) throw new AiNotFound('the team has no members');
      aiId = m.ai_id;
    }
    const ai = await aisRepo(deps.db).get(aicall.customer_id, aiId);
    if (!ai) throw new AiNotFound(`ai ${aiId} not found`);
    const holder: { s: AiSession | null } = { s: null };
    const s = new AiSession(
      deps,
      aicall,
      ai,
      team,
      {
        customerId: aicall.customer_id,
        assistanceType: aicall.assistance_type,
        assistanceId: aicall.assistance_id,
        referenceType: aicall.reference_type as StartOptions['referenceType'],
        referenceId: aicall.reference_id ?? '',
        activeflowId: aicall.activeflow_id ?? '',
        actions,
      },
      chatLlmFor(ai, deps, false, (f) => holder.s?.fellBack(f)),
    );
    holder.s = s;
    if (team && aicall.current_member_id) s.member = team.members.find((x) => x.id === aicall.current_member_id) ?? s.member;
    for (const m of await aicallsRepo(deps.db).history(aicall.id)) {
      if (!['user', 'assistant', 'tool', 'system'].includes(m.role)) continue;
      const msg: ChatMessage = { role: m.role as ChatMessage['role'], content: m.content || null };
      if (m.tool_calls?.length) msg.tool_calls = m.tool_calls as ToolCall[];
      if (m.tool_call_id) msg.tool_call_id = m.tool_call_id;
      s.history.push(msg);
    }
    return s;
  }

  get id(): string {
    return this.aicall.id;
  }

  get currentAi(): AiRow {
    return this.ai;
  }

  get isEnded(): boolean {
    return this.ended || this.endRequest !== null;
  }

  private async publish(type: EventType, payload?: ResourcePayload): Promise<void> {
    if (!this.deps.events) return;
    await publishResourceEvent(this.deps.events, type, payload ?? aicallJson(this.aicall)).catch(() => undefined);
  }

  private async setStatus(to: AicallStatus): Promise<void> {
    const r = await aicallsRepo(this.deps.db).transition(this.aicall.id, to);
    if (!r) return;
    this.aicall = r;
    await this.publish(AICALL_EVENT[to] as EventType);
  }

  /** Adds a message from outside (API); the next reply('') answers it. */
  addMessage(role: ChatMessage['role'], content: string): Promise<AimessageRow> {
    return this.record({ role, content }, role === 'user' ? 'incoming' : role === 'assistant' ? 'outgoing' : '');
  }

  private async record(m: ChatMessage, direction: '' | 'incoming' | 'outgoing'): Promise<AimessageRow> {
    this.history.push(m);
    const row = await aicallsRepo(this.deps.db).addMessage({
      customer_id: this.aicall.customer_id,
      aicall_id: this.aicall.id,
      activeflow_id: this.opts.activeflowId || null,
      active_ai_id: this.ai.id,
      role: m.role,
      content: m.content ?? '',
      direction,
      tool_calls: m.tool_calls ?? [],
      tool_call_id: m.tool_call_id ?? '',
    });
    await this.publish('aimessage_created', aimessageJson(row));
    return row;
  }

  private systemPrompt(): string {
    const vars = { ...(this.team?.parameter as Record<string, string> | undefined), ...this.ai.parameter, ...this.opts.variables } as Record<string, string>;
    return substitute(this.ai.init_prompt || 'You are a helpful voice assistant. Answer briefly.', vars);
  }

  private available = (n: ToolName): boolean => {
    const a = this.opts.actions ?? {};
    switch (n) {
      case 'connect_call':
        return !!a.connect;
      case 'stop_flow':
        return !!a.stopFlow;
      case 'send_message':
        return !!a.sendMessage;
      case 'set_variables':
        return !!a.setVariables;
      case 'get_variables':
        return !!a.getVariables;
      case 'stop_media':
        return !!a.stopMedia;
      case 'search_knowledge':
        return !!this.ai.rag_id;
      default:
        return true;
    }
  };

  private tools() {
    const defs = toolDefs(this.ai.tool_names ?? [], this.available);
    for (const t of this.member?.transitions ?? []) {
      defs.push({ type: 'function', function: { name: t.function_name, description: t.description, parameters: { type: 'object', properties: {} } } });
    }
    return defs;
  }

  /**
   * The caller (or the flow) said `text`: streams the assistant's answer as text pieces. Tool calls
   * run between LLM rounds; a tool that ends the conversation sets endRequest and stops the loop.
   * An empty text asks for an opening line (no user message recorded).
   */
  async *reply(text: string, signal?: AbortSignal, opts: { onMessage?: (row: AimessageRow) => void; onTextEnd?: () => void; prefetched?: Prefetch | null } = {}): AsyncGenerator<string> {
    if (this.ended) return opts.prefetched?.abort();
    // the caller's words join the history at once and are stored while the LLM is asked: the
    // database is not on the way to the answer (the assistant's message is stored after them)
    const userRow = text ? this.record({ role: 'user', content: text }, 'incoming') : null;
    userRow?.catch(() => undefined);
    let knowledge: string | null = null;
    const query = text || [...this.history].reverse().find((m) => m.role === 'user')?.content || '';
    if (this.ai.rag_id && query) {
      const hits = await retrieve(this.deps.db, this.ai.rag_id, query, 3, this.deps.env, this.deps.egress).catch(() => []);
      if (hits.length) knowledge = knowledgeMessage(hits);
    }
    for (let round = 0; round <= MAX_TOOL_ROUNDS && !this.isEnded; round++) {
      const messages: ChatMessage[] = [{ role: 'system', content: this.systemPrompt() }];
      if (knowledge) messages.push({ role: 'system', content: knowledge });
      messages.push(...this.history);
      if (!text && this.history.length === 0) messages.push({ role: 'system', content: 'The caller has just joined: greet them briefly, or answer with nothing to wait for them.' });
      let content = '';
      let calls: ToolCall[] = [];
      if (!this.llm) throw new LlmError('NOT_CONFIGURED', `engine_model ${this.ai.engine_model} is a speech-to-speech model: it talks only in ai_talk`);
      try {
        // the first round asked ahead (prefetch) is taken only if it sent exactly these messages
        const pre = round === 0 && opts.prefetched && !opts.prefetched.aborted && !opts.prefetched.failed && opts.prefetched.sent === JSON.stringify(messages) ? opts.prefetched : null;
        if (round === 0 && opts.prefetched && !pre) opts.prefetched.abort();
        for await (const c of pre ? pre.replay(signal) : this.llm.stream({ messages, tools: this.tools(), signal })) {
          if (c.type === 'text') {
            content += c.text;
            yield c.text;
          } else if (c.type === 'tool_calls') calls = c.calls;
        }
        // the round's text is complete: a voice speaks its last sentence now, not after the messages are stored
        opts.onTextEnd?.();
      } catch (e) {
        // the chat model failed (a refused key, an error status, the egress policy...): said in an event as well as to the caller
        if (e instanceof LlmError && !signal?.aborted) await this.llmFailed(e);
        throw e;
      } finally {
        // the caller's message first (a failure to store it is this reply's error)
        if (userRow) await userRow;
        // what was said (even cut short by barge-in) is part of the conversation
        if (content || calls.length) {
          const row = await this.record({ role: 'assistant', content: content || null, ...(calls.length ? { tool_calls: calls } : {}) }, 'outgoing');
          opts.onMessage?.(row);
        }
      }
      if (!calls.length) return;
      for (const call of calls) {
        const result = await this.runTool(call).catch((e: Error) => `error: ${e.message}`);
        await this.record({ role: 'tool', content: result, tool_call_id: call.id }, '');
      }
    }
  }

  /**
   * Asks the LLM for the answer to `text` without recording anything (preemptive generation: the
   * caller may not have finished); a reply with these words takes it (reply's `prefetched`). Null
   * when there is no chat model or the session is over.
   */
  prefetch(text: string): Prefetch | null {
    const llm = this.llm;
    // an AI with a knowledge base: the reply's messages carry what the words retrieve, which an
    // early request cannot know, so it would never be taken (docs/ai.md "Turn-taking")
    if (this.isEnded || !llm || !text || this.ai.rag_id) return null;
    const messages: ChatMessage[] = [{ role: 'system', content: this.systemPrompt() }, ...this.history, { role: 'user', content: text }];
    const tools = this.tools();
    return new Prefetch(text, messages, (m, signal) => llm.stream({ messages: m, tools, signal }));
  }

  /**
   * A voice turn's latency breakdown, known once its first audio went out: merged into its
   * assistant messages' metadata (`latency`) and published as an aicall_turn event.
   */
  async recordTurn(messageIds: string[], latency: Record<string, unknown>): Promise<void> {
    // a turn measured once the session is terminated is not told: no event of the aicall after its end
    if (this.terminated) return;
    const work = (async () => {
      await aicallsRepo(this.deps.db).mergeMessageMetadata(messageIds, { latency });
      await this.publish('aicall_turn', { id: this.aicall.id, customer_id: this.aicall.customer_id, aicall_id: this.aicall.id, aimessage_ids: messageIds, latency });
    })();
    this.turnRecords.add(work);
    try {
      await work;
    } finally {
      this.turnRecords.delete(work);
    }
  }

  /** The chat model (or its fallback) failed: an aicall_llm_failed event with the reason. */
  private async llmFailed(e: LlmError): Promise<void> {
    await this.publish('aicall_llm_failed', {
      id: this.aicall.id,
      customer_id: this.aicall.customer_id,
      aicall_id: this.aicall.id,
      activeflow_id: this.opts.activeflowId,
      engine_model: this.llm?.label ?? this.ai.engine_model,
      reason: e.message,
    });
  }

  /** The chat model failed or was slow and its fallback answers: an aicall_llm_fallback event. */
  private fellBack(f: LlmFallbackInfo): void {
    void this.publish('aicall_llm_fallback', {
      id: this.aicall.id,
      customer_id: this.aicall.customer_id,
      aicall_id: this.aicall.id,
      activeflow_id: this.opts.activeflowId,
      engine_model: f.from,
      fallback_engine_model: f.to,
      reason: f.reason,
      message: f.message,
    });
  }

  /** What a speech-to-speech model is told: the prompt with its variables, and the tools the text path offers. */
  realtimeSetup(): { instructions: string; tools: ToolDef[] } {
    return { instructions: this.systemPrompt(), tools: this.tools() };
  }

  /** Words a speech-to-speech model heard (user, incoming) or said (assistant, outgoing), as an aimessage. */
  recordSpoken(role: 'user' | 'assistant', text: string): Promise<AimessageRow> {
    return this.record({ role, content: text }, role === 'user' ? 'incoming' : 'outgoing');
  }

  /**
   * A function call of a speech-to-speech model: recorded as the text path records one (the
   * assistant's call, then the tool's result) and run by the same tool mapping. Returns the result.
   */
  async callTool(call: ToolCall): Promise<string> {
    await this.record({ role: 'assistant', content: null, tool_calls: [call] }, 'outgoing');
    const result = await this.runTool(call).catch((e: Error) => `error: ${e.message}`);
    await this.record({ role: 'tool', content: result, tool_call_id: call.id }, '');
    return result;
  }

  /** Whole reply as one text (ai_task, conversations). */
  async replyText(text: string, signal?: AbortSignal): Promise<string> {
    let out = '';
    for await (const piece of this.reply(text, signal)) out += piece;
    return out;
  }

  private async runTool(call: ToolCall): Promise<string> {
    let args: Record<string, unknown> = {};
    try {
      args = call.function.arguments ? (JSON.parse(call.function.arguments) as Record<string, unknown>) : {};
    } catch {
      return 'error: arguments are not valid JSON';
    }
    const a = this.opts.actions ?? {};
    const name = call.function.name;
    const transition = this.member?.transitions.find((t) => t.function_name === name);
    if (transition) return this.handOff(transition.next_member_id);
    switch (name as ToolName) {
      case 'stop_service':
        this.endRequest = { kind: 'stop_service' };
        return 'conversation ended';
      case 'stop_flow':
        if (!a.stopFlow) break;
        this.endRequest = { kind: 'stop_flow' };
        return 'the call will end';
      case 'connect_call': {
        if (!a.connect) break;
        const d = Array.isArray(args.destinations) ? (args.destinations as { type?: string; target?: string }[]) : [];
        const destinations = d.filter((x) => x && typeof x.target === 'string').map((x) => ({ type: String(x.type ?? 'tel'), target: String(x.target) }));
        if (!destinations.length) return 'error: destinations needed';
        this.endRequest = { kind: 'connect', destinations };
        return 'connecting';
      }
      case 'send_message': {
        if (!a.sendMessage) break;
        const dest = Array.isArray(args.destinations) ? args.destinations.map(String) : [];
        return a.sendMessage({ source: typeof args.source === 'string' ? args.source : undefined, destinations: dest, text: jsonText(args.text) });
      }
      case 'set_variables': {
        if (!a.setVariables) break;
        const vars = (args.variables && typeof args.variables === 'object' ? args.variables : {}) as Record<string, unknown>;
        return a.setVariables(Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, String(v)])));
      }
      case 'get_variables':
        if (!a.getVariables) break;
        return JSON.stringify(a.getVariables());
      case 'stop_media':
        if (!a.stopMedia) break;
        return a.stopMedia();
      case 'search_knowledge': {
        if (!this.ai.rag_id) break;
        const hits = await retrieve(this.deps.db, this.ai.rag_id, jsonText(args.query), 3, this.deps.env, this.deps.egress);
        return hits.length ? knowledgeMessage(hits) : 'nothing found';
      }
      case 'get_aicall_messages':
        return JSON.stringify(this.history.filter((m) => m.role === 'user' || m.role === 'assistant').map((m) => ({ role: m.role, content: m.content })));
    }
    return `error: tool ${name} is not available here`;
  }

  private async handOff(memberId: string): Promise<string> {
    const m = this.team?.members.find((x) => x.id === memberId);
    if (!m) return 'error: no such team member';
    const ai = await aisRepo(this.deps.db).get(this.aicall.customer_id, m.ai_id);
    if (!ai) return 'error: the member has no AI';
    this.llm = chatLlmFor(ai, this.deps, this.opts.speechToSpeech, (f) => this.fellBack(f));
    this.ai = ai;
    this.member = m;
    await aicallsRepo(this.deps.db).setMember(this.aicall.id, m.id);
    this.aicall = { ...this.aicall, current_member_id: m.id };
    return `you are now ${m.name}; continue the conversation`;
  }

  /** terminating → terminated. Idempotent. */
  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.setStatus('terminating');
    // a turn being recorded (its event) goes out before the session's end, not after it
    await Promise.allSettled([...this.turnRecords]);
    this.terminated = true;
    await this.setStatus('terminated');
  }
}
