/** An action in a few words (its type and main option), as the flow page and the simulation path show it. */
export function summary(type: string, o: Record<string, unknown>): string {
  const s = (k: string) => (typeof o[k] === 'string' || typeof o[k] === 'number' ? String(o[k]) : '');
  switch (type) {
    case 'answer':
      return 'answers the call';
    case 'hangup':
      return 'hangs up';
    case 'talk':
      return `says “${s('text')}”${s('language') ? ` in ${s('language')}` : ''}`;
    case 'play':
      return `plays ${Array.isArray(o.stream_urls) ? o.stream_urls.length : 0} file(s)`;
    case 'sleep':
      return `waits ${s('duration')} ms`;
    case 'digits_receive':
      return `collects up to ${s('length') || '?'} digits`;
    case 'branch':
      return `jumps on ${s('variable') || 'svc.call.digits'}`;
    case 'goto':
      return 'jumps to another step';
    case 'connect':
      return 'connects the caller to other parties';
    case 'recording_start':
      return 'starts recording';
    case 'recording_stop':
      return 'stops recording';
    case 'queue_join':
      return 'puts the caller in a queue';
    case 'queue_dequeue':
      return 'takes the first caller waiting in a queue';
    case 'park':
      return 'parks the call';
    case 'conference_join':
      return 'joins a conference';
    case 'transcribe_start':
      return 'starts transcription';
    case 'webhook_send':
      return `sends a webhook to ${s('uri')}`;
    case 'variable_set':
      return `sets ${s('key')} = ${s('value')}`;
    case 'ai_talk':
      return 'hands the call to an AI agent';
    case 'stop':
      return 'ends the flow';
    default:
      return '';
  }
}
