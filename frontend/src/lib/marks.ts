// Marking the searched words in a plain-text snippet: parts to render as text, some marked.
// Words match as the server matches them: case-insensitively, as prefixes.

export interface Part {
  text: string;
  mark: boolean;
}

const escape = (word: string) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export function markWords(text: string, query: string): Part[] {
  const words = query.match(/[\p{L}\p{N}]+/gu) ?? [];
  if (!words.length) return [{ text, mark: false }];
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(?:${words.map(escape).join("|")})[\\p{L}\\p{N}]*`, "giu");
  const parts: Part[] = [];
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) parts.push({ text: text.slice(last, match.index), mark: false });
    parts.push({ text: match[0], mark: true });
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push({ text: text.slice(last), mark: false });
  return parts;
}
