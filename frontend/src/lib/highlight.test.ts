import { describe, expect, it } from "vitest";
import { csvTokens, detectSeparator, fileKind, jsonTokens } from "./highlight";

const text = (tokens: { text: string }[]) => tokens.map((t) => t.text).join("");

describe("jsonTokens", () => {
  it("tags keys, strings, numbers and literals and loses no character", () => {
    const source = '{"a": "x<script>", "n": -1.5e3, "ok": true, "z": null}';
    const tokens = jsonTokens(source);
    expect(text(tokens)).toBe(source);
    expect(tokens.filter((t) => t.kind === "key").map((t) => t.text)).toEqual(['"a"', '"n"', '"ok"', '"z"']);
    expect(tokens.find((t) => t.kind === "string")?.text).toBe('"x<script>"');
    expect(tokens.find((t) => t.kind === "number")?.text).toBe("-1.5e3");
    expect(tokens.filter((t) => t.kind === "literal").map((t) => t.text)).toEqual(["true", "null"]);
  });

  it("returns broken JSON whole, as text", () => {
    const source = '{"open": "never closed\n}';
    expect(text(jsonTokens(source))).toBe(source);
  });
});

describe("csvTokens", () => {
  it("gives each field its column, quoted separators and line breaks included", () => {
    const source = 'city,revenue\r\n"Moscow, RU",10\n"multi\nline",2';
    const tokens = csvTokens(source);
    expect(text(tokens)).toBe(source);
    const fields = tokens.filter((t) => t.kind === "field");
    expect(fields.map((t) => [t.text, t.column])).toEqual([
      ["city", 0],
      ["revenue", 1],
      ['"Moscow, RU"', 0],
      ["10", 1],
      ['"multi\nline"', 0],
      ["2", 1],
    ]);
  });

  it("detects semicolon and tab separators", () => {
    expect(detectSeparator("a;b;c\n1;2;3")).toBe(";");
    expect(detectSeparator("a\tb\n1\t2")).toBe("\t");
    expect(detectSeparator("single")).toBe(",");
  });
});

describe("fileKind", () => {
  it("goes by the extension, then by the content", () => {
    expect(fileKind("exports/x.CSV", "")).toBe("csv");
    expect(fileKind("a/b.json", "")).toBe("json");
    expect(fileKind("notes", '  {"a": 1}')).toBe("json");
    expect(fileKind("notes.txt", "hello")).toBe("text");
  });
});
