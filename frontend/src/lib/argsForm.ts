// The confirmation card's Edit form, built from the tool's argument schema (the JSON schema the
// agent sends as `confirm_required.schema`): one field per argument, checked here as the agent
// checks it (required, type, enum, bounds, pattern), so a bad edit is caught before it is sent.
// Objects and lists are edited as JSON.

export interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  items?: JsonSchema;
  $ref?: string;
}

export type FieldKind = "enum" | "integer" | "number" | "boolean" | "string" | "json";

export interface Field {
  name: string;
  label: string;
  description?: string;
  kind: FieldKind;
  required: boolean;
  nullable: boolean;
  options: string[];
  schema: JsonSchema;
}

/** The schema without a `null` branch (`X | None` arguments), and whether it had one. */
function unwrapNullable(schema: JsonSchema): { schema: JsonSchema; nullable: boolean } {
  const branches = schema.anyOf;
  if (!branches) return { schema, nullable: false };
  const rest = branches.filter((b) => b.type !== "null");
  const nullable = rest.length < branches.length;
  return { schema: rest.length === 1 ? { ...rest[0], title: schema.title } : schema, nullable };
}

function kindOf(schema: JsonSchema): FieldKind {
  if (schema.enum) return "enum";
  if (schema.type === "integer") return "integer";
  if (schema.type === "number") return "number";
  if (schema.type === "boolean") return "boolean";
  if (schema.type === "string") return "string";
  return "json";
}

export function fieldsOf(schema: JsonSchema): Field[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, raw]) => {
    const { schema: inner, nullable } = unwrapNullable(raw);
    const kind = kindOf(inner);
    return {
      name,
      label: raw.title ?? inner.title ?? name,
      description: raw.description ?? inner.description,
      kind,
      required: required.has(name),
      nullable,
      options: kind === "enum" ? (inner.enum ?? []).map(String) : [],
      schema: inner,
    };
  });
}

/** The text a field shows for a value. */
export function textOf(field: Field, value: unknown): string {
  if (value === undefined || value === null) return "";
  if (field.kind === "json") return JSON.stringify(value, null, 2);
  return String(value);
}

export type Problem = "required" | "number" | "integer" | "min" | "max" | "minLength" | "maxLength" | "pattern" | "json" | "choice";

/** The value of a field's text, or why it is not one. `undefined`: left out. */
export function parseField(field: Field, text: string): { value?: unknown; problem?: Problem } {
  const s = field.schema;
  if (text.trim() === "") {
    if (field.required) return { problem: "required" };
    return { value: undefined };
  }
  switch (field.kind) {
    case "integer":
    case "number": {
      const n = Number(text.trim());
      if (!Number.isFinite(n)) return { problem: "number" };
      if (field.kind === "integer" && !Number.isInteger(n)) return { problem: "integer" };
      if (s.minimum !== undefined && n < s.minimum) return { problem: "min" };
      if (s.maximum !== undefined && n > s.maximum) return { problem: "max" };
      return { value: n };
    }
    case "boolean":
      return { value: text === "true" };
    case "enum":
      return field.options.includes(text) ? { value: text } : { problem: "choice" };
    case "string":
      if (s.minLength !== undefined && text.length < s.minLength) return { problem: "minLength" };
      if (s.maxLength !== undefined && text.length > s.maxLength) return { problem: "maxLength" };
      if (s.pattern !== undefined && !new RegExp(s.pattern, "u").test(text)) return { problem: "pattern" };
      return { value: text };
    default:
      try {
        return { value: JSON.parse(text) };
      } catch {
        return { problem: "json" };
      }
  }
}

/** The edited arguments, or the problems by field name. */
export function collect(
  fields: Field[],
  texts: Record<string, string>,
): { args?: Record<string, unknown>; problems: Record<string, Problem> } {
  const args: Record<string, unknown> = {};
  const problems: Record<string, Problem> = {};
  for (const field of fields) {
    const { value, problem } = parseField(field, texts[field.name] ?? "");
    if (problem) problems[field.name] = problem;
    else if (value !== undefined) args[field.name] = value;
  }
  return Object.keys(problems).length ? { problems } : { args, problems };
}
