import { html, SafeHtml } from './html.js';

describe('html template tag', () => {
  it('escapes interpolated text, including attribute quotes', () => {
    const name = `<script>alert("x")</script>' onload='y`;
    expect(html`<p title="${name}">${name}</p>`.value).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onload=&#39;y">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onload=&#39;y</p>',
    );
  });

  it('keeps nested templates and lists as markup, and drops null, undefined and false', () => {
    const items = ['a&b', 'c'].map((i) => html`<li>${i}</li>`);
    // prettier-ignore
    const list = html`<ul>${items}</ul>${null}${undefined}${false}`;
    expect(list.value).toBe('<ul><li>a&amp;b</li><li>c</li></ul>');
    expect(html`${new SafeHtml('<b>ok</b>')}`.value).toBe('<b>ok</b>');
  });
});
