/** Text and attribute values written into the XML bodies of NOTIFYs (customer input: names, URIs). */
export function xmlEscape(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}
