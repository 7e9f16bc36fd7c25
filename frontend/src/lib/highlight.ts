// A tiny tokenizer for showing JSON and CSV file contents with colours. It returns plain text
// tokens that components render as text nodes, so no markup from a file can ever reach the page.

export type TokenKind = "key" | "string" | "number" | "literal" | "punct" | "text" | "field" | "sep";
export interface Token {
  kind: TokenKind;
  text: string;
  /** For CSV fields: the column index (to colour columns apart). */
  column?: number;
}

const JSON_TOKEN =
  /("(?:[^"\\\n]|\\.)*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|\b(true|false|null)\b|([{}[\],:])|(\s+)|([^"\s{}[\],:]+)/gy;

/** JSON text as tokens; what does not parse as JSON still comes back, as plain text. */
export function jsonTokens(source: string): Token[] {
  const tokens: Token[] = [];
  JSON_TOKEN.lastIndex = 0;
  let match: RegExpExecArray | null;
  while (JSON_TOKEN.lastIndex < source.length && (match = JSON_TOKEN.exec(source))) {
    const [, str, colon, num, literal, punct, space, other] = match;
    if (str !== undefined && colon !== undefined) {
      tokens.push({ kind: "key", text: str }, { kind: "punct", text: colon });
    } else if (str !== undefined) tokens.push({ kind: "string", text: str });
    else if (num !== undefined) tokens.push({ kind: "number", text: num });
    else if (literal !== undefined) tokens.push({ kind: "literal", text: literal });
    else if (punct !== undefined) tokens.push({ kind: "punct", text: punct });
    else tokens.push({ kind: "text", text: space ?? other ?? "" });
  }
  const done = tokens.reduce((n, t) => n + t.text.length, 0);
  if (done < source.length) tokens.push({ kind: "text", text: source.slice(done) });
  return tokens;
}

/** CSV text as tokens: each field tagged with its column, separators and line ends apart.
 * Quoted fields may hold the separator, doubled quotes and line breaks. */
export function csvTokens(source: string, separator = detectSeparator(source)): Token[] {
  const tokens: Token[] = [];
  let column = 0;
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (c === separator) {
      tokens.push({ kind: "sep", text: c });
      column += 1;
      i += 1;
    } else if (c === "\n" || c === "\r") {
      const end = c === "\r" && source[i + 1] === "\n" ? i + 2 : i + 1;
      tokens.push({ kind: "text", text: source.slice(i, end) });
      column = 0;
      i = end;
    } else {
      const end = fieldEnd(source, i, separator);
      tokens.push({ kind: "field", text: source.slice(i, end), column });
      i = end;
    }
  }
  return tokens;
}

function fieldEnd(source: string, start: number, separator: string): number {
  let i = start;
  if (source[i] === '"') {
    i += 1;
    while (i < source.length) {
      if (source[i] === '"' && source[i + 1] === '"') i += 2;
      else if (source[i] === '"') return fieldEnd(source, i + 1, separator);
      else i += 1;
    }
    return i;
  }
  while (i < source.length && source[i] !== separator && source[i] !== "\n" && source[i] !== "\r")
    i += 1;
  return i;
}

/** The separator of the first line: the most frequent of , ; and tab (default ,). */
export function detectSeparator(source: string): string {
  const first = source.split(/\r?\n/, 1)[0] ?? "";
  const counts = [",", ";", "\t"].map((s) => [s, first.split(s).length - 1] as const);
  const [best, count] = counts.reduce((a, b) => (b[1] > a[1] ? b : a));
  return count > 0 ? best : ",";
}

export type FileKind = "json" | "csv" | "text";

/** What a file's key and content look like. */
export function fileKind(key: string, content: string): FileKind {
  const lower = key.toLowerCase();
  if (lower.endsWith(".json") || lower.endsWith(".jsonl")) return "json";
  if (lower.endsWith(".csv") || lower.endsWith(".tsv")) return "csv";
  const start = content.trimStart()[0];
  return start === "{" || start === "[" ? "json" : "text";
}
