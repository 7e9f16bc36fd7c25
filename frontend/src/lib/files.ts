// Client-side checks on attachments (FR-021, story 6): the agent checks again and its reason
// is shown for whatever passes here.

export const MAX_FILE_BYTES = 10 * 1024 * 1024;
export const MAX_FILES = 5;

const ALLOWED: Record<string, string[]> = {
  pdf: ["application/pdf"],
  xlsx: ["application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"],
  csv: ["text/csv", "application/vnd.ms-excel", "text/plain"],
  json: ["application/json", "text/plain"],
  png: ["image/png"],
  jpg: ["image/jpeg"],
  jpeg: ["image/jpeg"],
};

export const ACCEPT = Object.keys(ALLOWED)
  .map((ext) => `.${ext}`)
  .join(",");

export type FileProblem =
  | { kind: "unsupported"; name: string }
  | { kind: "tooLarge"; name: string; limitMb: number }
  | { kind: "tooMany"; count: number };

interface FileLike {
  name: string;
  size: number;
  type: string;
}

function extension(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot < 0 ? "" : name.slice(dot + 1).toLowerCase();
}

/** Why `file` cannot be sent, or null when it passes the client-side checks. */
export function checkFile(file: FileLike): FileProblem | null {
  const types = ALLOWED[extension(file.name)];
  // Browsers leave `type` empty for types they do not know: the extension decides then.
  if (!types || (file.type !== "" && !types.includes(file.type))) {
    return { kind: "unsupported", name: file.name };
  }
  if (file.size > MAX_FILE_BYTES) {
    return { kind: "tooLarge", name: file.name, limitMb: MAX_FILE_BYTES / 1024 / 1024 };
  }
  return null;
}

/** Split a selection into accepted files and problems, keeping at most MAX_FILES in all. */
export function admit<T extends FileLike>(
  current: T[],
  picked: T[],
): { files: T[]; problems: FileProblem[] } {
  const files = [...current];
  const problems: FileProblem[] = [];
  for (const file of picked) {
    const problem = checkFile(file);
    if (problem) problems.push(problem);
    else if (files.length >= MAX_FILES) problems.push({ kind: "tooMany", count: MAX_FILES });
    else files.push(file);
  }
  return { files, problems };
}
