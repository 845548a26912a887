// uuid_audio_fork's arguments as mod_audio_fork's fork_function reads them (switch_separate_string,
// then its start/stop/send_text branches): pure functions.
import { expect } from 'chai';
import { DEFAULT_BUG, parseForkCommand, separateString, wsUrl } from '../../esl/fork/args';

describe('esl: uuid_audio_fork arguments', () => {
  it('separates as switch_separate_string: ^^ delimiter, quotes dropped, empty fields kept but not a trailing one', () => {
    // what drachtio-fsmrf 5.0.1 sends for forkAudioStart({wsUrl, metadata}) with no bug name
    expect(separateString(`^^|u1|start|ws://h/p|mono|8000||'{"a":"b c"}'|true|false|`, 10)).to.deep.equal(['u1', 'start', 'ws://h/p', 'mono', '8000', '', '{"a":"b c"}', 'true', 'false']);
    expect(separateString(`u1  stop  bug 'two words'`, 10)).to.deep.equal(['u1', 'stop', 'bug', 'two words']);
    expect(separateString('a b c d', 2)).to.deep.equal(['a', 'b c d']);
    expect(separateString("a \\'b", 5)).to.deep.equal(['a', "'b"]);
  });

  it('start: url, mix, rate (8k/16k or a multiple of 8000), bug and metadata by position', () => {
    expect(parseForkCommand(`^^|u1|start|ws://h/p|mono|8000||'{"a":1}'|true|false|`)).to.deep.equal({
      uuid: 'u1',
      op: 'start',
      start: { url: 'ws://h/p', mix: 'mono', rate: 8000, bug: DEFAULT_BUG, metadata: '{"a":1}', bidirectional: { enabled: true, stream: false, streamRate: 8000 } },
    });
    expect(parseForkCommand('u1 start wss://h stereo 16k mybug')).to.deep.include({
      start: { url: 'wss://h', mix: 'stereo', rate: 16000, bug: 'mybug', metadata: null, bidirectional: { enabled: true, stream: false, streamRate: 16000 } },
    });
    expect(parseForkCommand(`u1 start ws://h mixed 24000 '{"x":1}'`)).to.deep.include({
      start: { url: 'ws://h', mix: 'mixed', rate: 24000, bug: DEFAULT_BUG, metadata: '{"x":1}', bidirectional: { enabled: true, stream: false, streamRate: 24000 } },
    });
    // the bidirectional audio arguments (jambonz's module): enabled unless false, streaming, its rate
    expect(parseForkCommand('u1 start ws://h mono 8000 b m false')).to.have.nested.property('start.bidirectional').that.deep.equals({ enabled: false, stream: false, streamRate: 8000 });
    expect(parseForkCommand('u1 start ws://h mono 8000 b m true true 16000')).to.have.nested.property('start.bidirectional').that.deep.equals({ enabled: true, stream: true, streamRate: 16000 });
    expect(parseForkCommand('u1 start ws://h mono 8000 b m true true 11025')).to.have.property('error', 'invalid');
    expect(parseForkCommand('u1 start ws://h loud 8000')).to.have.property('error', 'invalid');
    expect(parseForkCommand('u1 start ws://h mono 11025')).to.have.property('error', 'invalid');
    expect(parseForkCommand('u1 start ws://h')).to.have.property('error', 'usage');
    expect(parseForkCommand('u1')).to.have.property('error', 'usage');
  });

  it('stop, send_text, pause: a JSON argument alone is the text, any other the bug', () => {
    expect(parseForkCommand('u1 stop')).to.deep.equal({ uuid: 'u1', op: 'stop', bug: DEFAULT_BUG, text: null });
    expect(parseForkCommand('u1 stop b2')).to.deep.equal({ uuid: 'u1', op: 'stop', bug: 'b2', text: null });
    expect(parseForkCommand(`u1 stop '{"bye":1}'`)).to.deep.equal({ uuid: 'u1', op: 'stop', bug: DEFAULT_BUG, text: '{"bye":1}' });
    expect(parseForkCommand(`u1 stop b2 '{"bye":1}'`)).to.deep.equal({ uuid: 'u1', op: 'stop', bug: 'b2', text: '{"bye":1}' });
    expect(parseForkCommand(`u1 send_text '{"k":"v"}'`)).to.deep.equal({ uuid: 'u1', op: 'send_text', bug: DEFAULT_BUG, text: '{"k":"v"}' });
    expect(parseForkCommand('u1 send_text')).to.have.property('error', 'usage');
    expect(parseForkCommand('u1 pause b2')).to.deep.equal({ uuid: 'u1', op: 'pause', bug: 'b2' });
    expect(parseForkCommand('u1 RESUME')).to.deep.equal({ uuid: 'u1', op: 'resume', bug: DEFAULT_BUG });
    expect(parseForkCommand('u1 rewind')).to.have.property('error', 'invalid');
  });

  it('the URL: ws and wss, http(s) taken as ws(s) as parse_ws_uri does; nothing else', () => {
    expect(wsUrl('ws://127.0.0.1:3001/a?b=1')!.href).to.equal('ws://127.0.0.1:3001/a?b=1');
    expect(wsUrl('https://example.com/x')!.href).to.equal('wss://example.com/x');
    expect(wsUrl('ftp://example.com/')).to.equal(null);
    expect(wsUrl('not a url')).to.equal(null);
  });
});
