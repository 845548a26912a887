// The pure state of the event socket: a connection's subscriptions and filters, the refused-auth table,
// the session counts, the common event headers.
import { expect } from 'chai';
import { AuthRefusals } from '../../esl/auth-limit';
import { EventFactory, eventName, uptimeText } from '../../esl/events';
import { SessionCounts } from '../../esl/sessions';
import { Subscriptions } from '../../esl/subscriptions';
import type { EslEvent } from '../../esl/wire';

const ev = (name: string, more: [string, string][] = []): EslEvent => ({ headers: [['Event-Name', name], ...more] });

describe('esl subscriptions', () => {
  it('names, SWITCH_EVENT_ prefixes and case; CUSTOM takes the words after it as subclasses', () => {
    const s = new Subscriptions();
    expect(s.event(['json', 'switch_event_playback_start', 'DTMF', 'CUSTOM', 'conference::maintenance', 'DTMF'])).to.equal('+OK event listener enabled json');
    expect(s.format).to.equal('json');
    expect(s.wants(ev('PLAYBACK_START'))).to.equal(true);
    expect(s.wants(ev('DTMF'))).to.equal(true);
    expect(s.wants(ev('CUSTOM', [['Event-Subclass', 'conference::maintenance']]))).to.equal(true);
    expect(s.wants(ev('CUSTOM', [['Event-Subclass', 'mod_audio_fork::connect']]))).to.equal(false);
    expect(s.wants(ev('HEARTBEAT'))).to.equal(false);
    expect(eventName('nonsense')).to.equal(null);
  });

  it('nixevent takes names away (and ALL everything); ALL receives every subclass', () => {
    const s = new Subscriptions();
    s.event(['plain', 'ALL']);
    expect(s.wants(ev('CUSTOM', [['Event-Subclass', 'avmd::beep']]))).to.equal(true);
    expect(s.nixevent(['ALL'])).to.equal('+OK events nixed');
    expect(s.wants(ev('HEARTBEAT'))).to.equal(false);
    s.event(['HEARTBEAT', 'DTMF']);
    s.nixevent(['DTMF']);
    expect(s.wants(ev('DTMF'))).to.equal(false);
    expect(s.wants(ev('HEARTBEAT'))).to.equal(true);
    expect(s.nixevent(['bogus'])).to.equal('-ERR no keywords supplied');
  });

  it("filters: '-' holds back and stops the walk, a /regex/ tests the value, the first positive lets in", () => {
    const s = new Subscriptions();
    s.event(['ALL']);
    s.filter('Event-Name /^CHANNEL_/');
    s.filter('Unique-ID -abc');
    expect(s.wants(ev('CHANNEL_ANSWER', [['Unique-ID', 'xyz']]))).to.equal(true);
    expect(s.wants(ev('CHANNEL_ANSWER', [['Unique-ID', 'ABC']]))).to.equal(false);
    expect(s.wants(ev('DTMF', [['Unique-ID', 'xyz']]))).to.equal(false);
    s.filter('add Event-Name /^dtmf$/i');
    expect(s.wants(ev('DTMF', [['Unique-ID', 'xyz']]))).to.equal(true);
    s.filter('Event-Name /([/');
    expect(s.wants(ev('HEARTBEAT'))).to.equal(false);
  });

  it('myevents: the channel events of one Unique-ID only', () => {
    const s = new Subscriptions();
    expect(s.myevents('u-1', 'json')).to.equal('+OK Events Enabled');
    expect(s.format).to.equal('json');
    expect(s.wants(ev('CHANNEL_EXECUTE_COMPLETE', [['Unique-ID', 'u-1']]))).to.equal(true);
    expect(s.wants(ev('CHANNEL_EXECUTE_COMPLETE', [['Unique-ID', 'u-2']]))).to.equal(false);
    expect(s.wants(ev('HEARTBEAT'))).to.equal(false);
    expect(s.myevents('u-1')).to.equal('-ERR aready enabled.');
  });
});

describe('esl refused-auth table and session counts', () => {
  it('blocks at max refusals in the window, frees as they age out, and stays bounded', () => {
    let now = 0;
    const t = new AuthRefusals({ max: 3, windowMs: 1000, maxAddresses: 100 }, () => now);
    for (let i = 0; i < 3; i++) {
      expect(t.blocked('192.0.2.1')).to.equal(false);
      t.refused('192.0.2.1');
      now += 100;
    }
    expect(t.blocked('192.0.2.1')).to.equal(true);
    expect(t.blocked('192.0.2.2')).to.equal(false);
    now = 1001; // the first refusal (at 0) has aged out
    expect(t.blocked('192.0.2.1')).to.equal(false);
    for (let i = 0; i < 1000; i++) t.refused(`10.0.${i >> 8}.${i & 255}`);
    expect(t.size).to.be.at.most(100);
    expect(t.blocked('10.0.3.231')).to.equal(false); // one refusal: never blocked, kept or not
  });

  it('counts live sessions, the limit, since start, peaks and per second', () => {
    let now = 0;
    const s = new SessionCounts(2, () => now);
    expect(s.open('a')).to.equal(true);
    expect(s.open('a')).to.equal(false);
    now = 500;
    expect(s.open('b')).to.equal(true);
    expect(s.open('c')).to.equal(false);
    expect([s.count, s.sinceStartup, s.peak, s.perSecond(), s.peakPerSecond]).to.deep.equal([2, 2, 2, 2, 2]);
    s.close('a');
    now = 1200;
    expect([s.count, s.perSecond(), s.has('b'), s.has('a')]).to.deep.equal([1, 1, true, false]);
  });
});

describe('esl events', () => {
  it('common headers in order, sequence per switch, dates of the clock', () => {
    const ms = Date.UTC(2026, 10, 26, 9, 40, 46, 123);
    const f = new EventFactory({ coreUuid: 'core-1', hostname: 'mrf1', ipv4: '192.0.2.9', ipv6: '::1', version: 'v' }, () => ms);
    const e = f.make('CUSTOM', { file: 'esl/x.ts', func: 'x' }, [['Action', 'add-member']], { subclass: 'conference::maintenance', body: 'b' });
    expect(e.headers.map(([k]) => k)).to.deep.equal([
      'Event-Name',
      'Event-Subclass',
      'Core-UUID',
      'FreeSWITCH-Hostname',
      'FreeSWITCH-Switchname',
      'FreeSWITCH-IPv4',
      'FreeSWITCH-IPv6',
      'Event-Date-Local',
      'Event-Date-GMT',
      'Event-Date-Timestamp',
      'Event-Calling-File',
      'Event-Calling-Function',
      'Event-Calling-Line-Number',
      'Event-Sequence',
      'Action',
    ]);
    const h = Object.fromEntries(e.headers);
    expect(h).to.include({ 'Event-Date-GMT': 'Thu, 26 Nov 2026 09:40:46 GMT', 'Event-Date-Timestamp': '1795686046123000', 'Event-Sequence': '1' });
    expect(h['Event-Date-Local']).to.match(/^2026-11-2\d \d\d:\d\d:46$/);
    expect(e.body).to.equal('b');
    expect(Object.fromEntries(f.make('HEARTBEAT', { file: 'f', func: 'g' }, []).headers)['Event-Sequence']).to.equal('2');
  });

  it('uptime text: singular for one, each unit carried', () => {
    expect(uptimeText(0)).to.equal('0 years, 0 days, 0 hours, 0 minutes, 0 seconds, 0 milliseconds, 0 microseconds');
    expect(uptimeText(86_400_000 + 3_600_000 + 60_000 + 1000 + 1.001)).to.equal('0 years, 1 day, 1 hour, 1 minute, 1 second, 1 millisecond, 1 microsecond');
  });
});
