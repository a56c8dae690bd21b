// The XML that AWS's Query protocol answers (EC2's DescribeX responses and errors) read into a tree of
// elements: names (their namespace prefix dropped), text and children. Attributes are not kept (the
// answers carry only xmlns); comments, processing instructions and the declaration are skipped; the
// five predefined entities and character references are decoded; CDATA is text. It reads well-formed
// documents; what it cannot read is refused.

export interface XmlElement {
  name: string;
  /** The element's own text (of its text and CDATA nodes), decoded. */
  text: string;
  children: XmlElement[];
}

const TOKEN = /<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!\[CDATA\[([\s\S]*?)\]\]>|<!DOCTYPE[^>]*>|<(\/?)([^\s/>]+)[^>]*?(\/?)>|([^<]+)/g;
const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

const decode = (s: string) =>
  s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (all, ref: string) =>
    ref[0] === "#" ? String.fromCodePoint(Number(ref[1] === "x" ? `0${ref.slice(1)}` : ref.slice(1))) : (ENTITIES[ref] ?? all),
  );

/** The document's root element. */
export function parseXml(text: string): XmlElement {
  const root: XmlElement = { name: "", text: "", children: [] };
  const open: XmlElement[] = [root];
  for (const m of text.matchAll(TOKEN)) {
    const [, cdata, close, tag, selfClosing, chars] = m;
    const top = open.at(-1)!;
    if (cdata !== undefined) top.text += cdata;
    else if (chars !== undefined) top.text += decode(chars);
    else if (tag !== undefined) {
      const name = tag.slice(tag.indexOf(":") + 1);
      if (close) {
        if (open.length < 2 || top.name !== name) throw new Error(`malformed XML: </${name}> closes <${top.name}>`);
        open.pop();
      } else {
        const el: XmlElement = { name, text: "", children: [] };
        top.children.push(el);
        if (!selfClosing) open.push(el);
      }
    }
  }
  if (open.length !== 1 || root.children.length !== 1) throw new Error("malformed XML: not one closed root element");
  return root.children[0]!;
}

/** The first child named `name`. */
export const xmlChild = (e: XmlElement | undefined, name: string): XmlElement | undefined => e?.children.find((c) => c.name === name);

/** The text of the first child named `name`, if there is one. */
export const xmlText = (e: XmlElement | undefined, name: string): string | undefined => xmlChild(e, name)?.text;

/** The <item> elements of the list named `name` (the Query protocol's lists: <name><item>…</item>…</name>). */
export const xmlItems = (e: XmlElement | undefined, name: string): XmlElement[] =>
  xmlChild(e, name)?.children.filter((c) => c.name === "item") ?? [];

/** The first element named `name` in the tree, depth first (the root included). */
export function xmlFind(e: XmlElement, name: string): XmlElement | undefined {
  if (e.name === name) return e;
  for (const c of e.children) {
    const found = xmlFind(c, name);
    if (found) return found;
  }
  return undefined;
}
