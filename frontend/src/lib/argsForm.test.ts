import { describe, expect, it } from "vitest";
import { collect, fieldsOf, parseField, textOf, type JsonSchema } from "./argsForm";

const DEPLOY: JsonSchema = {
  properties: {
    dashboard_id: { type: "integer", minimum: 1, maximum: 2147483647, title: "Dashboard Id" },
    ref: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$", title: "Ref" },
    environment: { enum: ["staging", "production"], type: "string", title: "Environment" },
    note: { anyOf: [{ type: "string", maxLength: 5 }, { type: "null" }], title: "Note" },
    changes: { type: "array", items: { type: "object" }, title: "Changes" },
  },
  required: ["dashboard_id", "ref", "environment"],
};

describe("the edit form of a confirmation", () => {
  const fields = fieldsOf(DEPLOY);

  it("has one field per argument, of the argument's kind", () => {
    expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ["dashboard_id", "integer", true],
      ["ref", "string", true],
      ["environment", "enum", true],
      ["note", "string", false],
      ["changes", "json", false],
    ]);
    expect(fields[2].options).toEqual(["staging", "production"]);
    expect(fields[3].nullable).toBe(true);
  });

  it("collects valid edits as typed arguments and leaves out empty optional ones", () => {
    const texts = { dashboard_id: "42", ref: "main", environment: "production", note: "", changes: "[{\"op\": \"remove\"}]" };
    expect(collect(fields, texts)).toEqual({
      args: { dashboard_id: 42, ref: "main", environment: "production", changes: [{ op: "remove" }] },
      problems: {},
    });
  });

  it("names each problem as the agent would refuse it", () => {
    const texts = { dashboard_id: "0", ref: "../x", environment: "moon", note: "toolong", changes: "{" };
    expect(collect(fields, texts).problems).toEqual({
      dashboard_id: "min",
      ref: "pattern",
      environment: "choice",
      note: "maxLength",
      changes: "json",
    });
    expect(parseField(fields[0], "").problem).toBe("required");
    expect(parseField(fields[0], "4.5").problem).toBe("integer");
  });

  it("shows objects and lists as JSON", () => {
    expect(textOf(fields[4], [{ op: "remove" }])).toContain('"op": "remove"');
    expect(textOf(fields[0], 42)).toBe("42");
  });
});
