// Model output -> safe HTML. Raw HTML in the model's text is shown as text (never parsed), and
// the rendered markdown is then sanitised by DOMPurify: no script, no event handlers, no
// javascript: links, no images that would call out of the page.

import DOMPurify from "dompurify";
import { Marked } from "marked";

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const marked = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    html({ text }) {
      return escapeHtml(text);
    },
    image({ text }) {
      return escapeHtml(text);
    },
  },
});

let hooked = false;

function purifier(): typeof DOMPurify {
  if (!hooked) {
    DOMPurify.addHook("afterSanitizeAttributes", (node) => {
      if (node.tagName === "A") {
        node.setAttribute("target", "_blank");
        node.setAttribute("rel", "noopener noreferrer nofollow");
      }
      // Code blocks scroll: keyboard users can reach them too (WCAG 2.1.1).
      if (node.tagName === "PRE") node.setAttribute("tabindex", "0");
    });
    hooked = true;
  }
  return DOMPurify;
}

const POLICY = {
  FORBID_TAGS: ["img", "svg", "math", "style", "form", "input", "button", "iframe", "object"],
  FORBID_ATTR: ["style", "srcset"],
  ALLOW_DATA_ATTR: false,
};

/** Markdown to sanitised HTML, ready for {@html}. */
export function renderMarkdown(source: string): string {
  const html = marked.parse(source) as string;
  return purifier().sanitize(html, POLICY) as string;
}
