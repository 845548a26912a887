/**
 * What one connection has asked to receive: the `event`, `nixevent`, `noevents` and `filter` commands
 * and the test an event passes before it is sent, as mod_event_socket decides it (esl/README.md,
 * "Commands"). Pure: each command returns its Reply-Text.
 */
import { eventName, type EventName } from './events';
import { eventHeader, type EslEvent, type EventFormat } from './wire';

/** The events `myevents` turns on (mod_event_socket's list). */
const MYEVENTS: EventName[] = [
  'CHANNEL_ANSWER',
  'CHANNEL_APPLICATION',
  'CHANNEL_BRIDGE',
  'CHANNEL_CREATE',
  'CHANNEL_DATA',
  'CHANNEL_DESTROY',
  'CHANNEL_EXECUTE',
  'CHANNEL_EXECUTE_COMPLETE',
  'CHANNEL_HANGUP',
  'CHANNEL_HANGUP_COMPLETE',
  'CHANNEL_ORIGINATE',
  'CHANNEL_UUID',
  'CHANNEL_OUTGOING',
  'CHANNEL_PARK',
  'CHANNEL_PROGRESS',
  'CHANNEL_PROGRESS_MEDIA',
  'CHANNEL_STATE',
  'CHANNEL_UNBRIDGE',
  'CHANNEL_UNPARK',
  'DETECTED_SPEECH',
  'DTMF',
  'NOTALK',
  'TALK',
];

interface Filter {
  header: string;
  value: string;
  /** a `/pattern/` value compiled once when the filter is added; null when it does not compile (lets nothing in) */
  regex?: RegExp | null;
}

export class Subscriptions {
  format: EventFormat = 'plain';
  /** events are sent at all (set by the first `event`, cleared by `noevents`) */
  enabled = false;
  private readonly names = new Set<EventName>();
  private readonly subclasses = new Set<string>();
  private filters: Filter[] = [];
  /** the channel `myevents` restricted this connection to */
  private myUuid: string | null = null;

  /** `event [plain|json] NAME… [CUSTOM subclass…]`. */
  event(args: string[]): string {
    let count = 0;
    let custom = false;
    const format = args[0]?.toLowerCase();
    if (format === 'xml') return '-ERR xml events are not supported (plain or json)';
    if (format === 'plain' || format === 'json') {
      this.format = format;
      args = args.slice(1);
    }
    for (const word of args) {
      if (custom) {
        this.subclasses.add(word);
        continue;
      }
      const name = eventName(word);
      if (!name) continue; // FreeSWITCH skips a word it does not know
      count++;
      this.names.add(name);
      if (name === 'CUSTOM') custom = true;
    }
    if (!count) return '-ERR no keywords supplied';
    this.enabled = true;
    return `+OK event listener enabled ${this.format}`;
  }

  /** `nixevent NAME… [CUSTOM subclass…]`. */
  nixevent(args: string[]): string {
    let count = 0;
    let custom = false;
    for (const word of args) {
      if (custom) {
        this.subclasses.delete(word);
        continue;
      }
      const name = eventName(word);
      if (!name) continue;
      count++;
      if (name === 'CUSTOM') custom = true;
      else if (name === 'ALL') this.names.clear();
      else this.names.delete(name);
    }
    if (!count) return '-ERR no keywords supplied';
    this.enabled = true;
    return '+OK events nixed';
  }

  /**
   * `myevents <uuid> [plain|json]` on an inbound connection: the channel events FreeSWITCH lists for it,
   * of that channel only (Unique-ID), from now on. The caller has checked that the channel exists.
   */
  myevents(uuid: string, format?: string): string {
    if (this.myUuid !== null) return '-ERR aready enabled.'; // sic: FreeSWITCH's spelling
    this.myUuid = uuid;
    for (const n of MYEVENTS) this.names.add(n);
    if (format?.toLowerCase() === 'json') this.format = 'json';
    else if (format?.toLowerCase() === 'plain') this.format = 'plain';
    this.enabled = true;
    return '+OK Events Enabled';
  }

  noevents(): string {
    if (!this.enabled) return '-ERR not listening for events';
    this.enabled = false;
    this.names.clear();
    this.subclasses.clear();
    return '+OK no longer listening for events';
  }

  /** `filter <header> <value>`, `filter delete <header> [<value>]`, `filter delete all`. */
  filter(rest: string): string {
    const [first, ...more] = rest.trim().split(' ');
    if (first?.toLowerCase() === 'delete' && more.length) {
      const header = more[0]!;
      const value = more.length > 1 ? more.slice(1).join(' ') : undefined;
      if (header.toLowerCase() === 'all') this.filters = [];
      else this.filters = this.filters.filter((f) => !(f.header.toLowerCase() === header.toLowerCase() && (value === undefined || f.value === value)));
      return `+OK filter deleted. [${header}][${value ?? ''}]`;
    }
    let header = first ?? '';
    let values = more;
    if (header.toLowerCase() === 'add' && more.length) [header, ...values] = more as [string, ...string[]];
    if (!header || !values.length) return '-ERR invalid syntax';
    const value = values.join(' ');
    this.filters.push(value.startsWith('/') ? { header, value, regex: compileFilter(value) } : { header, value });
    return `+OK filter added. [${header}]=[${value}]`;
  }

  /** Whether `ev` goes to this connection: subscribed by name (CUSTOM: by subclass), then through the filters. */
  wants(ev: EslEvent): boolean {
    if (!this.enabled) return false;
    const name = eventName(eventHeader(ev, 'Event-Name') ?? '');
    if (!name) return false;
    if (!this.names.has('ALL')) {
      if (!this.names.has(name)) return false;
      const subclass = eventHeader(ev, 'Event-Subclass');
      if (name === 'CUSTOM' && subclass && !this.subclasses.has(subclass)) return false;
    }
    if (this.myUuid !== null && eventHeader(ev, 'Unique-ID') !== this.myUuid && eventHeader(ev, 'Job-Owner-UUID') !== this.myUuid) return false;
    return this.passesFilters(ev);
  }

  /**
   * FreeSWITCH's filter walk: with any filter set an event is held back unless a filter lets it in.
   * A value may start with `+` (let in when equal, the default) or `-` (hold back when equal, and stop);
   * a value starting with `/` is a regular expression (`/pattern/`); otherwise the test ignores case.
   */
  private passesFilters(ev: EslEvent): boolean {
    if (!this.filters.length) return true;
    let send = false;
    for (const f of this.filters) {
      const have = eventHeader(ev, f.header);
      if (have === undefined) continue;
      let compare = f.value;
      let positive = true;
      while (compare && '+- '.includes(compare[0]!)) {
        if (compare[0] === '+') positive = true;
        else if (compare[0] === '-') positive = false;
        compare = compare.slice(1);
      }
      if (send && positive) continue;
      if (!compare) continue;
      const hit = f.regex !== undefined ? f.regex !== null && f.regex.test(have) : have.toLowerCase() === compare.toLowerCase();
      if (!hit) continue;
      if (!positive) return false;
      send = true;
    }
    return send;
  }
}

/**
 * A filter value that starts with `/` as FreeSWITCH's switch_regex_perform reads it: `/pattern/flags`
 * (only `i` counts) or `/pattern`. Compiled once, when the filter is added, not for each event it is
 * tested against.
 */
function compileFilter(pattern: string): RegExp | null {
  const m = /^\/(.*)\/([a-z]*)$/s.exec(pattern);
  try {
    return new RegExp(m ? m[1]! : pattern.slice(1), m?.[2]?.includes('i') ? 'i' : '');
  } catch {
    return null;
  }
}
