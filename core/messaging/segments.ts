/**
 * SMS segment count (what providers bill per): GSM-7 text fits 160 characters in one part and 153
 * per part when concatenated; anything outside GSM-7 goes as UCS-2: 70, then 67 per part.
 */
const GSM7 = new Set('@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà');
/** Characters of the GSM-7 extension table take two septets. */
const GSM7_EXT = new Set('^{}\\[~]|€\f');

export function smsParts(text: string): number {
  let septets = 0;
  let gsm = true;
  for (const ch of text) {
    if (GSM7.has(ch)) septets += 1;
    else if (GSM7_EXT.has(ch)) septets += 2;
    else {
      gsm = false;
      break;
    }
  }
  if (gsm) return septets <= 160 ? 1 : Math.ceil(septets / 153);
  // UCS-2 counts UTF-16 code units.
  const units = text.length;
  return units <= 70 ? 1 : Math.ceil(units / 67);
}
