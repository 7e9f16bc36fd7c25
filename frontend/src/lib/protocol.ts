// The agent's stream protocol (shared CONTRACT.md, "Stream protocol"): every streamed value is
// the list of this turn's assistant messages; metadata.type says what each message is. The same
// dicts are persisted in the conversation history, so one renderer serves both.

import type { JsonSchema } from "./argsForm";
import { TURN_ERROR_CODES, type DiagnosisStopReason, type TurnErrorCode } from "./codes";

// The codes that end a turn: generated from the agent's one enumeration (agent/errors.py `Code`,
// see scripts/gen_codes.py), never copied by hand.
export const ERROR_CODES = TURN_ERROR_CODES;
export type ErrorCode = TurnErrorCode;

export type ConfirmAction = "confirm" | "reject";

export interface ToolMeta {
  type: "tool_start" | "tool_end" | "tool_error";
  tool: string;
  call_id: string;
  input?: unknown;
  output?: unknown;
  error?: { code: string; message: string };
  title?: string;
  status?: "pending" | "done";
  duration_ms?: number;
}

export interface ConfirmMeta {
  type: "confirm_required";
  thread_id: string;
  tool: string;
  call_id: string;
  args: Record<string, unknown>;
  description: string;
  allowed: ConfirmAction[];
  /** The JSON schema of the tool's arguments: the card's Edit form (absent: not editable). */
  schema?: JsonSchema;
}

export interface ErrorMeta {
  type: "error";
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export interface NoticeMeta {
  type: "notice";
  code: string;
  message: string;
  details?: { ref?: string; kind?: string; code?: string; percent?: number };
}

/** One step of a YAML workflow (CONTRACT.md: the same message, updated as the step runs). */
export interface WorkflowStepMeta {
  type: "workflow_step";
  execution_id: number;
  step_index: number;
  name: string;
  step_type: "tool_call" | "llm_call";
  status: "running" | "completed" | "failed";
  workflow?: string;
  title?: string;
  total_steps?: number;
  input?: unknown;
  output?: unknown;
  error?: { code: string; message: string };
  duration_ms?: number;
}

/** A file or table the person selected for a message, as its history row records it. */
export interface ResourceRef {
  kind: "file" | "table";
  ref: string;
  status: "included" | "refused" | "selected";
  truncated?: boolean;
}

/** One diagnosis finding and the calls of its run that show it (CONTRACT.md, "Diagnosis"). */
export interface DiagnosisFinding {
  finding: string;
  evidence_status: "SUPPORTED" | "NEGATIVE_OBSERVATION";
  tool_call_ids: string[];
}

export interface DiagnosisDraft {
  conclusion: { summary: string; confidence: "low" | "medium" | "high" } | null;
  analysis: DiagnosisFinding[];
  action_plan: string[];
  recommendations: string[];
  limitations: { checked_scope: string[]; missing_info: string[] };
}

/** A call the run made, as its progress snapshot shows it. */
export interface DiagnosisCheck {
  tool_call_id: string;
  tool: string;
  scope?: Record<string, unknown>;
  evidence_status: "OK" | "EMPTY" | "ERROR" | null;
  code?: string;
  assessment?: "GAINED" | "NO_GAIN";
}

export type { DiagnosisStopReason };

export interface DiagnosisMeta {
  type: "diagnosis";
  run_id: string;
  outcome: "draft" | "stopped" | "failed";
  draft?: DiagnosisDraft;
  stop_reason?: DiagnosisStopReason;
  progress?: { checked?: DiagnosisCheck[]; model_calls?: number };
  error?: { code: string; message: string };
}

/** A person's answer to a confirmation, as the agent records it in the history. */
export interface DecisionMeta {
  type: "decision";
  decision: ConfirmAction;
  tool: string;
  call_id: string;
  /** The arguments that ran; with an edit, `model_args` are the model's. */
  args?: Record<string, unknown>;
  model_args?: Record<string, unknown>;
  edited?: boolean;
}

export type Metadata =
  | ToolMeta
  | ConfirmMeta
  | ErrorMeta
  | NoticeMeta
  | DecisionMeta
  | DiagnosisMeta
  | WorkflowStepMeta
  | { type?: undefined };

export interface ChatItem {
  role: string;
  content: string;
  metadata: Metadata;
  /** Names of the files a user message carried. */
  files?: string[];
  /** The files and tables selected for a user message (metadata.resources). */
  resources?: ResourceRef[];
  /** The assistant history row of the turn (metadata.message_id): its debug record's key. */
  messageId?: number;
  /** The owner's rating of the turn's answer, as the history row carries it. */
  feedback?: { rating: "up" | "down"; comment: string | null } | null;
}

const KNOWN_TYPES = new Set([
  "tool_start",
  "tool_end",
  "tool_error",
  "confirm_required",
  "error",
  "notice",
  "decision",
  "diagnosis",
  "workflow_step",
]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  if (isRecord(value) && typeof value.text === "string") return value.text;
  return JSON.stringify(value);
}

/** One message dict from the stream or the history, with unknown shapes made harmless. */
export function normaliseItem(value: unknown, role = "assistant"): ChatItem {
  if (!isRecord(value)) return { role, content: asText(value), metadata: {} };
  const meta = isRecord(value.metadata) ? value.metadata : {};
  const type = typeof meta.type === "string" && KNOWN_TYPES.has(meta.type) ? meta.type : undefined;
  const item: ChatItem = {
    role: typeof value.role === "string" ? value.role : role,
    content: asText(value.content),
    metadata: (type ? meta : {}) as Metadata,
  };
  if (typeof meta.message_id === "number") item.messageId = meta.message_id;
  return item;
}

/** A streamed value (a list of message dicts, one dict, or bare text) as a list of items. */
export function normaliseTurn(value: unknown): ChatItem[] {
  if (Array.isArray(value)) return value.map((v) => normaliseItem(v));
  if (value === null || value === undefined) return [];
  return [normaliseItem(value)];
}

/** A history row (one per user message; one per assistant turn, its messages under
 * metadata.parts) as the items the stream showed. */
export function expandRow(row: {
  id?: number;
  role: string;
  content: string;
  metadata: unknown;
  feedback?: ChatItem["feedback"];
}): ChatItem[] {
  const meta = isRecord(row.metadata) ? row.metadata : {};
  if (row.role === "assistant" && Array.isArray(meta.parts)) {
    const items = normaliseTurn(meta.parts);
    if (typeof row.id === "number") for (const item of items) item.messageId = row.id;
    for (const item of items) item.feedback = row.feedback ?? null;
    return items;
  }
  const item = normaliseItem(row, row.role);
  if (isRecord(meta.resources)) item.resources = resourcesOf(meta.resources);
  if (Array.isArray(meta.attachments)) {
    item.files = meta.attachments
      .map((a) => (isRecord(a) && typeof a.name === "string" ? a.name : ""))
      .filter(Boolean);
  }
  return [item];
}

/** `metadata.resources` of a history row ({files: [...], tables: [...]}) as badges. */
export function resourcesOf(record: Record<string, unknown>): ResourceRef[] {
  const out: ResourceRef[] = [];
  for (const [key, kind] of [["files", "file"], ["tables", "table"]] as const) {
    const list = record[key];
    if (!Array.isArray(list)) continue;
    for (const entry of list) {
      if (!isRecord(entry) || typeof entry.ref !== "string") continue;
      const status = entry.status === "refused" ? "refused" : "included";
      out.push({ kind, ref: entry.ref, status, truncated: entry.truncated === true });
    }
  }
  return out;
}

/** The key under which updates of one tool call or one workflow step replace each other. */
function updateKey(meta: Metadata): string | null {
  if (meta.type === "tool_start" || meta.type === "tool_end" || meta.type === "tool_error")
    return meta.call_id ? `tool:${meta.call_id}` : null;
  if (meta.type === "workflow_step") return `step:${meta.execution_id}:${meta.step_index}`;
  return null;
}

/** Tool messages share a call_id across updates, workflow steps their execution and index
 * (a paused step finishes in the next turn): keep the latest state of each in place. */
export function collapseToolUpdates(items: ChatItem[]): ChatItem[] {
  const out: ChatItem[] = [];
  const byCall = new Map<string, number>();
  for (const item of items) {
    const key = updateKey(item.metadata);
    if (key) {
      const at = byCall.get(key);
      if (at !== undefined) {
        out[at] = item;
        continue;
      }
      byCall.set(key, out.length);
    }
    out.push(item);
  }
  return out;
}

/** Whether `items[index]` ends its turn: the next item belongs to another history row. */
export function endsTurn(items: ChatItem[], index: number): boolean {
  const id = items[index]?.messageId;
  return id !== undefined && items[index + 1]?.messageId !== id;
}

/** The confirmation still waiting for an answer: the last message asks for one. */
export function pendingConfirmation(items: ChatItem[]): ConfirmMeta | null {
  const last = items.at(-1);
  return last?.metadata.type === "confirm_required" ? last.metadata : null;
}

export function isErrorCode(code: string): code is ErrorCode {
  return (ERROR_CODES as readonly string[]).includes(code);
}
