// Chart specs: what a chart draws (kind, columns, rows), from a dashboard chart, a SQL result, or
// a ```chart block in an answer. Anything from the model is validated and bounded here before a
// component sees it; a block that does not pass is shown as the code it is.

export const CHART_KINDS = ["bar", "line", "area", "pie", "table", "number"] as const;
export type ChartKind = (typeof CHART_KINDS)[number];
export type Cell = string | number | boolean | null;

export interface ChartSpec {
  kind: ChartKind;
  title?: string;
  columns: string[];
  rows: Cell[][];
}

export const LIMITS = { columns: 12, rows: 500, cellChars: 200, titleChars: 200, jsonChars: 100_000 };

function isCell(value: unknown): value is Cell {
  if (value === null || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  return typeof value === "string" && value.length <= LIMITS.cellChars;
}

/** A valid, bounded spec from untrusted JSON, or null. */
export function parseChartSpec(value: unknown): ChartSpec | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const { kind, title, columns, rows } = value as Record<string, unknown>;
  if (typeof kind !== "string" || !(CHART_KINDS as readonly string[]).includes(kind)) return null;
  if (title !== undefined && (typeof title !== "string" || title.length > LIMITS.titleChars))
    return null;
  if (!Array.isArray(columns) || columns.length === 0 || columns.length > LIMITS.columns)
    return null;
  if (!columns.every((c) => typeof c === "string" && c.length > 0 && c.length <= LIMITS.cellChars))
    return null;
  if (!Array.isArray(rows) || rows.length > LIMITS.rows) return null;
  const width = columns.length;
  if (!rows.every((r) => Array.isArray(r) && r.length === width && r.every(isCell))) return null;
  return { kind: kind as ChartKind, title, columns: columns as string[], rows: rows as Cell[][] };
}

export type AnswerPart = { kind: "markdown"; text: string } | { kind: "chart"; spec: ChartSpec };

const FENCE = /^```chart[ \t]*\n([\s\S]*?)\n```[ \t]*$/gm;

/** An answer's text cut into markdown and chart parts. A chart block that is unfinished (still
 * streaming), not JSON or not a valid spec stays in the markdown, where it shows as code. */
export function splitAnswer(text: string): AnswerPart[] {
  const parts: AnswerPart[] = [];
  let last = 0;
  for (const match of text.matchAll(FENCE)) {
    const spec = match[1].length <= LIMITS.jsonChars ? parseJson(match[1]) : null;
    if (!spec) continue;
    const before = text.slice(last, match.index);
    if (before.trim()) parts.push({ kind: "markdown", text: before });
    parts.push({ kind: "chart", spec });
    last = match.index + match[0].length;
  }
  const rest = text.slice(last);
  if (rest.trim() || parts.length === 0) parts.push({ kind: "markdown", text: rest });
  return parts;
}

function parseJson(source: string): ChartSpec | null {
  try {
    return parseChartSpec(JSON.parse(source));
  } catch {
    return null;
  }
}

const DATE = /^\d{4}-\d{2}(-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?)?$/;

export function isDateLike(value: Cell): boolean {
  return typeof value === "string" && DATE.test(value) && !Number.isNaN(Date.parse(value));
}

/** A point in time (epoch milliseconds, as Superset answers a temporal column) as ISO text:
 * the day alone when it is midnight UTC. */
export function isoOf(ms: number): string {
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return String(ms);
  const iso = date.toISOString();
  return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso;
}

const SERIES: ChartKind[] = ["line", "area", "bar"];

/** The spec with its temporal columns (by name) as dates, and a time series' rows in time
 * order (a chart's query may order them by its metric). */
export function withTemporal(spec: ChartSpec, temporal: readonly string[] = []): ChartSpec {
  const at = spec.columns.flatMap((c, i) => (temporal.includes(c) ? [i] : []));
  if (at.length === 0) return spec;
  const rows = spec.rows.map((row) => row.map((v, i) => (at.includes(i) && typeof v === "number" ? isoOf(v) : v)));
  if (SERIES.includes(spec.kind)) {
    const key = (row: Cell[]) => (isDateLike(row[at[0]]) ? Date.parse(String(row[at[0]])) : Infinity);
    rows.sort((a, b) => key(a) - key(b));
  }
  return { ...spec, rows };
}

/** A date-like cell in the person's locale ("30 Oct 2026", "30 окт. 2026 г."); the day alone
 * when it has no time of day. */
export function formatDateCell(value: string, locale: string): string {
  const day = value.length <= 10;
  const options: Intl.DateTimeFormatOptions = day
    ? { dateStyle: "medium", timeZone: "UTC" }
    : { dateStyle: "medium", timeStyle: "short" };
  return new Intl.DateTimeFormat(locale, options).format(new Date(day ? `${value}T00:00:00Z` : value));
}

/** Columns whose non-null values are all numbers (and there is at least one). */
export function numericColumns(columns: string[], rows: Cell[][]): number[] {
  return columns
    .map((_, i) => i)
    .filter((i) => {
      const values = rows.map((r) => r[i]).filter((v) => v !== null);
      return values.length > 0 && values.every((v) => typeof v === "number");
    });
}

/** The chart a result is best drawn as: a date column -> line; one label column and numbers ->
 * bar; a single number -> number; otherwise a table. */
export function suggestKind(columns: string[], rows: Cell[][]): ChartKind {
  const numeric = numericColumns(columns, rows);
  if (rows.length === 0 || numeric.length === 0) return "table";
  if (rows.length === 1 && columns.length === 1) return "number";
  const labels = columns.map((_, i) => i).filter((i) => !numeric.includes(i));
  const dateColumn = labels.find((i) => rows.every((r) => r[i] === null || isDateLike(r[i])));
  if (dateColumn !== undefined) return "line";
  if (labels.length >= 1) return "bar";
  return "table";
}

/** Whether the chart kind can draw these rows (else the client falls back to a table). */
export function canDraw(kind: ChartKind, columns: string[], rows: Cell[][]): boolean {
  if (kind === "table") return true;
  const numeric = numericColumns(columns, rows);
  if (kind === "number") return rows.length > 0 && numeric.length > 0;
  return rows.length > 0 && numeric.length > 0 && columns.length >= 2;
}

// A text cell that a spreadsheet would run as a formula is prefixed with ' (OWASP CSV injection).
const FORMULA = /^[=+\-@\t\r]/;

function csvField(value: Cell): string {
  const raw = value === null ? "" : String(value);
  const text = typeof value === "string" && FORMULA.test(value) ? `'${raw}` : raw;
  return /[",\n\r]/.test(text) || /^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** RFC 4180 CSV (CRLF line ends), header first. */
export function toCsv(columns: string[], rows: Cell[][]): string {
  return [columns, ...rows].map((row) => row.map(csvField).join(",")).join("\r\n") + "\r\n";
}
