import { describe, expect, it } from "vitest";
import { LIMITS, parseChartSpec, splitAnswer, suggestKind, toCsv } from "./chartspec";

const spec = { kind: "bar", title: "Orders", columns: ["status", "orders"], rows: [["paid", 3]] };
const fence = (body: string) => "```chart\n" + body + "\n```";

describe("parseChartSpec", () => {
  it("accepts a well-formed spec", () => {
    expect(parseChartSpec(spec)).toEqual(spec);
  });

  it("refuses unknown kinds, ragged rows, non-finite numbers and oversized input", () => {
    expect(parseChartSpec({ ...spec, kind: "radar" })).toBeNull();
    expect(parseChartSpec({ ...spec, rows: [["paid"]] })).toBeNull();
    expect(parseChartSpec({ ...spec, rows: [["paid", Infinity]] })).toBeNull();
    expect(parseChartSpec({ ...spec, rows: [["paid", { x: 1 }]] })).toBeNull();
    expect(parseChartSpec({ ...spec, columns: [] })).toBeNull();
    const many = Array.from({ length: LIMITS.rows + 1 }, (_, i) => [`r${i}`, i]);
    expect(parseChartSpec({ ...spec, rows: many })).toBeNull();
    expect(parseChartSpec({ ...spec, title: "x".repeat(LIMITS.titleChars + 1) })).toBeNull();
    expect(parseChartSpec([spec])).toBeNull();
  });
});

describe("splitAnswer", () => {
  it("cuts a valid chart block out of the markdown around it", () => {
    const parts = splitAnswer(`Here it is:\n\n${fence(JSON.stringify(spec))}\n\nDone.`);
    expect(parts.map((p) => p.kind)).toEqual(["markdown", "chart", "markdown"]);
    expect(parts[1]).toEqual({ kind: "chart", spec });
  });

  it("leaves invalid, non-JSON and unfinished blocks as markdown code", () => {
    const bad = `A\n${fence('{"kind": "radar", "columns": ["a"], "rows": []}')}`;
    expect(splitAnswer(bad)).toEqual([{ kind: "markdown", text: bad }]);
    const broken = `${fence("{not json")}`;
    expect(splitAnswer(broken)).toEqual([{ kind: "markdown", text: broken }]);
    const streaming = '```chart\n{"kind": "bar", "columns": ["a"';
    expect(splitAnswer(streaming)).toEqual([{ kind: "markdown", text: streaming }]);
  });

  it("keeps plain answers whole", () => {
    expect(splitAnswer("Just text")).toEqual([{ kind: "markdown", text: "Just text" }]);
  });
});

describe("suggestKind", () => {
  it("picks bar for a label and a number, line for dates, number for one value", () => {
    expect(suggestKind(["status", "orders"], [["paid", 3], ["new", 1]])).toBe("bar");
    expect(suggestKind(["month", "revenue"], [["2026-01", 3.5], ["2026-02", 4]])).toBe("line");
    expect(suggestKind(["day", "n"], [["2026-01-03", 1], ["2026-01-04T10:00:00Z", 2]])).toBe("line");
    expect(suggestKind(["total"], [[42]])).toBe("number");
    expect(suggestKind(["name", "city"], [["a", "b"]])).toBe("table");
    expect(suggestKind(["status", "orders"], [])).toBe("table");
  });
});

describe("toCsv", () => {
  it("quotes what needs quoting and defuses spreadsheet formulas", () => {
    const csv = toCsv(["name", "note"], [["a,b", 'say "hi"'], ["=SUM(A1)", null], ["x", -2]]);
    expect(csv).toBe('name,note\r\n"a,b","say ""hi"""\r\n\'=SUM(A1),\r\nx,-2\r\n');
  });
});
