import { describe, expect, it } from "vitest";
import { en } from "./en";
import { ru } from "./ru";

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe("dictionaries", () => {
  it("give every key in both languages, with the same placeholders", () => {
    expect(Object.keys(ru).sort()).toEqual(Object.keys(en).sort());
    for (const key of Object.keys(en) as (keyof typeof en)[]) {
      expect(placeholders(ru[key]), key).toEqual(placeholders(en[key]));
      expect(ru[key].trim(), key).not.toBe("");
    }
  });

  it("have a message for every error code of the stream protocol", async () => {
    const { ERROR_CODES } = await import("../protocol");
    for (const code of ERROR_CODES) expect(`error.${code}` in en, code).toBe(true);
  });
});
