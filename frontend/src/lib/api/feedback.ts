// Ratings, shares and exports (CONTRACT.md, "Feedback, sharing, export"): one function each.

import { http, unwrap, type Schemas } from "./client";
import { token } from "../session.svelte";

export type Rating = "up" | "down";
export type FeedbackState = Schemas["FeedbackState"];
export type FeedbackItem = Schemas["FeedbackItem"];
export type Share = Schemas["ShareRead"];
export type SharedConversation = Schemas["SharedConversation"];

export async function rate(messageId: number, rating: Rating, comment: string | null): Promise<void> {
  unwrap(
    await http.PUT("/api/assistant/messages/{message_id}/feedback", {
      params: { path: { message_id: messageId } },
      body: { rating, comment },
    }),
  );
}

export async function unrate(messageId: number): Promise<void> {
  unwrap(
    await http.DELETE("/api/assistant/messages/{message_id}/feedback", {
      params: { path: { message_id: messageId } },
    }),
  );
}

export async function share(conversationId: string): Promise<Share> {
  const path = { conversation_id: conversationId };
  return unwrap(await http.POST("/api/assistant/conversations/{conversation_id}/share", { params: { path } }));
}

export async function unshare(conversationId: string): Promise<void> {
  const path = { conversation_id: conversationId };
  unwrap(await http.DELETE("/api/assistant/conversations/{conversation_id}/share", { params: { path } }));
}

export async function shared(shareId: string): Promise<SharedConversation> {
  return unwrap(await http.GET("/api/shared/{share_id}", { params: { path: { share_id: shareId } } }));
}

export interface FeedbackFilter {
  rating?: Rating;
  from?: string;
  to?: string;
  offset?: number;
}

export async function adminFeedback(filter: FeedbackFilter): Promise<{ items: FeedbackItem[]; total: number }> {
  const query = { ...filter, limit: 50 };
  return unwrap(await http.GET("/api/admin/feedback", { params: { query } }));
}

/** A download the browser cannot open as a link (it needs the bearer token): fetched, then
 * saved under `name`. */
async function download(path: string, name: string): Promise<void> {
  const response = await fetch(path, { headers: { Authorization: `Bearer ${token()}` } });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const url = URL.createObjectURL(await response.blob());
  const anchor = document.createElement("a");
  anchor.href = url;
  anchor.download = name;
  document.body.appendChild(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function exportConversation(conversationId: string, format: "md" | "json"): Promise<void> {
  const path = `/api/assistant/conversations/${encodeURIComponent(conversationId)}/export?format=${format}`;
  return download(path, `conversation-${conversationId}.${format}`);
}

export function downloadCases(rating: Rating = "up"): Promise<void> {
  return download(`/api/admin/feedback/cases?rating=${rating}`, `feedback-${rating}.jsonl`);
}
