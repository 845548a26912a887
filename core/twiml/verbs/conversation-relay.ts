/**
 * <Connect action method><ConversationRelay …>, with nested <Language> and <Parameter>: one
 * conversation_relay action (our extension; docs/twilio.md "ConversationRelay"); with `action` its
 * TwiML replaces the rest of this document, with SessionId, SessionStatus, SessionDuration,
 * HandoffData (and ErrorCode, ErrorMessage when it failed); without one the next verb runs.
 * Voices: `ttsProvider` a local TTS type or a cloud vendor of this platform (ElevenLabs, Deepgram,
 * OpenAI, Azure, Cartesia, LMNT; `voice` its voice id); Google and Amazon are a 12200. Recogniser: `transcriptionProvider` Deepgram (or a
 * `speechModel` deepgram*) → deepgram, else pocketsphinx (English only). `hints` → phrases.
 * profanityFilter and debug are accepted and have no effect; other attributes are a 12200.
 */
import { LOCAL_TTS_TYPES, VENDOR_TTS_TYPES } from '../../speech/voices';
import { schemaError } from '../errors';
import { childElements, textOf, type TwimlElement } from '../parse';
import { Attrs, TWIML_VARS, type Program } from '../program';
import { compileStreamStart } from './stream';

const RELAY_ATTRS = [
  'url',
  'welcomeGreeting',
  'welcomeGreetingInterruptible',
  'language',
  'ttsLanguage',
  'ttsProvider',
  'voice',
  'transcriptionLanguage',
  'transcriptionProvider',
  'speechModel',
  'interruptible',
  'dtmfDetection',
  'hints',
  'profanityFilter',
  'debug',
];
const INTERRUPTIBLE = ['any', 'speech', 'dtmf', 'none'] as const;
const BCP47 = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/;

/** <Connect>: a <Stream> (stream.ts) or a <ConversationRelay>. */
export function compileConnect(p: Program, el: TwimlElement): void {
  const kids = childElements(el);
  if (kids.length === 1 && kids[0]!.name === 'ConversationRelay') return compileRelay(p, el, kids[0]!);
  compileStreamStart(p, el);
}

/** Twilio's true/false, or any/speech/dtmf/none. */
function interruptibleOf(a: Attrs, name: string): (typeof INTERRUPTIBLE)[number] | undefined {
  const v = a.str(name);
  if (v === undefined) return undefined;
  if (v === 'true') return 'any';
  if (v === 'false') return 'none';
  return a.oneOf(name, INTERRUPTIBLE);
}

function langOf(a: Attrs, el: string, name: string): string | undefined {
  const v = a.str(name);
  if (v !== undefined && !BCP47.test(v)) throw schemaError(`<${el}> ${name} must be a language tag such as en-US`);
  return v;
}

function ttsOf(a: Attrs, el: string): { tts_provider?: string; voice?: string } {
  const provider = a.str('ttsProvider');
  const voice = a.str('voice');
  const out: { tts_provider?: string; voice?: string } = {};
  if (provider !== undefined) {
    // Twilio's own names: Google, Amazon (Polly: our `aws`), ElevenLabs
    const name = provider.toLowerCase() === 'amazon' ? 'aws' : provider.toLowerCase();
    const hit = [...LOCAL_TTS_TYPES, ...VENDOR_TTS_TYPES].find((t) => t.toLowerCase() === name);
    if (!hit) throw schemaError(`<${el}> ttsProvider "${provider}" is not supported here (use one of ${[...LOCAL_TTS_TYPES, ...VENDOR_TTS_TYPES].join(', ')})`);
    out.tts_provider = hit;
  }
  if (voice !== undefined) {
    if (!out.tts_provider) throw schemaError(`<${el}> voice needs a ttsProvider of this platform (${[...LOCAL_TTS_TYPES, ...VENDOR_TTS_TYPES].join(', ')})`);
    if (!/^[A-Za-z0-9_.+:-]{1,100}$/.test(voice)) throw schemaError(`<${el}> voice must be a voice name (letters, digits, _ . + : -)`);
    out.voice = voice;
  }
  return out;
}

function sttOf(a: Attrs, el: string): string | undefined {
  const provider = a.str('transcriptionProvider');
  const model = a.str('speechModel');
  if (provider !== undefined && !['deepgram', 'pocketsphinx'].includes(provider.toLowerCase())) {
    throw schemaError(`<${el}> transcriptionProvider "${provider}" is not supported here (Deepgram or pocketsphinx)`);
  }
  if (model !== undefined && !model.toLowerCase().startsWith('deepgram') && !model.toLowerCase().startsWith('nova')) {
    throw schemaError(`<${el}> speechModel "${model}" is not supported here (a Deepgram model: nova-2, nova-3)`);
  }
  if (model !== undefined || provider?.toLowerCase() === 'deepgram') return 'deepgram';
  return provider === undefined ? undefined : 'pocketsphinx';
}

function compileRelay(p: Program, connect: TwimlElement, el: TwimlElement): void {
  const outer = new Attrs(connect, ['action', 'method']);
  const a = new Attrs(el, RELAY_ATTRS);
  if (textOf(el)) throw schemaError('<ConversationRelay> takes nested <Language> and <Parameter>, not text');
  const url = a.str('url');
  if (!url || !/^wss?:\/\/[^\s/]+/i.test(url)) throw schemaError('<ConversationRelay> url must be a ws:// or wss:// URL');
  if (url.length > 2048) throw schemaError('<ConversationRelay> url must be at most 2048 characters');
  const option: Record<string, unknown> = { url };
  const greeting = a.str('welcomeGreeting');
  if (greeting !== undefined) {
    if (greeting.length > 4096) throw schemaError('<ConversationRelay> welcomeGreeting must be at most 4096 characters');
    option.welcome_greeting = greeting;
  }
  const wgi = interruptibleOf(a, 'welcomeGreetingInterruptible');
  if (wgi) option.welcome_greeting_interruptible = wgi;
  const language = langOf(a, 'ConversationRelay', 'language') ?? 'en-US';
  option.language = language;
  const ttsLanguage = langOf(a, 'ConversationRelay', 'ttsLanguage');
  if (ttsLanguage) option.tts_language = ttsLanguage;
  const sttLanguage = langOf(a, 'ConversationRelay', 'transcriptionLanguage');
  if (sttLanguage) option.transcription_language = sttLanguage;
  Object.assign(option, ttsOf(a, 'ConversationRelay'));
  const stt = sttOf(a, 'ConversationRelay');
  if (stt) option.stt_provider = stt;
  if ((stt ?? 'pocketsphinx') === 'pocketsphinx' && !(sttLanguage ?? language).toLowerCase().startsWith('en')) {
    throw schemaError(`<ConversationRelay> transcription language ${sttLanguage ?? language} needs transcriptionProvider="Deepgram" (pocketsphinx is English only)`);
  }
  const interruptible = interruptibleOf(a, 'interruptible');
  if (interruptible) option.interruptible = interruptible;
  const dtmf = a.bool('dtmfDetection');
  if (dtmf !== undefined) option.dtmf_detection = dtmf;
  a.bool('profanityFilter');
  const phrases = (a.str('hints') ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  if (phrases.length > 500 || phrases.some((h) => h.length > 200)) throw schemaError('<ConversationRelay> hints: at most 500 phrases of at most 200 characters');
  if (phrases.length) option.phrases = phrases;

  const params: Record<string, string> = {};
  const languages: Record<string, unknown>[] = [];
  for (const k of childElements(el)) {
    if (k.name === 'Parameter') {
      const pa = new Attrs(k, ['name', 'value']);
      const n = pa.str('name');
      if (!n) throw schemaError('<Parameter> needs a name');
      params[n] = pa.str('value') ?? '';
    } else if (k.name === 'Language') {
      const la = new Attrs(k, ['code', 'ttsProvider', 'voice', 'transcriptionProvider', 'speechModel', 'customPronunciations']);
      if (la.str('customPronunciations') !== undefined) throw schemaError('<Language> customPronunciations is not supported here');
      const code = langOf(la, 'Language', 'code');
      if (!code) throw schemaError('<Language> needs a code');
      const entry: Record<string, unknown> = { code, ...ttsOf(la, 'Language') };
      const s = sttOf(la, 'Language');
      if (s) entry.stt_provider = s;
      languages.push(entry);
    } else throw schemaError(`<ConversationRelay> cannot contain <${k.name}>`);
  }
  if (Object.keys(params).length) option.parameters = params;
  if (languages.length) option.languages = languages;
  p.add('conversation_relay', option);

  const action = outer.str('action');
  const method = outer.method();
  if (action === undefined) return;
  for (const [param, v] of [
    ['SessionId', 'session_id'],
    ['SessionStatus', 'status'],
    ['SessionDuration', 'duration'],
    ['HandoffData', 'handoff_data'],
    ['ErrorCode', 'error_code'],
    ['ErrorMessage', 'error_message'],
  ]) {
    p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}${param}`, value: `\${svc.relay.${v}}` });
  }
  p.add('twiml', { url: p.url('Connect', 'action', action), method: method ?? 'POST' });
}
