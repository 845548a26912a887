/**
 * MAC addresses of desk phones, as an extension's `mac` and in provisioning file names. Accepted on the
 * API as 12 hex digits, colon or hyphen separated octets, or Cisco's dotted form (`0015.65aa.bbcc`),
 * either case; stored and shown as 12 lowercase hex digits (the form phones put in file names).
 * A phone's MAC is a unicast address: all-zero (Polycom's common file name), broadcast and multicast
 * addresses are refused.
 */
const FORMS = [/^[0-9a-f]{12}$/i, /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i, /^[0-9a-f]{2}(-[0-9a-f]{2}){5}$/i, /^[0-9a-f]{4}(\.[0-9a-f]{4}){2}$/i];

export type MacParse = { mac: string; problem?: undefined } | { mac?: undefined; problem: string };

export function parseMac(input: string): MacParse {
  const s = input.trim();
  if (!FORMS.some((re) => re.test(s))) {
    return { problem: 'must be a MAC address: 12 hex digits, aa:bb:cc:dd:ee:ff, aa-bb-cc-dd-ee-ff or aabb.ccdd.eeff' };
  }
  const mac = s.replace(/[:.-]/g, '').toLowerCase();
  if (mac === '000000000000') return { problem: 'must not be the all-zero address' };
  if (parseInt(mac.slice(0, 2), 16) & 1) return { problem: 'must be a unicast address (the first octet is even); broadcast and multicast addresses name no phone' };
  return { mac };
}

/** The 12 lowercase hex digits of a MAC as phones write it in file names, or null. */
export function macOfFileName(s: string): string | null {
  return /^[0-9a-f]{12}$/i.test(s) ? s.toLowerCase() : null;
}
