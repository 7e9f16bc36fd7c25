import { describe, expect, it } from "vitest";
import { encodeOptions } from "./chat";

describe("encodeOptions", () => {
  it("sends nothing when there is nothing to say", () => {
    expect(encodeOptions(undefined)).toBe("");
    expect(encodeOptions({})).toBe("");
    expect(encodeOptions({ call_id: undefined })).toBe("");
  });

  it("sends the card's call id with a decision, and only the keys that are set", () => {
    expect(JSON.parse(encodeOptions({ call_id: "call_1", mode: undefined }))).toEqual({
      call_id: "call_1",
    });
    expect(JSON.parse(encodeOptions({ mode: "diagnose", resources: { files: ["a.csv"] } }))).toEqual(
      { mode: "diagnose", resources: { files: ["a.csv"] } },
    );
  });
});
