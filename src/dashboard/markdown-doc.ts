import MarkdownIt from 'markdown-it';
import { SafeHtml } from '../web/html.js';

/**
 * Renders one of the project's own documents (docs/*.md) for a page, with markdown-it: raw HTML in the
 * text is escaped, not passed through (`html: false`), and every heading gets the id GitHub gives it,
 * so the document's own `#links` work on the page as they do on GitHub.
 */
export function renderDoc(markdown: string): SafeHtml {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
  md.core.ruler.push('heading_ids', (state) => {
    const used = new Map<string, number>();
    state.tokens.forEach((token, i) => {
      if (token.type !== 'heading_open') return;
      const text = state.tokens[i + 1]?.children?.map((child) => child.content).join('') ?? '';
      const base = githubSlug(text);
      const seen = used.get(base) ?? 0;
      used.set(base, seen + 1);
      token.attrSet('id', seen ? `${base}-${seen}` : base);
    });
  });
  return new SafeHtml(md.render(markdown));
}

/** GitHub's heading anchors: lower case, punctuation dropped (hyphens and underscores kept), spaces as hyphens. */
export function githubSlug(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}
