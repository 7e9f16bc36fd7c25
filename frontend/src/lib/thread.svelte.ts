// One open conversation: its history, the turn streaming now, and what to tell the person.
// All agent traffic goes through chat.ts; all REST through api/rest.ts.

import { AgentUnauthorized, channelFor, type TurnEnd, type TurnInput, type TurnOptions } from "./chat";
import { ApiError } from "./api/client";
import * as rest from "./api/rest";
import { activeFocus } from "./focus.svelte";
import {
  collapseToolUpdates,
  expandRow,
  pendingConfirmation,
  type ChatItem,
  type ConfirmAction,
  type ConfirmMeta,
  type ResourceRef,
} from "./protocol";
import { RetriesExhausted, resumeDelays } from "./retry";
import { signOut, token } from "./session.svelte";

export type Banner =
  | { kind: "error"; code: string; message: string }
  /** chat.ts waits to connect to the agent. */
  | { kind: "reconnecting"; attempt: number; total: number }
  /** The stream dropped while the run goes on: following it again (attach), with backoff. */
  | { kind: "reattaching"; attempt: number; total: number }
  /** `retry` is what to send again; null when nothing was being sent (an attach). */
  | { kind: "unreachable"; retry: TurnInput | null }
  /** The stream was lost for good (past the re-attach bound). `asked`: how many questions the
   * stored history holds once the lost message reached it (null when it was no new message). */
  | { kind: "disconnected"; retry: TurnInput | null; asked?: number | null };

/** How long Stop lets the run's own stream end after `stop` was taken before cancelling it. */
export const STOP_GRACE_MS = 2000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The person's messages in `items` (not their recorded decisions). */
function questions(items: ChatItem[]): number {
  return items.filter((i) => i.role === "user" && i.metadata.type !== "decision").length;
}

/** The agent's answer to an attach with no live run: one `NO_ACTIVE_RUN` notice. */
function isNoActiveRun(items: ChatItem[]): boolean {
  return (
    items.length > 0 &&
    items.every((i) => i.metadata.type === "notice") &&
    items.some((i) => i.metadata.type === "notice" && i.metadata.code === "NO_ACTIVE_RUN")
  );
}

function isInterrupted(item: ChatItem): boolean {
  return item.metadata.type === "error" && item.metadata.code === "RUN_INTERRUPTED";
}

/** A run whose process died ends with `RUN_INTERRUPTED`: if that value carries the error only,
 * the partial turn shown so far stays above it. */
function keepPartial(previous: ChatItem[], next: ChatItem[]): ChatItem[] {
  const bare = next.every((i) => i.metadata.type === "error" || i.metadata.type === "notice");
  return next.some(isInterrupted) && bare ? [...previous.filter((i) => !isInterrupted(i)), ...next] : next;
}

function interruption(message: string): ChatItem {
  return { role: "assistant", content: "", metadata: { type: "error", code: "RUN_INTERRUPTED", message } };
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export class Thread {
  items = $state<ChatItem[]>([]);
  live = $state<ChatItem[]>([]);
  streaming = $state(false);
  stopped = $state(false);
  loading = $state(true);
  banner = $state<Banner | null>(null);
  decisions = $state<Record<string, ConfirmAction>>({});
  /** Milliseconds from submit to the first streamed text, for the last turn. */
  firstTokenMs = $state<number | null>(null);
  /** Settles when the streaming stretch now on ends. */
  #settled: Promise<void> = Promise.resolve();
  /** Ends a wait to re-attach early. */
  #wake: (() => void) | null = null;
  #disposed = false;

  constructor(
    readonly id: string,
    /** Told when the conversation changed on the server (title, message count). */
    private readonly onChange: () => void = () => {},
  ) {}

  get pending(): ConfirmMeta | null {
    if (this.streaming) return null;
    const meta = pendingConfirmation(this.items);
    return meta && !this.decisions[meta.call_id] ? meta : null;
  }

  /** The last question asked here (files are not kept: they were sent once). */
  get lastQuestion(): string | null {
    for (let i = this.items.length - 1; i >= 0; i--) {
      const item = this.items[i];
      if (item.role === "user" && !item.metadata.type && item.content.trim()) return item.content;
    }
    return null;
  }

  /** Whether the last turn ended in an answer that can be asked for again. */
  get canRegenerate(): boolean {
    return !this.streaming && this.pending === null && this.lastQuestion !== null;
  }

  /** Ask the last question again, as a new turn of this conversation: the agent sees its
   * earlier answer in the history and answers afresh; nothing already said is removed. */
  async regenerate(): Promise<boolean> {
    const question = this.lastQuestion;
    return question && this.canRegenerate ? this.send(question, []) : false;
  }

  /** Settles when the history has been read (a message sent earlier would be lost under it). */
  ready: Promise<void> = Promise.resolve();

  load(): Promise<void> {
    this.ready = this.#load();
    return this.ready;
  }

  async #load(): Promise<void> {
    this.loading = true;
    let live = false;
    try {
      const rows = await rest.history(this.id);
      this.items = collapseToolUpdates(rows.flatMap(expandRow));
      // A run may be answering here now (started before a reload, or in another tab).
      live = await rest.isActive(this.id).catch(() => false);
      // Open the agent connection now so the first message does not wait for it.
      if (!live)
        channelFor(this.id, token)
          .connect()
          .catch(() => {});
    } catch (error) {
      this.#fail(error);
    } finally {
      this.loading = false;
    }
    // Not awaited: the thread is ready (and streaming) while the run goes on.
    if (live) void this.attach();
  }

  /** Follow the conversation's live run (CONTRACT.md, "Runs outlive the page"): the turn so
   * far, then live, with its tool and confirmation cards; Stop stops it. */
  async attach(): Promise<boolean> {
    return this.#session(null, async () => {
      await this.#follow(null, null, (update) => channelFor(this.id, token).attach(update));
      return true;
    });
  }

  /** The conversation was opened again (from the list): follow a run that answers in it now. */
  async rejoin(): Promise<void> {
    if (this.streaming || this.loading) return;
    if (!(await rest.isActive(this.id).catch(() => false)) || this.streaming) return;
    try {
      const rows = await rest.history(this.id);
      if (!this.streaming) this.items = collapseToolUpdates(rows.flatMap(expandRow));
    } catch {
      // The live turn still shows; the history is read again when it ends.
    }
    await this.attach();
  }

  /** The thread is gone (signed out): end any wait to re-attach. */
  dispose(): void {
    this.#disposed = true;
    this.#wake?.();
  }

  /** Send a new message, with the files, what the person is looking at (FR-023) and the
   * options (mode, selected resources, workflow). */
  async send(text: string, files: File[], options?: TurnOptions): Promise<boolean> {
    const target = activeFocus();
    const focus = target ? JSON.stringify(target) : "";
    const resources: ResourceRef[] = [
      ...(options?.resources?.files ?? []).map((ref) => ({ kind: "file" as const, ref, status: "selected" as const })),
      ...(options?.resources?.tables ?? []).map((ref) => ({ kind: "table" as const, ref, status: "selected" as const })),
    ];
    const echo = { role: "user", content: text, metadata: {}, files: files.map((f) => f.name), resources };
    await this.ready;
    return this.#turn({ text, files, action: "", focus, options }, echo);
  }

  /** Answer the confirmation card of `callId` (FR-009); the id travels with the decision, so
   * an out-of-date card approves nothing. The card stays answerable if it was not sent. */
  async answer(action: ConfirmAction, callId: string, args?: Record<string, unknown>): Promise<boolean> {
    const meta = this.pending;
    if (meta) this.decisions = { ...this.decisions, [meta.call_id]: action };
    const options = args ? { call_id: callId, args } : { call_id: callId };
    const sent = await this.#turn({ text: "", files: [], action, focus: "", options }, null);
    // An edit the agent refused ran nothing: the card is still waiting.
    const last = this.items[this.items.length - 1]?.metadata;
    const refused = args !== undefined && last?.type === "error" && last.code === "INVALID_INPUT";
    if ((!sent || refused) && meta) {
      const { [meta.call_id]: _, ...rest } = this.decisions;
      this.decisions = rest;
    }
    return sent;
  }

  async retry(input: TurnInput): Promise<boolean> {
    return this.#turn(input, null);
  }

  /** "Retry" once the connection was lost: follow the run if it still answers, else show how
   * it ended (its stored answer); a message that never reached the agent is sent again. */
  async resume(lost: { retry: TurnInput | null; asked?: number | null }): Promise<boolean> {
    if (this.streaming) return false;
    let active: boolean;
    try {
      active = await rest.isActive(this.id);
    } catch (error) {
      this.#fail(error, lost.retry);
      return false;
    }
    if (active) return this.attach();
    try {
      const items = collapseToolUpdates((await rest.history(this.id)).flatMap(expandRow));
      const unsent = lost.retry && lost.asked != null && questions(items) < lost.asked;
      if (unsent && lost.retry) return this.#turn(lost.retry, null);
      if (lost.retry?.action) {
        // A decision that did not arrive leaves its confirmation pending: send it again.
        const meta = pendingConfirmation(items);
        if (meta && meta.call_id === lost.retry.options?.call_id) return this.#turn(lost.retry, null);
      }
      this.banner = null;
      this.items = items;
      return true;
    } catch (error) {
      this.#fail(error, lost.retry);
      return false;
    }
  }

  /** Stop the conversation's run, wherever it runs (`action: "stop"`); what has streamed so
   * far stays. If the stop cannot be sent, the job is cancelled through Gradio instead. */
  async stop(): Promise<void> {
    if (!this.streaming) return;
    this.stopped = true;
    this.#wake?.(); // a wait to re-attach ends here
    const channel = channelFor(this.id, token);
    const settled = this.#settled;
    if (!(await channel.stop())) {
      await channel.cancel();
      return;
    }
    // The run's stream ends by itself (within a second); one that does not is cancelled.
    const late = await Promise.race([settled.then(() => false), sleep(STOP_GRACE_MS).then(() => true)]);
    if (late && channelFor(this.id, token).busy) await channelFor(this.id, token).cancel();
  }

  #turn(input: TurnInput, echo: ChatItem | null): Promise<boolean> {
    return this.#session(input, async () => {
      // Another tab may be answering in this conversation right now (FR-015).
      if (await this.#busyElsewhere()) {
        this.banner = { kind: "error", code: "CONVERSATION_BUSY", message: "" };
        return false;
      }
      const asked = input.action === "" ? questions(this.items) + (echo ? 1 : 0) : null;
      if (echo) this.items = [...this.items, echo];
      await this.#follow(input, asked, (update) => channelFor(this.id, token).run(input, update));
      return true;
    });
  }

  /** One streaming stretch of the thread (a turn sent here, or a run followed): the composer
   * shows Stop until it ends, then what streamed joins the history. */
  async #session(input: TurnInput | null, body: () => Promise<boolean>): Promise<boolean> {
    if (this.streaming) return false;
    this.banner = null;
    this.stopped = false;
    this.streaming = true;
    let settle = () => {};
    this.#settled = new Promise<void>((resolve) => (settle = resolve));
    try {
      return await body();
    } catch (error) {
      this.#fail(error, input);
      return false;
    } finally {
      this.items = collapseToolUpdates([...this.items, ...this.live]);
      this.live = [];
      this.streaming = false;
      settle();
      this.onChange();
    }
  }

  /** Stream `start`'s job; when the stream drops while the run goes on, attach to it again
   * (0.5, 1, 2, 4, 8 ... s, about 30 s in all) before saying the connection was lost. */
  async #follow(
    input: TurnInput | null,
    asked: number | null,
    start: (update: (items: ChatItem[]) => void) => Promise<TurnEnd>,
  ): Promise<void> {
    channelFor(this.id, token).onRetry = (attempt, total) => this.reconnecting(attempt, total);
    const started = performance.now();
    this.firstTokenMs = null;
    let attached = input === null; // some of the turn came through an attach
    let heard = false; // a value arrived since the last (re)attach
    let noRun = false; // an attach found no live run: it ended meanwhile
    const update = (items: ChatItem[]) => {
      if (isNoActiveRun(items)) {
        noRun = true;
        return;
      }
      heard = true;
      if (this.banner?.kind === "reconnecting" || this.banner?.kind === "reattaching") this.banner = null;
      if (this.firstTokenMs === null && items.some((i) => i.content && !i.metadata.type)) {
        this.firstTokenMs = Math.round(performance.now() - started);
        this.onChange(); // the first message has titled the conversation by now
      }
      this.live = keepPartial(this.live, collapseToolUpdates(items));
      const unauthorized = items.find(
        (i) => i.metadata.type === "error" && i.metadata.code === "UNAUTHORIZED",
      );
      if (unauthorized) signOut(true);
    };

    let end = await start(update);
    const delays = resumeDelays();
    let attempt = 0;
    while (end.kind === "disconnected" && !this.stopped && !this.#disposed) {
      if (heard) attempt = 0; // the last attach made progress: start the backoff over
      heard = false;
      if (attempt >= delays.length) break;
      this.banner = { kind: "reattaching", attempt: attempt + 1, total: delays.length };
      channelFor(this.id, token).close(); // a fresh connection for the attach
      await this.#pause(delays[attempt++]);
      if (this.stopped || this.#disposed) break;
      attached = true;
      end = await channelFor(this.id, token)
        .attach(update, 1)
        .catch((error: unknown): TurnEnd => {
          if (error instanceof AgentUnauthorized) throw error;
          return { kind: "disconnected", message: messageOf(error) };
        });
    }
    if (this.banner?.kind === "reattaching") this.banner = null;

    switch (end.kind) {
      case "cancelled":
        this.stopped = true;
        break;
      case "disconnected":
        if (this.stopped || this.#disposed) break; // Stop pressed while waiting to re-attach
        channelFor(this.id, token).close(); // the retry gets a fresh connection
        this.banner = { kind: "disconnected", retry: input, asked };
        break;
      case "failed":
        if (/RUN_INTERRUPTED/.test(end.message)) {
          if (!this.live.some(isInterrupted)) this.live = [...this.live, interruption("")];
        } else {
          this.banner = { kind: "error", code: "", message: end.message };
        }
        break;
      case "done":
        if (noRun) await this.#endedMeanwhile(input, asked);
        else if (attached) await this.#settleFromHistory();
        break;
    }
  }

  /** The run ended while the stream was away: show the stored turn, unless the message never
   * reached the agent (then it stays on screen, to be sent again). */
  async #endedMeanwhile(input: TurnInput | null, asked: number | null): Promise<void> {
    let items: ChatItem[];
    try {
      items = collapseToolUpdates((await rest.history(this.id)).flatMap(expandRow));
    } catch {
      this.banner = { kind: "disconnected", retry: input, asked };
      return;
    }
    if (input && asked !== null && questions(items) < asked) {
      this.banner = { kind: "disconnected", retry: input, asked };
      return;
    }
    this.live = [];
    this.items = items;
  }

  /** A followed turn ends as the stored one (its question may have been stored after the page
   * read the history); kept as streamed if the history does not hold it yet. */
  async #settleFromHistory(): Promise<void> {
    const id = [...this.live].reverse().find((i) => i.messageId !== undefined)?.messageId;
    if (id === undefined) return;
    try {
      const items = collapseToolUpdates((await rest.history(this.id)).flatMap(expandRow));
      if (!items.some((i) => i.messageId === id)) return;
      this.live = [];
      this.items = items;
    } catch {
      // What streamed stays on screen.
    }
  }

  /** Wait `ms` before the next attach; the network coming back, Stop or sign-out end it early. */
  #pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const online = typeof window !== "undefined" ? window : null;
      const wake = () => {
        clearTimeout(timer);
        online?.removeEventListener("online", wake);
        if (this.#wake === wake) this.#wake = null;
        resolve();
      };
      const timer = setTimeout(wake, ms);
      online?.addEventListener("online", wake);
      this.#wake = wake;
    });
  }

  /** True while another tab's run holds the conversation; a lease we just let go of
   * (after Stop) is given a moment to clear. */
  async #busyElsewhere(): Promise<boolean> {
    for (let attempt = 0; attempt < 4; attempt++) {
      if (!(await rest.isActive(this.id))) return false;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    return true;
  }

  /** Shown while chat.ts waits to reconnect. */
  reconnecting(attempt: number, total: number): void {
    this.banner = { kind: "reconnecting", attempt, total };
  }

  #fail(error: unknown, input: TurnInput | null = null): void {
    if (error instanceof AgentUnauthorized) {
      signOut(true);
    } else if (error instanceof RetriesExhausted) {
      this.banner = { kind: "unreachable", retry: input };
    } else if (error instanceof ApiError) {
      this.banner = { kind: "error", code: error.code, message: error.message };
    } else if (input) {
      this.banner = { kind: "disconnected", retry: input };
    } else {
      this.banner = { kind: "error", code: "", message: String(error) };
    }
  }
}
