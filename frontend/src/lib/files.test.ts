import { describe, expect, it } from "vitest";
import { ACCEPT, MAX_FILE_BYTES, MAX_FILES, admit, checkFile } from "./files";

const file = (name: string, size = 10, type = "") => ({ name, size, type });

describe("checkFile", () => {
  it("accepts the six supported formats", () => {
    for (const name of ["a.pdf", "b.XLSX", "c.csv", "d.json", "e.png", "f.jpeg", "g.jpg"]) {
      expect(checkFile(file(name)), name).toBeNull();
    }
    expect(ACCEPT).toBe(".pdf,.xlsx,.csv,.json,.png,.jpg,.jpeg");
  });

  it("refuses other extensions and a type that contradicts the extension", () => {
    expect(checkFile(file("setup.exe"))).toEqual({ kind: "unsupported", name: "setup.exe" });
    expect(checkFile(file("archive.zip"))).toEqual({ kind: "unsupported", name: "archive.zip" });
    expect(checkFile(file("noext"))).toEqual({ kind: "unsupported", name: "noext" });
    expect(checkFile(file("x.png", 10, "application/x-msdownload"))?.kind).toBe("unsupported");
  });

  it("refuses files over 10 MB and accepts exactly 10 MB", () => {
    expect(MAX_FILE_BYTES).toBe(10 * 1024 * 1024);
    expect(checkFile(file("big.pdf", MAX_FILE_BYTES))).toBeNull();
    expect(checkFile(file("big.pdf", MAX_FILE_BYTES + 1))).toEqual({
      kind: "tooLarge",
      name: "big.pdf",
      limitMb: 10,
    });
  });
});

describe("admit", () => {
  it("keeps what passes, reports the rest, and caps the count", () => {
    const current = [file("1.csv"), file("2.csv"), file("3.csv"), file("4.csv")];
    const result = admit(current, [file("5.csv"), file("bad.exe"), file("6.csv")]);
    expect(result.files.map((f) => f.name)).toEqual(["1.csv", "2.csv", "3.csv", "4.csv", "5.csv"]);
    expect(result.problems).toEqual([
      { kind: "unsupported", name: "bad.exe" },
      { kind: "tooMany", count: MAX_FILES },
    ]);
  });
});
