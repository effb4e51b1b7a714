import { githubSlug, renderDoc } from './markdown-doc.js';

describe('renderDoc', () => {
  it('gives headings the ids GitHub gives them, so in-document links work', () => {
    const out = renderDoc(
      "# Webhooks\n\n## What an application's endpoint receives\n\n## Answering, retries and idempotency\n\n## Endpoints\n\n### Endpoints\n",
    ).value;
    expect(out).toContain('<h2 id="what-an-applications-endpoint-receives">');
    expect(out).toContain('<h2 id="answering-retries-and-idempotency">');
    expect(out).toContain('<h2 id="endpoints">');
    expect(out).toContain('<h3 id="endpoints-1">');
    expect(githubSlug('`webhook-id` and **Redeliver**')).toBe('webhook-id-and-redeliver');
  });

  it('escapes raw HTML in the text instead of passing it through', () => {
    const out = renderDoc('Hello <script>alert(1)</script> <img src=x onerror=alert(1)>\n\n<div>block</div>\n').value;
    expect(out).not.toContain('<script>');
    expect(out).not.toContain('<img');
    expect(out).not.toContain('<div>');
    expect(out).toContain('&lt;script&gt;');
  });

  it('renders tables and fenced code', () => {
    const out = renderDoc('| a | b |\n|---|---|\n| 1 | 2 |\n\n```js\nconst x = 1 < 2;\n```\n').value;
    expect(out).toContain('<table>');
    expect(out).toContain('<code class="language-js">const x = 1 &lt; 2;\n</code>');
  });
});
