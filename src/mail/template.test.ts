import { escapeHtml, mailLanguage, passwordResetMail, verificationMail } from './messages.ts';
import { parseUrlTemplate, renderUrlTemplate, TemplateError, type TemplateValues } from './template.ts';

const values: TemplateValues = { UserID: '200000000000000001', Code: 'AB12CD', OrgID: '100000000000000001' };

describe('renderUrlTemplate', () => {
  it.each([
    ['https://app.test/verify?u={{.UserID}}&c={{.Code}}&o={{.OrgID}}', 'https://app.test/verify?u=200000000000000001&c=AB12CD&o=100000000000000001'],
    ['https://app.test/verify?c={{ .Code }}', 'https://app.test/verify?c=AB12CD'],
    ['http://app.test/{{  .OrgID  }}/users/{{.UserID}}', 'http://app.test/100000000000000001/users/200000000000000001'],
    ['HTTPS://app.test/v#code={{.Code}}', 'HTTPS://app.test/v#code=AB12CD'],
    ['https://app.test/static', 'https://app.test/static'],
    ['https://app.test/a{b}c?x={{.Code}}', 'https://app.test/a{b}c?x=AB12CD'],
    ['https://{{.OrgID}}.tenants.test/v?c={{.Code}}', 'https://100000000000000001.tenants.test/v?c=AB12CD'],
  ])('renders %s', (template, expected) => {
    expect(renderUrlTemplate(template, values)).toBe(expected);
  });

  it.each([
    ['an unknown field', 'https://app.test/?x={{.Password}}'],
    ['a lower-case field', 'https://app.test/?x={{.code}}'],
    ['a field without the dot', 'https://app.test/?x={{Code}}'],
    ['the dot alone', 'https://app.test/?x={{.}}'],
    ['a function call', 'https://app.test/?x={{printf "%s" .Code}}'],
    ['a pipeline', 'https://app.test/?x={{.Code | urlquery}}'],
    ['a nested field', 'https://app.test/?x={{.Code.Foo}}'],
    ['a variable', 'https://app.test/?x={{$x := .Code}}'],
    ['a comment', 'https://app.test/?x={{/* c */}}'],
    ['a tab inside the braces', 'https://app.test/?x={{\t.Code}}'],
    ['trim markers', 'https://app.test/?x={{- .Code -}}'],
    ['a control structure', 'https://app.test/{{if .Code}}x{{end}}'],
    ['an unclosed action', 'https://app.test/?x={{.Code'],
    ['a stray closing brace pair', 'https://app.test/?x=.Code}}'],
    ['nested braces', 'https://app.test/?x={{{{.Code}}}}'],
    ['an empty action', 'https://app.test/?x={{}}'],
    ['a relative URL', '/verify?c={{.Code}}'],
    ['a javascript: URL', 'javascript:alert({{.Code}})'],
    ['a data: URL', 'data:text/html,{{.Code}}'],
    ['a host taken from a value', '{{.Code}}'],
    ['a scheme taken from a value', 'http{{.Code}}://app.test/'],
    ['no host', 'https://'],
    ['credentials', 'https://user:pw@app.test/?c={{.Code}}'],
    ['a newline (header injection)', 'https://app.test/?c={{.Code}}\r\nBcc: evil@x.test'],
    ['an empty template', ''],
    ['an over-long template', `https://app.test/${'a'.repeat(3000)}`],
  ])('refuses %s', (_name, template) => {
    expect(() => renderUrlTemplate(template, values)).toThrow(TemplateError);
  });

  it.each([
    ['a query break-out', 'AB&admin=1#x'],
    ['a path break-out', '../../admin'],
    ['a host break-out', '@evil.test/'],
    ['a template in the value', '{{.UserID}}'],
    ['quotes and markup', '"><script>alert(1)</script>'],
    ['whitespace and CRLF', 'a b\r\nBcc: x'],
  ])('encodes a value carrying %s', (_name, evil) => {
    const url = renderUrlTemplate('https://app.test/verify/{{.UserID}}?code={{.Code}}&org={{.OrgID}}', { UserID: evil, Code: evil, OrgID: evil });
    const parsed = new URL(url);
    expect(parsed.host).toBe('app.test');
    expect([...parsed.searchParams.keys()]).toEqual(['code', 'org']);
    expect(parsed.searchParams.get('code')).toBe(evil);
    expect(parsed.hash).toBe('');
    expect(decodeURIComponent(parsed.pathname)).toBe(`/verify/${evil}`);
    expect(parsed.pathname.split('/')).toHaveLength(3);
    expect(url).not.toMatch(/[\s"<>]/);
  });

  it('parses into text and fields', () => {
    expect(parseUrlTemplate('https://a.test/?c={{ .Code }}&u={{.UserID}}')).toEqual([{ text: 'https://a.test/?c=' }, { field: 'Code' }, { text: '&u=' }, { field: 'UserID' }]);
  });
});

describe('verificationMail', () => {
  it.each([
    [null, 'en', 'Verify your email address'],
    ['en-US', 'en', 'Verify your email address'],
    ['de', 'de', 'Bestätige deine E-Mail-Adresse'],
    ['de-CH', 'de', 'Bestätige deine E-Mail-Adresse'],
    ['fr', 'en', 'Verify your email address'],
    ['dex', 'en', 'Verify your email address'],
  ])('language %s → %s', (preferred, language, subject) => {
    expect(mailLanguage(preferred)).toBe(language);
    const mail = verificationMail({ language: preferred, code: 'AB12CD', link: 'https://a.test/v?c=AB12CD' });
    expect(mail.subject).toBe(subject);
    expect(mail.text).toContain('AB12CD');
    expect(mail.text).toContain('https://a.test/v?c=AB12CD');
    expect(mail.html).toContain('AB12CD');
  });

  it('escapes the link and the name in the HTML body', () => {
    const mail = passwordResetMail({ language: 'en', code: 'AB12CD', link: 'https://a.test/v?c=1&u="><b>', name: '<img src=x>' });
    expect(mail.html).toContain('href="https://a.test/v?c=1&amp;u=&quot;&gt;&lt;b&gt;"');
    expect(mail.html).toContain('Hello &lt;img src=x&gt;,');
    expect(mail.html).not.toContain('<img');
    expect(mail.html).not.toContain('"><b>');
    expect(escapeHtml(`<&>"'`)).toBe('&lt;&amp;&gt;&quot;&#39;');
  });

  it('greets no one by name in the verification mail, which goes to an unverified address', () => {
    for (const language of ['en', 'de']) {
      const mail = verificationMail({ language, code: 'AB12CD', link: 'https://a.test/v' });
      expect(mail.text.split('\n')[0]).toBe(language === 'de' ? 'Hallo,' : 'Hello,');
      expect(mail.html).toContain(language === 'de' ? '<p>Hallo,</p>' : '<p>Hello,</p>');
    }
  });
});
