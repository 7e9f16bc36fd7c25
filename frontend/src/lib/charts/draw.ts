// Drawing a chart spec as SVG with Observable Plot (bar, line, area) and d3-shape (pie). This
// module and the libraries it imports form a chunk loaded only when a chart is first drawn.
//
// The SVG is an image with a text alternative (role="img" + aria-label); the exact values are
// one click away as a table in the components that show it. Plot adds a <style> element to
// every plot; our CSP (style-src 'self') refuses inline styles, so it is removed before the node
// is attached and the same rules live in ChartView's stylesheet.

import * as Plot from "@observablehq/plot";
import { arc, pie } from "d3-shape";
import { isDateLike, numericColumns, type Cell, type ChartSpec } from "../chartspec";

/** Eight colours distinguishable with the common colour-vision deficiencies (Okabe-Ito based),
 * each with at least 3:1 contrast on white. */
export const PALETTE = [
  "#0072b2",
  "#d55e00",
  "#009e73",
  "#cc79a7",
  "#8a6d00",
  "#56b4e9",
  "#6a3d9a",
  "#e69f00",
];

export interface DrawOptions {
  width: number;
  locale: string;
  /** The text alternative of the whole image. */
  label: string;
  /** Which numeric column a bar or pie chart draws (default: the first). */
  measure?: number;
}

export interface Drawn {
  node: Element;
  legend: { label: string; color: string; value?: string }[];
}

interface Datum {
  x: string | Date;
  label: string;
  series: string;
  value: number;
}

const truncate = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

function label(value: Cell): string {
  return value === null ? "—" : String(value);
}

function formats(locale: string) {
  const compact = new Intl.NumberFormat(locale, { notation: "compact", maximumFractionDigits: 1 });
  const full = new Intl.NumberFormat(locale, { maximumFractionDigits: 2 });
  return { compact: (n: number) => compact.format(n), full: (n: number) => full.format(n) };
}

/** The drawn chart and its legend. */
export function drawChart(spec: ChartSpec, options: DrawOptions): Drawn {
  const numeric = numericColumns(spec.columns, spec.rows);
  const measure = options.measure ?? numeric[0];
  if (spec.kind === "pie") return drawPie(spec, measure, options);
  if (spec.kind === "bar") return drawBars(spec, measure, options);
  return drawSeries(spec, numeric, options);
}

function labelColumn(spec: ChartSpec): number {
  const numeric = numericColumns(spec.columns, spec.rows);
  const first = spec.columns.findIndex((_, i) => !numeric.includes(i));
  return first === -1 ? 0 : first;
}

function finish(node: Element, aria: string): Element {
  node.querySelector("style")?.remove();
  // The image is named as a whole; Plot's names of its groups ("bar", "x-axis tick") would be
  // ARIA on elements without a role, which assistive technology is told to ignore anyway.
  for (const part of node.querySelectorAll("[aria-label], [aria-description]")) {
    part.removeAttribute("aria-label");
    part.removeAttribute("aria-description");
  }
  node.setAttribute("role", "img");
  node.setAttribute("aria-label", aria);
  return node;
}

/** Labels made unique ("Keyboard", "Keyboard (2)"): a band scale would stack equal ones. */
function distinct(labels: string[]): string[] {
  const seen = new Map<string, number>();
  return labels.map((text) => {
    const n = (seen.get(text) ?? 0) + 1;
    seen.set(text, n);
    return n === 1 ? text : `${text} (${n})`;
  });
}

function drawBars(spec: ChartSpec, measure: number, options: DrawOptions): Drawn {
  const at = labelColumn(spec);
  const fmt = formats(options.locale);
  const rows = spec.rows.filter((r) => typeof r[measure] === "number");
  const labels = distinct(rows.map((r) => label(r[at])));
  const data = rows.map((r, i) => ({ label: labels[i], value: r[measure] as number }));
  const longest = Math.max(...data.map((d) => Math.min(d.label.length, 24)), 4);
  const node = Plot.plot({
    width: options.width,
    height: Math.max(120, data.length * 24 + 44),
    marginLeft: Math.min(170, longest * 6.5 + 12),
    marginRight: 24,
    x: { grid: true, label: spec.columns[measure], tickFormat: fmt.compact },
    y: { label: null, domain: data.map((d) => d.label), tickFormat: (d: string) => truncate(d, 24) },
    marks: [
      Plot.barX(data, {
        x: "value",
        y: "label",
        fill: PALETTE[0],
        title: (d: (typeof data)[number]) => `${d.label}: ${fmt.full(d.value)}`,
      }),
      Plot.ruleX([0]),
    ],
  });
  return { node: finish(node, options.label), legend: [] };
}

function drawSeries(spec: ChartSpec, numeric: number[], options: DrawOptions): Drawn {
  const at = labelColumn(spec);
  const fmt = formats(options.locale);
  const dates = spec.rows.every((r) => isDateLike(r[at]));
  const series = numeric.filter((i) => i !== at);
  const data: Datum[] = spec.rows.flatMap((r) =>
    series
      .filter((i) => typeof r[i] === "number")
      .map((i) => ({
        x: dates ? new Date(String(r[at])) : label(r[at]),
        label: label(r[at]),
        series: spec.columns[i],
        value: r[i] as number,
      })),
  );
  const names = series.map((i) => spec.columns[i]);
  const color = { domain: names, range: PALETTE };
  const times = dates ? data.map((d) => (d.x as Date).getTime()) : [];
  const days = times.length ? (Math.max(...times) - Math.min(...times)) / 86_400_000 : 0;
  const dateFormat = new Intl.DateTimeFormat(
    options.locale,
    days <= 120 ? { day: "numeric", month: "short", timeZone: "UTC" } : { month: "short", year: "2-digit", timeZone: "UTC" },
  );
  if (dates) data.sort((a, b) => (a.x as Date).getTime() - (b.x as Date).getTime());
  const marks = [
    Plot.ruleY([0]),
    ...(spec.kind === "area"
      ? [Plot.areaY(data, { x: "x", y: "value", fill: "series", fillOpacity: 0.25, z: "series" })]
      : []),
    Plot.lineY(data, { x: "x", y: "value", stroke: "series", strokeWidth: 2, z: "series" }),
    Plot.dot(data, {
      x: "x",
      y: "value",
      fill: "series",
      r: 2.5,
      title: (d: Datum) => `${d.label} · ${d.series}: ${fmt.full(d.value)}`,
    }),
  ];
  const node = Plot.plot({
    width: options.width,
    height: 240,
    marginLeft: 48,
    marginRight: 16,
    x: dates
      ? { type: "utc", label: null, tickFormat: (d: Date) => dateFormat.format(d), ticks: 6 }
      : { type: "point", label: null, tickFormat: (d: string) => truncate(d, 10) },
    y: { grid: true, label: null, tickFormat: fmt.compact, zero: true },
    color,
    marks,
  });
  const legend = names.length > 1 ? names.map((n, i) => ({ label: n, color: PALETTE[i % PALETTE.length] })) : [];
  return { node: finish(node, options.label), legend };
}

const SVG = "http://www.w3.org/2000/svg";

function drawPie(spec: ChartSpec, measure: number, options: DrawOptions): Drawn {
  const at = labelColumn(spec);
  const fmt = formats(options.locale);
  const data = spec.rows
    .filter((r) => typeof r[measure] === "number" && (r[measure] as number) > 0)
    .map((r) => ({ label: label(r[at]), value: r[measure] as number }));
  const total = data.reduce((sum, d) => sum + d.value, 0);
  const size = Math.min(220, Math.max(140, options.width * 0.5));
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `${-size / 2} ${-size / 2} ${size} ${size}`);
  svg.setAttribute("width", String(size));
  svg.setAttribute("height", String(size));
  const slices = pie<{ label: string; value: number }>().value((d) => d.value).sort(null)(data);
  const path = arc<(typeof slices)[number]>().innerRadius(size * 0.22).outerRadius(size / 2 - 2);
  slices.forEach((slice, i) => {
    const node = document.createElementNS(SVG, "path");
    node.setAttribute("d", path(slice) ?? "");
    node.setAttribute("fill", PALETTE[i % PALETTE.length]);
    node.setAttribute("stroke", "white");
    const title = document.createElementNS(SVG, "title");
    title.textContent = `${slice.data.label}: ${fmt.full(slice.data.value)}`;
    node.appendChild(title);
    svg.appendChild(node);
  });
  const percent = new Intl.NumberFormat(options.locale, { style: "percent", maximumFractionDigits: 1 });
  const legend = data.map((d, i) => ({
    label: d.label,
    color: PALETTE[i % PALETTE.length],
    value: `${fmt.full(d.value)} (${percent.format(total ? d.value / total : 0)})`,
  }));
  return { node: finish(svg, options.label), legend };
}
