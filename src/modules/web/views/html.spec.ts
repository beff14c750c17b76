import { describe, expect, it } from '@jest/globals';
import { html } from './html.js';

describe('html tagged template', () => {
  it('escapes every interpolated string, attribute quotes included', () => {
    const name = `<script>alert("x")</script>' onload='1`;
    expect(html`<p title="${name}">${name}</p>`.value).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onload=&#39;1">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onload=&#39;1</p>',
    );
  });

  it('nests templates and lists without escaping them twice, and drops null, undefined and false', () => {
    const items = ['a&b', 'c'].map((x) => html`<li>${x}</li>`);
    expect(html`<ul>${items}${null}${undefined}${false}</ul>`.value).toBe('<ul><li>a&amp;b</li><li>c</li></ul>');
  });
});
