/**
 * The country of an E.164 number, for the outbound config's destination_whitelist (lowercase ISO
 * 3166 alpha-2). Longest calling-code prefix wins; the shared codes are split where it matters:
 * +1 (NANP) by area code, +7 (Russia / Kazakhstan), +44 crown dependencies, +39 06 698 (Vatican).
 * Unknown codes give null, and a null country is never whitelisted.
 */
const CODES: Record<string, string> = {
  '20': 'eg', '211': 'ss', '212': 'ma', '213': 'dz', '216': 'tn', '218': 'ly', '220': 'gm', '221': 'sn', '222': 'mr',
  '223': 'ml', '224': 'gn', '225': 'ci', '226': 'bf', '227': 'ne', '228': 'tg', '229': 'bj', '230': 'mu', '231': 'lr',
  '232': 'sl', '233': 'gh', '234': 'ng', '235': 'td', '236': 'cf', '237': 'cm', '238': 'cv', '239': 'st', '240': 'gq',
  '241': 'ga', '242': 'cg', '243': 'cd', '244': 'ao', '245': 'gw', '246': 'io', '248': 'sc', '249': 'sd', '250': 'rw',
  '251': 'et', '252': 'so', '253': 'dj', '254': 'ke', '255': 'tz', '256': 'ug', '257': 'bi', '258': 'mz', '260': 'zm',
  '261': 'mg', '262': 're', '263': 'zw', '264': 'na', '265': 'mw', '266': 'ls', '267': 'bw', '268': 'sz', '269': 'km',
  '27': 'za', '290': 'sh', '291': 'er', '297': 'aw', '298': 'fo', '299': 'gl',
  '30': 'gr', '31': 'nl', '32': 'be', '33': 'fr', '34': 'es', '350': 'gi', '351': 'pt', '352': 'lu', '353': 'ie',
  '354': 'is', '355': 'al', '356': 'mt', '357': 'cy', '358': 'fi', '359': 'bg', '36': 'hu', '370': 'lt', '371': 'lv',
  '372': 'ee', '373': 'md', '374': 'am', '375': 'by', '376': 'ad', '377': 'mc', '378': 'sm', '380': 'ua', '381': 'rs',
  '382': 'me', '383': 'xk', '385': 'hr', '386': 'si', '387': 'ba', '389': 'mk', '39': 'it', '3906698': 'va',
  '40': 'ro', '41': 'ch', '420': 'cz', '421': 'sk', '423': 'li', '43': 'at', '44': 'gb', '441481': 'gg', '441534': 'je',
  '441624': 'im', '45': 'dk', '46': 'se', '47': 'no', '48': 'pl', '49': 'de',
  '500': 'fk', '501': 'bz', '502': 'gt', '503': 'sv', '504': 'hn', '505': 'ni', '506': 'cr', '507': 'pa', '508': 'pm',
  '509': 'ht', '51': 'pe', '52': 'mx', '53': 'cu', '54': 'ar', '55': 'br', '56': 'cl', '57': 'co', '58': 've',
  '590': 'gp', '591': 'bo', '592': 'gy', '593': 'ec', '594': 'gf', '595': 'py', '596': 'mq', '597': 'sr', '598': 'uy',
  '599': 'cw', '60': 'my', '61': 'au', '62': 'id', '63': 'ph', '64': 'nz', '65': 'sg', '66': 'th', '670': 'tl',
  '672': 'nf', '673': 'bn', '674': 'nr', '675': 'pg', '676': 'to', '677': 'sb', '678': 'vu', '679': 'fj', '680': 'pw',
  '681': 'wf', '682': 'ck', '683': 'nu', '685': 'ws', '686': 'ki', '687': 'nc', '688': 'tv', '689': 'pf', '690': 'tk',
  '691': 'fm', '692': 'mh', '7': 'ru', '76': 'kz', '77': 'kz',
  '81': 'jp', '82': 'kr', '84': 'vn', '850': 'kp', '852': 'hk', '853': 'mo', '855': 'kh', '856': 'la', '86': 'cn',
  '880': 'bd', '886': 'tw', '90': 'tr', '91': 'in', '92': 'pk', '93': 'af', '94': 'lk', '95': 'mm', '960': 'mv',
  '961': 'lb', '962': 'jo', '963': 'sy', '964': 'iq', '965': 'kw', '966': 'sa', '967': 'ye', '968': 'om', '970': 'ps',
  '971': 'ae', '972': 'il', '973': 'bh', '974': 'qa', '975': 'bt', '976': 'mn', '977': 'np', '98': 'ir', '992': 'tj',
  '993': 'tm', '994': 'az', '995': 'ge', '996': 'kg', '998': 'uz',
};

/** NANP area codes outside the United States (the rest of +1 is 'us'). */
const NANP: Record<string, string> = {
  ca: '204 226 236 249 250 257 263 289 306 343 354 365 367 368 382 403 416 418 428 431 437 438 450 468 474 506 514 519 548 579 581 584 587 600 604 613 639 647 672 683 705 709 742 753 778 780 782 807 819 825 867 873 879 902 905',
  bs: '242', bb: '246', ai: '264', ag: '268', vg: '284', vi: '340', ky: '345', bm: '441', gd: '473', tc: '649',
  ms: '664', mp: '670', gu: '671', as: '684', sx: '721', lc: '758', dm: '767', vc: '784', pr: '787 939', do: '809 829 849',
  tt: '868', kn: '869', jm: '876 658',
};
const NANP_AREA = new Map<string, string>();
for (const [cc, areas] of Object.entries(NANP)) for (const a of areas.split(' ')) NANP_AREA.set(a, cc);

export function countryOf(e164: string): string | null {
  if (!/^\+\d{7,15}$/.test(e164)) return null;
  const digits = e164.slice(1);
  if (digits[0] === '1') return NANP_AREA.get(digits.slice(1, 4)) ?? 'us';
  for (let len = Math.min(7, digits.length); len >= 1; len--) {
    const cc = CODES[digits.slice(0, len)];
    if (cc) return cc;
  }
  return null;
}
