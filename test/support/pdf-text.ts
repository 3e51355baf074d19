import { inflateSync } from 'node:zlib';

/**
 * The text a PDF made by pdfkit draws, read back the way a PDF reader copies
 * it: each font's ToUnicode CMap (PDF 32000-1:2008, 9.10.3) maps the glyph
 * codes of the content streams' TJ operators back to characters. Enough for
 * pdfkit's own output (Identity-H fonts, one bfrange per CMap, one page
 * resource dictionary), not a general PDF parser.
 */
export function pdfText(pdf: Buffer): string {
  const raw = pdf.toString('latin1');
  const objects = new Map<string, { dict: string; stream: string | null }>();
  for (const m of raw.matchAll(/(\d+) 0 obj\s*([\s\S]*?)endobj/g)) {
    const body = m[2]!;
    const s = /stream\r?\n([\s\S]*?)\r?\nendstream/.exec(body);
    let stream: string | null = null;
    if (s) {
      const start = m.index! + m[0].indexOf(s[0]) + s[0].indexOf('\n') + 1;
      const bytes = pdf.subarray(start, start + Buffer.byteLength(s[1]!, 'latin1'));
      stream = /\/FlateDecode/.test(body) ? inflateSync(bytes).toString('latin1') : bytes.toString('latin1');
    }
    objects.set(m[1]!, { dict: s ? body.slice(0, body.indexOf('stream')) : body, stream });
  }
  const cmapOf = (fontObj: string): Map<number, string> => {
    const map = new Map<number, string>();
    const ref = /\/ToUnicode (\d+) 0 R/.exec(objects.get(fontObj)?.dict ?? '')?.[1];
    const cmap = ref ? objects.get(ref)?.stream ?? '' : '';
    for (const r of cmap.matchAll(/<([0-9a-f]{4})> <([0-9a-f]{4})> \[([^\]]*)\]/gi)) {
      const first = parseInt(r[1]!, 16);
      [...r[3]!.matchAll(/<([0-9a-f ]*)>/gi)].forEach((u, i) => {
        const hex = u[1]!.replace(/ /g, '');
        map.set(first + i, String.fromCodePoint(...(hex.match(/.{4}/g) ?? []).map((h) => parseInt(h, 16))));
      });
    }
    return map;
  };
  const fonts = new Map<string, Map<number, string>>();
  for (const { dict } of objects.values()) {
    const res = /\/Font <<([\s\S]*?)>>/.exec(dict)?.[1];
    if (res) for (const f of res.matchAll(/\/(F\d+) (\d+) 0 R/g)) fonts.set(f[1]!, cmapOf(f[2]!));
  }
  const out: string[] = [];
  for (const { stream } of objects.values()) {
    if (!stream || !/ TJ/.test(stream)) continue;
    let font = new Map<number, string>();
    for (const op of stream.matchAll(/\/(F\d+) [\d.]+ Tf|\[([^\]]*)\] TJ/g)) {
      if (op[1]) font = fonts.get(op[1]) ?? new Map();
      else out.push([...op[2]!.matchAll(/<([0-9a-f]+)>/gi)].map((h) => (h[1]!.match(/.{4}/g) ?? []).map((c) => font.get(parseInt(c, 16)) ?? '?').join('')).join(''));
    }
  }
  return out.join('\n');
}
