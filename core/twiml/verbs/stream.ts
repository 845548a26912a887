/**
 * <Connect><Stream> (bidirectional; the flow waits until the stream closes, then goes on),
 * <Start><Stream> (forked) and <Stop><Stream> (stops the call's media stream) compile to
 * external_media_start / external_media_stop with encapsulation "twilio". <Parameter name value>
 * children become the stream's customParameters. <Connect><ConversationRelay> is
 * conversation-relay.ts; other nouns of Connect (VirtualAgent, Room) and Start (Siprec, Transcription)
 * are refused.
 */
import { schemaError } from '../errors';
import { childElements, type TwimlElement } from '../parse';
import { Attrs, type Program } from '../program';

const TRACKS = ['inbound_track', 'outbound_track', 'both_tracks'] as const;

function onlyStream(el: TwimlElement): TwimlElement {
  const kids = childElements(el);
  if (kids.length !== 1 || kids[0]!.name !== 'Stream') throw schemaError(`<${el.name}> must contain exactly one <Stream> (${kids.map((k) => `<${k.name}>`).join(', ') || 'nothing'} given)`);
  return kids[0]!;
}

export function compileStreamStart(p: Program, el: TwimlElement): void {
  const outer = new Attrs(el, ['action', 'method']);
  if (outer.str('action') !== undefined) throw schemaError(`<${el.name}> action is not supported here`);
  const s = onlyStream(el);
  const a = new Attrs(s, ['url', 'name', 'track', 'statusCallback', 'statusCallbackMethod']);
  const url = a.str('url');
  if (!url || !/^wss?:\/\/[^\s/]+/i.test(url)) throw schemaError('<Stream> url must be a ws:// or wss:// URL');
  const option: Record<string, unknown> = { encapsulation: 'twilio', url };
  const name = a.str('name');
  if (name !== undefined) option.name = name;
  const track = a.oneOf('track', TRACKS);
  if (track) option.twilio_track = track;
  const cb = a.str('statusCallback');
  if (cb !== undefined) option.status_callback = p.url('Stream', 'statusCallback', cb);
  const cbm = a.method('statusCallbackMethod');
  if (cbm) option.status_callback_method = cbm;
  const params: Record<string, string> = {};
  for (const k of childElements(s)) {
    if (k.name !== 'Parameter') throw schemaError(`<Stream> cannot contain <${k.name}>`);
    const pa = new Attrs(k, ['name', 'value']);
    const n = pa.str('name');
    if (!n) throw schemaError('<Parameter> needs a name');
    params[n] = pa.str('value') ?? '';
  }
  if (Object.keys(params).length) option.twilio_parameters = params;
  if (el.name === 'Connect') option.wait = true;
  p.add('external_media_start', option);
}

export function compileStreamStop(p: Program, el: TwimlElement): void {
  new Attrs(el, []);
  const s = onlyStream(el);
  new Attrs(s, ['name']);
  p.add('external_media_stop', {});
}
