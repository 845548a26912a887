/**
 * The media-app side of TwiML (issue 36): fills `services.twiml`, everything flow actions take of TwiML
 * (issue 53: they import nothing of twiml/): the customer's signing key, recording details for Record's
 * callback, the signed document fetch and call parameters, wait documents, partial results, the
 * ConversationRelay session, recording callbacks, the debugger alerts (whose webhook deliveries it stops
 * with the node). It runs the `activeflow.redirect` command (Twilio's live call update with Url/Twiml):
 * the running action is interrupted and the validated actions replace the rest of the activeflow. It also sends <Refer>'s
 * REFER and answers the NOTIFYs of this node's calls (refer.ts).
 */
import { validateActions } from '../../core/flow';
import { customersRepo } from '../../core/repos/customers';
import { recordingsReadRepo } from '../../core/repos/recordings';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import { recordingUrl } from '../../core/twilio/sids';
import type { Logger } from 'pino';
import type { Subsystem, SubsystemContext } from '../subsystem';
import { type ReferOutcome, ReferSender } from './refer';
import { openRelaySocket } from './relay-socket';
import { alertRecorder, type AlertRecorder } from './alerts';
import { DebuggerDeliveries } from './debugger';
import { PolicyHttp, type FlowHttp } from '../kit/http';
import type WebSocket from 'ws';
import type { z } from 'zod';
import type { conversation_relay } from '../../core/flow/options/conversation-relay';
import type { ActionContext } from '../flow/actions/base';
import type { Address, CallInfo, CallPort } from '../flow/call-port';
import { fetchTwiml, type TwimlFetch } from './fetch';
import { callParams, twilioParty } from './params';
import { PartialResults, type PartialTarget } from './partial-results';
import { RelayConversation, type RelayDeps, type RelayEnd } from './relay';
import { RelayConnectError } from './relay-socket';
import { relayLineSink, type RelayLineSink } from './relay-lines';
import { runRecordingJob, type RecordingJob } from './recording-callbacks';
import { playWaitDocument, type WaitDocument, type WaitEnd } from './wait-document';

/** How long a <ConversationRelay>'s WebSocket may take to open, ms. */
const RELAY_CONNECT_TIMEOUT_MS = 5000;

export interface RecordingFacts {
  id: string;
  ended: boolean;
  /** Whole seconds, as Twilio's RecordingDuration. */
  durationSec: number;
  url: string;
  /** When the recording started (RecordingStartTime). */
  startedAt: Date | null;
  /** How many files it has (none: nothing was recorded). */
  files: number;
}

export interface TwimlService {
  /** The customer's Twilio AuthToken (the X-Twilio-Signature key); null when the customer is gone. */
  authToken(customerId: string): Promise<string | null>;
  /** The recording's duration and media URL once it has ended; null when unknown. */
  recording(customerId: string, recordingId: string): Promise<RecordingFacts | null>;
  /** The platform's public base URL (no trailing slash): RecordingUrl, TranscriptionUrl. */
  readonly publicUrl: string;
  readonly logger: Logger;
  /** Sends a REFER to the far end of the call's SIP leg and waits for its outcome; null when the call is not on this node. */
  refer(callId: string, referTo: string, timeoutMs: number, signal: AbortSignal): Promise<ReferOutcome | null>;
  /** Opens a <ConversationRelay>'s WebSocket through the egress policy, signed (relay-socket.ts); why not, in words safe to store, when it cannot. */
  openRelay(url: string, authToken: string): Promise<{ ws: WebSocket } | { failed: string }>;
  /** A <ConversationRelay> session on the open socket (relay.ts); run() resolves when it ends. */
  relay(deps: RelayDeps, option: z.infer<typeof conversation_relay>): { run(): Promise<RelayEnd> };
  /** Where a <ConversationRelay> session on the customer's call writes the app's replies (relay-lines.ts). */
  relayLines(customerId: string, callId: string): RelayLineSink;
  /** Records a Twilio debugger alert of the customer's (alerts.ts); never rejects. */
  alert: AlertRecorder;
  /** Fetches a document on a call's behalf, signed, through `http` (fetch.ts); failures are TwimlError 11200 / 12300. */
  fetch(http: FlowHttp, f: TwimlFetch): Promise<{ text: string; url: string }>;
  /** Twilio's request parameters of the call: CallSid, AccountSid, From, To, CallStatus ... (params.ts). */
  callParams(customerId: string, info: CallInfo | undefined): Record<string, string>;
  /** A party as Twilio writes it (client:NAME for an extension). */
  party(a: Address): string;
  /** Loops a wait document (<Conference waitUrl>, <Enqueue waitUrl>) until `signal` aborts or it says Leave/Hangup (wait-document.ts). */
  playWaitDocument(ctx: ActionContext, call: CallPort, w: WaitDocument, signal: AbortSignal): Promise<WaitEnd>;
  /** <Gather partialResultCallback>'s sender (partial-results.ts). */
  partialResults(t: PartialTarget): PartialResults;
  /** Follows one recording's callbacks in the background (recording-callbacks.ts); resolves when they are done. */
  recordingJob(job: Omit<RecordingJob, 'twiml'>): Promise<void>;
}

declare module '../flow/services' {
  interface FlowServices {
    twiml?: TwimlService;
  }
}

/** The service's members over the node's parts; `debuggerHook` delivers its alerts to the Debugger webhook. */
function twimlService(ctx: SubsystemContext, debuggerHook: DebuggerDeliveries): TwimlService {
  const { db, config } = ctx.deps;
  const recordings = recordingsReadRepo(db);
  const customers = customersRepo(db);
  const publicUrl = config.publicUrl.replace(/\/$/, '');
  const refers = new ReferSender(ctx.logger);
  refers.register(ctx.deps);
  const service: TwimlService = {
    async authToken(customerId) {
      const c = await customers.get(customerId);
      return c ? twilioAuthToken(config.jwtSecret, c.id, c.twilio_token_generation) : null;
    },
    async recording(customerId, recordingId) {
      const r = await recordings.get(customerId, recordingId);
      if (!r) return null;
      const ms = r.tm_start && r.tm_end ? r.tm_end.getTime() - r.tm_start.getTime() : 0;
      return {
        id: r.id,
        ended: r.status === 'ended',
        durationSec: Math.max(0, Math.round(ms / 1000)),
        url: recordingUrl(publicUrl, customerId, r.id),
        startedAt: r.tm_start,
        files: r.filenames.length,
      };
    },
    publicUrl,
    logger: ctx.logger,
    async refer(callId, referTo, timeoutMs, signal) {
      const call = ctx.factory.get(callId);
      return call ? refers.refer(call, referTo, timeoutMs, signal) : null;
    },
    async openRelay(url, authToken) {
      try {
        return { ws: await openRelaySocket(ctx.deps.egress, url, authToken, RELAY_CONNECT_TIMEOUT_MS) };
      } catch (e) {
        if (e instanceof RelayConnectError) return { failed: e.message };
        throw e;
      }
    },
    relay: (deps, option) => new RelayConversation(deps, option),
    relayLines: (customerId, callId) => relayLineSink(db, ctx.logger, customerId, callId),
    alert: alertRecorder(db, ctx.logger, debuggerHook),
    fetch: fetchTwiml,
    callParams,
    party: twilioParty,
    playWaitDocument,
    partialResults: (t) => new PartialResults(t),
    recordingJob: (job) => runRecordingJob({ ...job, twiml: service }),
  };
  return service;
}

export const subsystem: Subsystem = {
  name: 'twiml',
  async start(ctx) {
    const debuggerHook = new DebuggerDeliveries(ctx.deps.db, ctx.logger, {
      http: new PolicyHttp(ctx.deps.egress, ctx.logger),
      authToken: (id) => service.authToken(id),
      ...ctx.deps.app.twilioDebugger,
    });
    const service = twimlService(ctx, debuggerHook);
    ctx.services.twiml = service;
    ctx.commands.on('activeflow.redirect', async (c) => {
      const session = ctx.factory.manager.get(c.activeflowId);
      if (!session || session.ended) {
        ctx.logger.info({ activeflowId: c.activeflowId }, 'activeflow.redirect: the activeflow is not running on this node');
        return;
      }
      const v = validateActions(c.actions, { field: 'actions' });
      if (!v.ok) {
        ctx.logger.warn({ activeflowId: c.activeflowId, problem: `${v.problems[0]!.field}: ${v.problems[0]!.message}` }, 'activeflow.redirect: actions refused');
        return;
      }
      session.redirect(v.actions);
    });
    return {
      async stop() {
        delete ctx.services.twiml;
        await debuggerHook.stop();
      },
    };
  },
};
