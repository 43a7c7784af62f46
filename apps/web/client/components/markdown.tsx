import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import dockerfile from "highlight.js/lib/languages/dockerfile";
import go from "highlight.js/lib/languages/go";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import MarkdownIt from "markdown-it";
import { useMemo } from "preact/hooks";

for (const [name, lang] of Object.entries({
  bash,
  css,
  diff,
  dockerfile,
  go,
  javascript,
  json,
  python,
  rust,
  sql,
  typescript,
  xml,
  yaml,
})) {
  hljs.registerLanguage(name, lang);
}
hljs.registerAliases(["sh", "shell", "zsh", "console"], { languageName: "bash" });
hljs.registerAliases(["js", "jsx", "mjs"], { languageName: "javascript" });
hljs.registerAliases(["ts", "tsx"], { languageName: "typescript" });
hljs.registerAliases(["py"], { languageName: "python" });
hljs.registerAliases(["html", "svg"], { languageName: "xml" });
hljs.registerAliases(["yml"], { languageName: "yaml" });

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c,
  );

/** Highlighted code as HTML (escaped by highlight.js; plain escaped text for unknown languages). */
export function highlight(code: string, language: string): string {
  const lang = language.trim().toLowerCase();
  if (lang !== "" && hljs.getLanguage(lang))
    return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
  return escapeHtml(code);
}

// Raw HTML in stored text stays text (html: false); markdown-it refuses javascript:, vbscript:,
// file: and data: links itself. Images become links: a stored message must not make the browser
// fetch anything (the CSP would block it anyway).
const md = new MarkdownIt({
  html: false,
  linkify: true,
  highlight: (code, lang) => `<pre class="code"><code class="hljs">${highlight(code, lang)}</code></pre>`,
});
md.renderer.rules.image = (tokens, idx) => {
  const token = tokens[idx]!;
  const src = String(token.attrGet("src") ?? "");
  return `<a href="${escapeHtml(src)}">[image: ${escapeHtml(token.content || src)}]</a>`;
};

// Whatever the parser lets through, the sanitizer has the last word: no script, no event
// handler, no style, no form, and links only to http(s) and mailto.
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
});
const SANITIZE = {
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "img", "svg", "math", "iframe"],
  FORBID_ATTR: ["style"],
};

interface HtmlPolicy {
  createHTML(input: string): string;
}
// Trusted Types (required by the CSP): the only way to HTML into the page is through this
// policy, and it sanitizes.
const policy: HtmlPolicy = (
  window as unknown as { trustedTypes?: { createPolicy(name: string, rules: HtmlPolicy): HtmlPolicy } }
).trustedTypes?.createPolicy("hermes-html", {
  createHTML: (input: string) => DOMPurify.sanitize(input, SANITIZE) as unknown as string,
}) ?? { createHTML: (input: string) => DOMPurify.sanitize(input, SANITIZE) as unknown as string };

/** Sanitized HTML of Markdown text, as the page may insert it. */
export function markdownToHtml(text: string): string {
  return policy.createHTML(md.render(text));
}

/** Sanitized HTML of highlighted code. */
export function codeToHtml(code: string, language: string): string {
  return policy.createHTML(highlight(code, language));
}

/** Stored Markdown, rendered and sanitized. */
export function Markdown({ text }: { text: string }) {
  const html = useMemo(() => markdownToHtml(text), [text]);
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: html }} />;
}

/** A block of code, highlighted. */
export function Code({ code, language }: { code: string; language: string }) {
  const html = useMemo(() => codeToHtml(code, language), [code, language]);
  return (
    <pre class="code">
      <code class="hljs" dangerouslySetInnerHTML={{ __html: html }} />
    </pre>
  );
}
