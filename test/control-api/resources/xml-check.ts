// A small strict XML well-formedness check for the provisioning formats: one root element, every
// tag closed in order, attributes quoted and unique, only the five predefined or numeric entities,
// no stray `<` or `&` in text, an optional XML declaration first. Returns the element tree.

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const NAME = /^[A-Za-z_:][A-Za-z0-9_.:-]*/;

function decode(s: string, where: string): string {
  if (/[<]/.test(s)) throw new Error(`raw < in ${where}`);
  return s.replace(/&([^;]*);?/g, (m, ent: string) => {
    if (!m.endsWith(';')) throw new Error(`unterminated entity in ${where}`);
    const map: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (ent in map) return map[ent];
    if (/^#\d+$/.test(ent)) return String.fromCodePoint(Number(ent.slice(1)));
    if (/^#x[0-9a-fA-F]+$/.test(ent)) return String.fromCodePoint(parseInt(ent.slice(2), 16));
    throw new Error(`unknown entity &${ent}; in ${where}`);
  });
}

export function parseXmlStrict(src: string): XmlElement {
  let i = 0;
  const s = src.replace(/^\uFEFF/, '');
  if (s.startsWith('<?xml')) {
    const end = s.indexOf('?>');
    if (end < 0) throw new Error('unterminated XML declaration');
    if (!/^<\?xml\s+version="1\.[0-9]"(\s+encoding="[A-Za-z0-9_-]+")?(\s+standalone="(yes|no)")?\s*\?>$/.test(s.slice(0, end + 2))) {
      throw new Error('malformed XML declaration');
    }
    i = end + 2;
  }
  const ws = () => {
    while (i < s.length && /\s/.test(s[i])) i++;
  };
  const skipComments = () => {
    for (;;) {
      ws();
      if (s.startsWith('<!--', i)) {
        const e = s.indexOf('-->', i);
        if (e < 0) throw new Error('unterminated comment');
        i = e + 3;
      } else return;
    }
  };
  function element(): XmlElement {
    if (s[i] !== '<') throw new Error(`expected < at ${i}`);
    i++;
    const m = NAME.exec(s.slice(i));
    if (!m) throw new Error(`bad tag name at ${i}`);
    const name = m[0];
    i += name.length;
    const attrs: Record<string, string> = {};
    for (;;) {
      const before = i;
      ws();
      if (s.startsWith('/>', i)) {
        i += 2;
        return { name, attrs, children: [], text: '' };
      }
      if (s[i] === '>') {
        i++;
        break;
      }
      if (i === before) throw new Error(`missing space before attribute at ${i}`);
      const am = NAME.exec(s.slice(i));
      if (!am) throw new Error(`bad attribute name at ${i} in <${name}>`);
      i += am[0].length;
      ws();
      if (s[i] !== '=') throw new Error(`attribute ${am[0]} without =`);
      i++;
      ws();
      const q = s[i];
      if (q !== '"' && q !== "'") throw new Error(`unquoted attribute ${am[0]}`);
      const end = s.indexOf(q, i + 1);
      if (end < 0) throw new Error(`unterminated attribute ${am[0]}`);
      if (am[0] in attrs) throw new Error(`duplicate attribute ${am[0]}`);
      attrs[am[0]] = decode(s.slice(i + 1, end), `attribute ${am[0]}`);
      i = end + 1;
    }
    const children: XmlElement[] = [];
    let text = '';
    for (;;) {
      const lt = s.indexOf('<', i);
      if (lt < 0) throw new Error(`unclosed <${name}>`);
      text += decode(s.slice(i, lt), `<${name}> text`);
      i = lt;
      if (s.startsWith('<!--', i)) {
        skipComments();
        continue;
      }
      if (s.startsWith('</', i)) {
        i += 2;
        const cm = NAME.exec(s.slice(i));
        if (!cm || cm[0] !== name) throw new Error(`</${cm?.[0]}> closes <${name}>`);
        i += cm[0].length;
        ws();
        if (s[i] !== '>') throw new Error(`bad closing tag of ${name}`);
        i++;
        return { name, attrs, children, text };
      }
      children.push(element());
    }
  }
  skipComments();
  const root = element();
  skipComments();
  if (i !== s.length) throw new Error(`content after the root element at ${i}`);
  return root;
}

export function find(root: XmlElement, pred: (e: XmlElement) => boolean): XmlElement | undefined {
  if (pred(root)) return root;
  for (const c of root.children) {
    const f = find(c, pred);
    if (f) return f;
  }
  return undefined;
}
