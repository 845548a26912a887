// The event-socket wire (esl/wire.ts), byte for byte as mod_event_socket writes and reads it.
import { expect } from 'chai';
import {
  apiResponse,
  authRequest,
  CommandReader,
  commandReply,
  connectReply,
  disconnectNotice,
  lingerNotice,
  eventFrame,
  MAX_BODY_BYTES,
  MAX_HEADER_BYTES,
  rudeRejection,
  serializeJson,
  serializePlain,
  sessionDisconnectNotice,
  urlEncode,
  WireError,
  type EslEvent,
} from '../../esl/wire';

const bytes = (s: string) => Buffer.from(s, 'utf8');

describe('esl wire: what the server writes', () => {
  it('auth/request, command/reply and a bgapi reply with its Job-UUID header', () => {
    expect(authRequest()).to.equal('Content-Type: auth/request\n\n');
    expect(commandReply('+OK accepted')).to.equal('Content-Type: command/reply\nReply-Text: +OK accepted\n\n');
    expect(commandReply('-ERR invalid')).to.equal('Content-Type: command/reply\nReply-Text: -ERR invalid\n\n');
    expect(commandReply('+OK Job-UUID: 7f4d', [['Job-UUID', '7f4d']])).to.equal('Content-Type: command/reply\nReply-Text: +OK Job-UUID: 7f4d\nJob-UUID: 7f4d\n\n');
  });

  it('api/response: Content-Length counts bytes; an empty output is -ERR no reply', () => {
    expect(apiResponse('+OK\n')).to.equal('Content-Type: api/response\nContent-Length: 4\n\n+OK\n');
    expect(apiResponse('café\n')).to.equal('Content-Type: api/response\nContent-Length: 6\n\ncafé\n');
    expect(apiResponse('')).to.equal('Content-Type: api/response\nContent-Length: 14\n\n-ERR no reply\n');
  });

  it('text/disconnect-notice and text/rude-rejection with their messages', () => {
    expect(disconnectNotice()).to.equal('Content-Type: text/disconnect-notice\nContent-Length: 67\n\nDisconnected, goodbye.\nSee you at ClueCon! http://www.cluecon.com/\n');
    expect(disconnectNotice('The system is being shut down.\n')).to.equal('Content-Type: text/disconnect-notice\nContent-Length: 31\n\nThe system is being shut down.\n');
    expect(rudeRejection()).to.equal('Content-Type: text/rude-rejection\nContent-Length: 24\n\nAccess Denied, go away.\n');
  });

  it('URL-encodes the unsafe characters, bytes outside printable ASCII and every %', () => {
    expect(urlEncode('plain-text_1.2~/,()!*')).to.equal('plain-text_1.2~/,()!*');
    expect(urlEncode('\r\n #%&+:;<=>?@[\\]^`{|}"')).to.equal('%0D%0A%20%23%25%26%2B%3A%3B%3C%3D%3E%3F%40%5B%5C%5D%5E%60%7B%7C%7D%22');
    expect(urlEncode('é\t\x7f')).to.equal('%C3%A9%09%7F');
    expect(urlEncode('100%41')).to.equal('100%2541');
    expect(decodeURIComponent(urlEncode('a:b@c 100% é'))).to.equal('a:b@c 100% é');
  });

  it('text/event-plain: encoded values, _undef_ for an empty one, the body after its Content-Length', () => {
    const ev: EslEvent = {
      headers: [
        ['Event-Name', 'BACKGROUND_JOB'],
        ['Job-Command', 'sofia'],
        ['Job-Command-Arg', 'status profile'],
        ['Empty', ''],
      ],
      body: '+OK é\n',
    };
    const text = 'Event-Name: BACKGROUND_JOB\nJob-Command: sofia\nJob-Command-Arg: status%20profile\nEmpty: _undef_\nContent-Length: 7\n\n+OK é\n';
    expect(serializePlain(ev)).to.equal(text);
    expect(eventFrame(ev, 'plain')).to.equal(`Content-Length: 121\nContent-Type: text/event-plain\n\n${text}`);
    expect(Buffer.byteLength(text)).to.equal(121);
    expect(serializePlain({ headers: [['Event-Name', 'HEARTBEAT']] })).to.equal('Event-Name: HEARTBEAT\n\n');
  });

  it('text/event-json: one object of raw values, Content-Length and _body last', () => {
    const ev: EslEvent = {
      headers: [
        ['Event-Name', 'BACKGROUND_JOB'],
        ['Job-UUID', 'j1'],
      ],
      body: '+OK "quoted"\n',
    };
    const json = '{"Event-Name":"BACKGROUND_JOB","Job-UUID":"j1","Content-Length":"13","_body":"+OK \\"quoted\\"\\n"}';
    expect(serializeJson(ev)).to.equal(json);
    expect(eventFrame(ev, 'json')).to.equal(`Content-Length: ${json.length}\nContent-Type: text/event-json\n\n${json}`);
    expect(
      serializeJson({
        headers: [
          ['Event-Name', 'HEARTBEAT'],
          ['Up-Time', '0 years, 1 day'],
        ],
      }),
    ).to.equal('{"Event-Name":"HEARTBEAT","Up-Time":"0 years, 1 day"}');
  });
});

describe('esl wire: the outbound socket', () => {
  it("connect's answer: CHANNEL_DATA as one header block, the reply headers among the event's, encoded", () => {
    const data: EslEvent = {
      headers: [
        ['Event-Name', 'CHANNEL_DATA'],
        ['Unique-ID', 'u-1'],
        ['variable_sip_user_agent', 'drachtio-fsmrf:f-1'],
      ],
    };
    expect(connectReply(data, 'full')).to.equal(
      'Event-Name: CHANNEL_DATA\nUnique-ID: u-1\nvariable_sip_user_agent: drachtio-fsmrf%3Af-1\n' + 'Content-Type: command/reply\nReply-Text: %2BOK%0A\nSocket-Mode: async\nControl: full\n\n',
    );
  });

  it('the goodbye names the controlled channel; the linger notice keeps the socket', () => {
    expect(sessionDisconnectNotice('u-1')).to.equal(
      'Content-Type: text/disconnect-notice\nControlled-Session-UUID: u-1\nContent-Disposition: disconnect\nContent-Length: 67\n\n' +
        'Disconnected, goodbye.\nSee you at ClueCon! http://www.cluecon.com/\n',
    );
    expect(lingerNotice('u-1', 'sofia/drachtio_mrf/drachtio', 10)).to.equal(
      'Content-Type: text/disconnect-notice\nControlled-Session-UUID: u-1\nContent-Disposition: linger\nChannel-Name: sofia/drachtio_mrf/drachtio\nLinger-Time: 10\nContent-Length: 0\n\n',
    );
  });
});

describe('esl wire: reading command frames', () => {
  it('a command ends at a blank line, whatever the split into reads', () => {
    const text = 'auth s3cret\n\napi sofia status\n\n';
    const whole = new CommandReader().push(bytes(text));
    expect(whole).to.deep.equal([
      { command: 'auth s3cret', headers: [] },
      { command: 'api sofia status', headers: [] },
    ]);
    const r = new CommandReader();
    const seen = [...bytes(text)].flatMap((b) => r.push(Buffer.from([b])));
    expect(seen).to.deep.equal(whole);
  });

  it('CR LF line ends and blank lines before a command are accepted (telnet)', () => {
    expect(new CommandReader().push(bytes('\r\n\napi status\r\n\r\n'))).to.deep.equal([{ command: 'api status', headers: [] }]);
  });

  it('headers in order, spaces after the colon dropped, a line without a colon ignored, then a body of Content-Length bytes', () => {
    const msg = 'sendmsg 1234\ncall-command: execute\nexecute-app-name:playback\nnot a header\nContent-Length: 6\n\nab\ncéexit\n\n';
    const frames = new CommandReader().push(bytes(msg));
    expect(frames).to.deep.equal([
      {
        command: 'sendmsg 1234',
        headers: [
          ['call-command', 'execute'],
          ['execute-app-name', 'playback'],
          ['Content-Length', '6'],
        ],
        body: 'ab\ncé',
      },
      { command: 'exit', headers: [] },
    ]);
  });

  it('a body split over reads waits for its last byte', () => {
    const r = new CommandReader();
    expect(r.push(bytes('sendevent CUSTOM\nContent-Length: 4\n\nbo'))).to.deep.equal([]);
    expect(r.push(bytes('dy'))).to.deep.equal([{ command: 'sendevent CUSTOM', headers: [['Content-Length', '4']], body: 'body' }]);
  });

  it('refuses a Content-Length that is not a number, a body above the limit and an endless header block', () => {
    expect(() => new CommandReader().push(bytes('sendmsg\nContent-Length: ten\n\n'))).to.throw(WireError, /Content-Length/);
    expect(() => new CommandReader().push(bytes(`sendmsg\nContent-Length: ${MAX_BODY_BYTES + 1}\n\n`))).to.throw(WireError, /body/);
    const r = new CommandReader();
    expect(r.push(Buffer.alloc(MAX_HEADER_BYTES, 0x61))).to.deep.equal([]);
    expect(() => r.push(bytes('aa'))).to.throw(WireError, /header block/);
  });
});
