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
  const r = new XmlReader(src.replace(/^\uFEFF/, ''));
  r.declaration();
  r.skipComments();
  const root = r.element();
  r.skipComments();
  if (!r.atEnd()) throw new Error(`content after the root element at ${r.i}`);
  return root;
}

/** A cursor over the text, one method per production: declaration, comments, element, start tag, attribute, content. */
class XmlReader {
  i = 0;

  constructor(private readonly s: string) {}

  atEnd(): boolean {
    return this.i === this.s.length;
  }

  /** The optional XML declaration, first. */
  declaration(): void {
    const s = this.s;
    if (!s.startsWith('<?xml')) return;
    const end = s.indexOf('?>');
    if (end < 0) throw new Error('unterminated XML declaration');
    if (!/^<\?xml\s+version="1\.[0-9]"(\s+encoding="[A-Za-z0-9_-]+")?(\s+standalone="(yes|no)")?\s*\?>$/.test(s.slice(0, end + 2))) {
      throw new Error('malformed XML declaration');
    }
    this.i = end + 2;
  }

  ws(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i])) this.i++;
  }

  skipComments(): void {
    for (;;) {
      this.ws();
      if (!this.s.startsWith('<!--', this.i)) return;
      const e = this.s.indexOf('-->', this.i);
      if (e < 0) throw new Error('unterminated comment');
      this.i = e + 3;
    }
  }

  element(): XmlElement {
    const { name, attrs, empty } = this.startTag();
    if (empty) return { name, attrs, children: [], text: '' };
    return { name, attrs, ...this.content(name) };
  }

  /** `<name attr="v" ...>` or `<name .../>`. */
  private startTag(): { name: string; attrs: Record<string, string>; empty: boolean } {
    const s = this.s;
    if (s[this.i] !== '<') throw new Error(`expected < at ${this.i}`);
    this.i++;
    const m = NAME.exec(s.slice(this.i));
    if (!m) throw new Error(`bad tag name at ${this.i}`);
    const name = m[0];
    this.i += name.length;
    const attrs: Record<string, string> = {};
    for (;;) {
      const before = this.i;
      this.ws();
      if (s.startsWith('/>', this.i)) {
        this.i += 2;
        return { name, attrs, empty: true };
      }
      if (s[this.i] === '>') {
        this.i++;
        return { name, attrs, empty: false };
      }
      if (this.i === before) throw new Error(`missing space before attribute at ${this.i}`);
      this.attribute(name, attrs);
    }
  }

  /** `attr = "value"` (or single quotes), unique within its element. */
  private attribute(name: string, attrs: Record<string, string>): void {
    const s = this.s;
    const am = NAME.exec(s.slice(this.i));
    if (!am) throw new Error(`bad attribute name at ${this.i} in <${name}>`);
    this.i += am[0].length;
    this.ws();
    if (s[this.i] !== '=') throw new Error(`attribute ${am[0]} without =`);
    this.i++;
    this.ws();
    const q = s[this.i];
    if (q !== '"' && q !== "'") throw new Error(`unquoted attribute ${am[0]}`);
    const end = s.indexOf(q, this.i + 1);
    if (end < 0) throw new Error(`unterminated attribute ${am[0]}`);
    if (am[0] in attrs) throw new Error(`duplicate attribute ${am[0]}`);
    attrs[am[0]] = decode(s.slice(this.i + 1, end), `attribute ${am[0]}`);
    this.i = end + 1;
  }

  /** Text, comments and child elements up to the element's own closing tag. */
  private content(name: string): { children: XmlElement[]; text: string } {
    const s = this.s;
    const children: XmlElement[] = [];
    let text = '';
    for (;;) {
      const lt = s.indexOf('<', this.i);
      if (lt < 0) throw new Error(`unclosed <${name}>`);
      text += decode(s.slice(this.i, lt), `<${name}> text`);
      this.i = lt;
      if (s.startsWith('<!--', this.i)) {
        this.skipComments();
        continue;
      }
      if (s.startsWith('</', this.i)) {
        this.i += 2;
        const cm = NAME.exec(s.slice(this.i));
        if (!cm || cm[0] !== name) throw new Error(`</${cm?.[0]}> closes <${name}>`);
        this.i += cm[0].length;
        this.ws();
        if (s[this.i] !== '>') throw new Error(`bad closing tag of ${name}`);
        this.i++;
        return { children, text };
      }
      children.push(this.element());
    }
  }
}

export function find(root: XmlElement, pred: (e: XmlElement) => boolean): XmlElement | undefined {
  if (pred(root)) return root;
  for (const c of root.children) {
    const f = find(c, pred);
    if (f) return f;
  }
  return undefined;
}
