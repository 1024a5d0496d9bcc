import { escapeHtml, html } from './html.ts';

describe('html', () => {
  it.each([
    ['<script>', '&lt;script&gt;'],
    ['"quoted" & \'single\'', '&quot;quoted&quot; &amp; &#39;single&#39;'],
    ['plain text', 'plain text'],
  ])('escapes %p', (input, expected) => {
    expect(escapeHtml(input)).toBe(expected);
    expect(html`<p>${input}</p>`.value).toBe(`<p>${expected}</p>`);
  });

  it.each([
    [undefined, ''],
    [null, ''],
    [false, ''],
    [true, ''],
    [42, '42'],
    [['<a>', html`<b>`], '&lt;a&gt;<b>'],
  ])('renders %p as %p', (value, expected) => {
    expect(html`${value}`.value).toBe(expected);
  });

  it('keeps fragments built by html as they are', () => {
    const inner = html`<em>${'<x>'}</em>`;
    expect(html`<p>${inner}</p>`.value).toBe('<p><em>&lt;x&gt;</em></p>');
  });
});
