/**
 * mod_say_en as pure functions: what FreeSWITCH's English say module plays for a say type and method,
 * as its list of sound files (`digits/1`, `digits/hundred`, `currency/dollars`, …; the same order and
 * the same quirks as mod_say_en.c), and the words those files hold, which this switch speaks through
 * its TTS voices instead of playing the recordings (apps/say.ts).
 */

/** switch_ivr_say.c's names; a name not in the list is the index past its end, as FreeSWITCH's lookup gives. */
export const SAY_METHODS = ['N/A', 'PRONOUNCED', 'ITERATED', 'COUNTED', 'PRONOUNCED_YEAR'] as const;
export const SAY_TYPES = [
  'NUMBER',
  'ITEMS',
  'PERSONS',
  'MESSAGES',
  'CURRENCY',
  'TIME_MEASUREMENT',
  'CURRENT_DATE',
  'CURRENT_TIME',
  'CURRENT_DATE_TIME',
  'TELEPHONE_NUMBER',
  'TELEPHONE_EXTENSION',
  'URL',
  'IP_ADDRESS',
  'EMAIL_ADDRESS',
  'POSTAL_ADDRESS',
  'ACCOUNT_NUMBER',
  'NAME_SPELLED',
  'NAME_PHONETIC',
  'SHORT_DATE_TIME',
] as const;

export type SayMethod = (typeof SAY_METHODS)[number] | 'UNKNOWN';
export type SayType = (typeof SAY_TYPES)[number] | 'UNKNOWN';

const byName = <T extends string>(list: readonly T[], name: string): T | 'UNKNOWN' => list.find((n) => n.toLowerCase() === name.toLowerCase()) ?? 'UNKNOWN';
export const sayMethod = (name: string): SayMethod => byName(SAY_METHODS, name);
export const sayType = (name: string): SayType => byName(SAY_TYPES, name);

/** A moment broken down in the channel's time zone (switch_time_exp_t's fields that mod_say_en reads). */
export interface BrokenTime {
  year: number;
  /** 0-11 */
  mon: number;
  mday: number;
  /** 0 = Sunday */
  wday: number;
  /** 0-365 */
  yday: number;
  hour: number;
  min: number;
}

export interface SayClock {
  /** now, epoch ms */
  now: number;
  /** epoch ms → its broken-down time where the channel is */
  explode(ms: number): BrokenTime;
  /** `YYYY-MM-DD HH:MM[:SS]` or `HH:MM[:SS]` (today) where the channel is → epoch ms, or null */
  parse(text: string): number | null;
}

/** switch_strip_commas: the digits without their commas; null when anything else is in it. */
function stripCommas(text: string): string | null {
  return /^[0-9,]*$/.test(text) ? text.replace(/,/g, '') : null;
}

/** play_group: hundreds, tens and units of one group, then its name (thousand, million). */
function playGroup(method: SayMethod, a: number, b: number, c: number, what: string | null, out: string[]): void {
  if (a) out.push(`digits/${a}`, 'digits/hundred');
  if (b) {
    if (b > 1) out.push(c === 0 && method === 'COUNTED' ? `digits/h-${b}0` : `digits/${b}0`);
    else {
      out.push(`digits/${b}${c}`);
      c = 0;
    }
  }
  if (c) out.push(method === 'COUNTED' ? `digits/h-${c}` : `digits/${c}`);
  if (what && (a || b || c)) out.push(what);
}

/** en_say_general_count: a number of at most 9 digits (commas allowed), or its digits one by one (ITERATED). */
export function generalCount(text: string, method: SayMethod, out: string[]): boolean {
  const digits = stripCommas(text);
  if (method === 'ITERATED') {
    if (digits === null) return false;
    for (const d of digits) out.push(`digits/${d}`);
    return true;
  }
  if (digits === null || digits.length > 9) return false;
  const n = digits === '' ? 0 : Number.parseInt(digits, 10);
  if (n === 0) {
    out.push('digits/0');
    return true;
  }
  if (method === 'PRONOUNCED_YEAR') {
    const a = Math.floor(n / 100);
    const b = n % 100;
    if (!b || !(a % 10)) return generalCount(String(n), 'PRONOUNCED', out);
    return generalCount(String(a), 'PRONOUNCED', out) && generalCount(String(b), 'PRONOUNCED', out);
  }
  if (method !== 'PRONOUNCED' && method !== 'COUNTED') return true;
  const p = (x: number) => Math.floor(n / 10 ** x) % 10;
  playGroup('PRONOUNCED', p(8), p(7), p(6), 'digits/million', out);
  playGroup('PRONOUNCED', p(5), p(4), p(3), 'digits/thousand', out);
  playGroup(method, p(2), p(1), p(0), null, out);
  return true;
}

/** C's atoi: the leading integer, 0 when there is none. */
const atoi = (s: string): number => {
  const m = /^\s*([+-]?\d+)/.exec(s);
  return m ? Number.parseInt(m[1]!, 10) : 0;
};

/** en_say_money: `[+-]dollars[.cents]` with any other characters dropped (at most 15 characters). */
function money(text: string, method: SayMethod, out: string[]): boolean {
  if (text.length > 15) return false;
  const sbuf = text.replace(/[^0-9.+-]/g, '');
  const dot = sbuf.indexOf('.');
  let dollars = dot < 0 ? sbuf : sbuf.slice(0, dot);
  const cents = dot < 0 ? null : sbuf.slice(dot + 1, dot + 3);
  if (sbuf.startsWith('+')) dollars = dollars.slice(1);
  if (sbuf.startsWith('-')) {
    out.push('currency/negative');
    dollars = dollars.slice(1);
  }
  generalCount(dollars, method, out);
  out.push(atoi(dollars) === 1 ? 'currency/dollar' : 'currency/dollars');
  if (cents !== null) {
    out.push('currency/and');
    generalCount(cents, method, out);
    out.push(atoi(cents) === 1 ? 'currency/cent' : 'currency/cents');
  }
  return true;
}

/** say_ip: four numbers with `dot` between (the fourth is what follows the third dot). */
function ip(text: string, method: SayMethod, out: string[]): boolean {
  const parts = text.split('.');
  if (parts.length < 4) return false;
  const nums = [parts[0]!, parts[1]!, parts[2]!, parts.slice(3).join('.')].map(atoi);
  nums.forEach((n, i) => {
    if (i) out.push('digits/dot');
    generalCount(String(n >>> 0), method, out);
  });
  return true;
}

/** say_telephone_number: digits, `+` and letters; one pause for each run of anything else. */
function telephone(text: string, out: string[]): boolean {
  let silence = false;
  for (const ch of text.toLowerCase()) {
    const sound = /[0-9]/.test(ch) ? `digits/${ch}` : ch === '+' || /[a-z]/.test(ch) ? `ascii/${ch.charCodeAt(0)}` : null;
    if (sound) out.push(sound);
    else if (!silence) out.push('silence_stream://100');
    silence = !sound;
  }
  return true;
}

/** say_spell: each character by its name (NAME_SPELLED) or its phonetic word (NAME_PHONETIC). */
function spell(text: string, type: SayType, out: string[]): boolean {
  for (const ch of text.toLowerCase()) {
    if (/[0-9]/.test(ch)) out.push(`digits/${ch}`);
    else out.push(`${type === 'NAME_PHONETIC' ? 'phonetic-ascii' : 'ascii'}/${ch.charCodeAt(0)}`);
  }
  return true;
}

/** en_say_time for TIME_MEASUREMENT: `[[h:]m:]s` or a count of seconds, as hours, minutes and seconds. */
function measurement(text: string, clock: SayClock, out: string[]): boolean {
  let [h, m, s] = [0, 0, 0];
  if (text.includes(':')) {
    const parts = text.split(':');
    s = atoi(parts.pop()!);
    if (parts.length >= 2) [h, m] = [atoi(parts[0]!), atoi(parts[1]!)];
    else m = atoi(parts[0]!);
  } else {
    s = atoi(text);
    if (s <= 0) s = Math.floor(clock.now / 1000);
    m = Math.floor(s / 60);
    s %= 60;
    h = Math.floor(m / 60);
    m %= 60;
  }
  const unit = (n: number, one: string, many: string) => {
    if (n) generalCount(String(n >>> 0), 'PRONOUNCED', out);
    else out.push('digits/0');
    out.push(n === 1 ? one : many);
  };
  unit(h, 'time/hour', 'time/hours');
  unit(m, 'time/minute', 'time/minutes');
  unit(s, 'time/second', 'time/seconds');
  return true;
}

/** What en_say_time says of a date/time type: which parts (SHORT_DATE_TIME: relative to today). */
function dateParts(type: SayType, tm: BrokenTime, now: BrokenTime) {
  const p = { date: false, time: false, year: false, month: false, day: false, dow: false, today: false, yesterday: false };
  if (type === 'CURRENT_DATE_TIME') p.date = p.time = true;
  else if (type === 'CURRENT_DATE') p.date = true;
  else if (type === 'CURRENT_TIME') p.time = true;
  else if (type === 'SHORT_DATE_TIME') {
    p.time = true;
    const future = tm.year > now.year || (tm.year === now.year && tm.mon > now.mon) || (tm.year === now.year && tm.mon === now.mon && tm.mday > now.mday);
    if (future || tm.year !== now.year) p.date = true;
    else if (tm.yday === now.yday) p.today = true;
    else if (tm.yday === now.yday - 1) p.yesterday = true;
    else if (tm.yday >= now.yday - 5) p.dow = true;
    else p.month = p.day = p.dow = true;
  }
  if (p.date) {
    p.year = p.month = p.day = p.dow = true;
    p.today = p.yesterday = false;
  }
  return p;
}

/** en_say_time for the date and time types: the moment (`tosay`: a time string, epoch seconds, or now). */
function dateTime(text: string, type: SayType, method: SayMethod, clock: SayClock, out: string[]): boolean {
  let at = text.includes(':') ? clock.parse(text) : null;
  if (at === null) at = atoi(text) > 0 ? atoi(text) * 1000 : clock.now;
  const tm = clock.explode(at);
  const p = dateParts(type, tm, clock.explode(clock.now));
  const num = (n: number, m: SayMethod) => generalCount(String(n), m, out);
  if (p.today) out.push('time/today');
  if (p.yesterday) out.push('time/yesterday');
  if (p.dow) out.push(`time/day-${tm.wday}`);
  if (p.month) out.push(`time/mon-${tm.mon}`);
  if (p.day) num(tm.mday, 'COUNTED');
  if (p.year) num(tm.year, 'PRONOUNCED_YEAR');
  if (!p.time) return true;
  if (p.date || p.today || p.yesterday || p.dow) out.push('time/at');
  let hour = tm.hour;
  if (method === 'ITERATED') {
    // military time: "oh nine thirty hours", "twenty four hundred hours"
    if (hour === 0 && tm.min === 0) hour = 24;
    if (hour < 10) num(0, 'PRONOUNCED');
    num(hour, 'PRONOUNCED');
    if (tm.min > 9) num(tm.min, 'PRONOUNCED');
    else if (tm.min) {
      num(0, 'PRONOUNCED');
      num(tm.min, 'PRONOUNCED');
    } else out.push('digits/hundred');
    out.push('time/hours');
    return true;
  }
  const pm = hour >= 12;
  if (hour > 12) hour -= 12;
  else if (hour === 0) hour = 12;
  num(hour, 'PRONOUNCED');
  if (tm.min > 9) num(tm.min, 'PRONOUNCED');
  else if (tm.min) {
    out.push('time/oh');
    num(tm.min, 'PRONOUNCED');
  } else out.push('time/oclock');
  out.push(pm ? 'time/p-m' : 'time/a-m');
  return true;
}

/**
 * The sound files mod_say_en plays for `text` (choose_callback, then the callback), or null when it
 * plays nothing: a type it has no callback for (TELEPHONE_EXTENSION, URL, EMAIL_ADDRESS,
 * POSTAL_ADDRESS, ACCOUNT_NUMBER, an unknown one) or text it cannot parse.
 */
export function sayFiles(text: string, type: SayType, method: SayMethod, clock: SayClock): string[] | null {
  const out: string[] = [];
  let ok: boolean;
  switch (type) {
    case 'NUMBER':
    case 'ITEMS':
    case 'PERSONS':
    case 'MESSAGES':
      ok = generalCount(text, method, out);
      break;
    case 'TIME_MEASUREMENT':
      ok = measurement(text, clock, out);
      break;
    case 'CURRENT_DATE':
    case 'CURRENT_TIME':
    case 'CURRENT_DATE_TIME':
    case 'SHORT_DATE_TIME':
      ok = dateTime(text, type, method, clock, out);
      break;
    case 'IP_ADDRESS':
      ok = ip(text, method, out);
      break;
    case 'NAME_SPELLED':
    case 'NAME_PHONETIC':
      ok = spell(text, type, out);
      break;
    case 'CURRENCY':
      ok = money(text, method, out);
      break;
    case 'TELEPHONE_NUMBER':
      ok = telephone(text, out);
      break;
    default:
      return null;
  }
  // as run_callback: what was gathered plays even when the callback failed part way
  return out.length ? out : ok ? [] : null;
}

const ONES = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const ORDINALS = ['', 'first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth'];
const TENTHS = ['', '', 'twentieth', 'thirtieth', 'fortieth', 'fiftieth', 'sixtieth', 'seventieth', 'eightieth', 'ninetieth'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const NATO = [
  'alpha',
  'bravo',
  'charlie',
  'delta',
  'echo',
  'foxtrot',
  'golf',
  'hotel',
  'india',
  'juliet',
  'kilo',
  'lima',
  'mike',
  'november',
  'oscar',
  'papa',
  'quebec',
  'romeo',
  'sierra',
  'tango',
  'uniform',
  'victor',
  'whiskey',
  'x-ray',
  'yankee',
  'zulu',
];
/** the sound set's names of the punctuation its ascii/ files hold */
const ASCII_NAMES: Record<string, string> = { '+': 'plus', '.': 'dot', '@': 'at', '-': 'dash', _: 'underscore', '/': 'slash', '#': 'pound', '*': 'star' };
const WORDS: Record<string, string> = {
  'digits/hundred': 'hundred',
  'digits/thousand': 'thousand',
  'digits/million': 'million',
  'digits/dot': 'dot',
  'currency/negative': 'negative',
  'currency/dollar': 'dollar',
  'currency/dollars': 'dollars',
  'currency/and': 'and',
  'currency/cent': 'cent',
  'currency/cents': 'cents',
  'time/hour': 'hour',
  'time/hours': 'hours',
  'time/minute': 'minute',
  'time/minutes': 'minutes',
  'time/second': 'second',
  'time/seconds': 'seconds',
  'time/today': 'today',
  'time/yesterday': 'yesterday',
  'time/at': 'at',
  'time/oh': 'oh',
  'time/oclock': "o'clock",
  'time/a-m': 'A M',
  'time/p-m': 'P M',
  'silence_stream://100': ',',
};

/** The words of one sound file of the English sound set ('' for one this set does not have). */
export function wordOf(file: string): string {
  if (Object.hasOwn(WORDS, file)) return WORDS[file]!;
  let m = /^digits\/(\d+)$/.exec(file);
  if (m) {
    const n = Number(m[1]);
    return n < 20 ? ONES[n]! : (TENS[n / 10] ?? '');
  }
  if ((m = /^digits\/h-(\d+)$/.exec(file))) {
    const n = Number(m[1]);
    return n < 10 ? ORDINALS[n]! : (TENTHS[n / 10] ?? '');
  }
  if ((m = /^time\/day-(\d)$/.exec(file))) return DAYS[Number(m[1])] ?? '';
  if ((m = /^time\/mon-(\d+)$/.exec(file))) return MONTHS[Number(m[1])] ?? '';
  if ((m = /^(ascii|phonetic-ascii)\/(\d+)$/.exec(file))) {
    const ch = String.fromCharCode(Number(m[2]));
    if (/[a-z]/.test(ch)) return m[1] === 'ascii' ? ch.toUpperCase() : NATO[ch.charCodeAt(0) - 97]!;
    return ASCII_NAMES[ch] ?? '';
  }
  return '';
}

/** The text to speak for a list of sound files (the files this set does not have are left out). */
export function wordsOf(files: string[]): string {
  return files.map(wordOf).filter(Boolean).join(' ').replace(/ ,/g, ',');
}
