/**
 * An organization's branding as the login pages get it (src/login/branding.ts): the stylesheet built
 * only from colours that parse again (defence in depth behind the checks on write), the theme mode's
 * choice of colours and images, nothing at all for ZITADEL's defaults, and login names without a
 * hidden suffix. The pages themselves in Chromium: test/browser/branding.test.ts.
 */
import { DEFAULT_LABEL, type Branding } from '../../src/domain/instance/policies.ts';
import { brandingStylesheet, pageBranding, shownLoginName } from '../../src/login/branding.ts';

function branding(change: Partial<Branding> = {}): Branding {
  return {
    ...DEFAULT_LABEL,
    images: { logo: 'policy/label/logo-1', logoDark: 'policy/label/logo-dark-2', icon: 'policy/label/icon-3', iconDark: null },
    ownerId: '120000000000000001',
    source: 'org',
    createdAt: undefined,
    changedAt: undefined,
    ...change,
  };
}

describe('the branding stylesheet', () => {
  it('writes every colour as #rrggbb from its numbers, whatever form it was stored in', () => {
    const css = brandingStylesheet(branding({ primaryColor: 'rgb(15, 118, 110)', backgroundColor: '#F0FDFA80', fontColor: 'hsl(0, 0%, 0%)', warnColor: '#b00' }))!;
    expect(css).toContain('--accent: #0f766e;');
    expect(css).toContain('--bg: #f0fdfa;');
    expect(css).toContain('--text: #000000;');
    expect(css).toContain('--danger: #bb0000;');
    expect(css).toContain('--accent-text: #ffffff;');
  });

  it('puts nothing into the CSS that is not a colour: a stored value that does not parse gives way to ZITADEL\'s default', () => {
    const css = brandingStylesheet(
      branding({ primaryColor: 'red;}</style><script>alert(1)</script>', backgroundColor: 'url(javascript:alert(1))', fontColorDark: '#fff; --x: expression(1)' }),
    )!;
    expect(css).toContain(`--accent: ${DEFAULT_LABEL.primaryColor};`);
    expect(css).toContain(`--bg: ${DEFAULT_LABEL.backgroundColor};`);
    expect(css).toContain('--text: #ffffff;');
    for (const bad of ['<', 'script', 'url(', 'expression', 'red']) expect(css).not.toContain(bad);
  });

  it('picks black or white for button labels by luminance, in each scheme', () => {
    const css = brandingStylesheet(branding({ primaryColor: '#ffd60a', primaryColorDark: '#1e1b4b' }))!;
    const [light, dark] = css.split('@media (prefers-color-scheme: dark)');
    expect(light).toContain('--accent-text: #000000;');
    expect(light).toContain('--accent-hover: color-mix(in srgb, #ffd60a 85%, #ffffff);');
    expect(dark).toContain('--accent-text: #ffffff;');
    expect(dark).toContain('--accent-hover: color-mix(in srgb, #1e1b4b 85%, #000000);');
  });

  it('follows the system scheme in AUTO and fixes one in LIGHT or DARK', () => {
    expect(brandingStylesheet(branding({ themeMode: 'auto' }))).toContain('color-scheme: light dark;');
    const dark = brandingStylesheet(branding({ themeMode: 'dark' }))!;
    expect(dark).not.toContain('@media');
    expect(dark).toContain('color-scheme: dark;');
    expect(dark).toContain(`--bg: ${DEFAULT_LABEL.backgroundColorDark};`);
    const light = brandingStylesheet(branding({ themeMode: 'light' }))!;
    expect(light).not.toContain('@media');
    expect(light).toContain(`--bg: ${DEFAULT_LABEL.backgroundColor};`);
  });
});

describe('what a page gets', () => {
  it('nothing for ZITADEL\'s defaults: the page keeps Gatehouse\'s own look', () => {
    expect(pageBranding(branding({ source: 'default' }))).toBeUndefined();
    expect(brandingStylesheet(branding({ source: 'default' }))).toBeUndefined();
  });

  it('the stylesheet named by its content, the logo with its dark one, and the icon', () => {
    const shown = pageBranding(branding())!;
    expect(shown.stylesheet).toMatch(/^\/ui\/login\/assets\/branding\/120000000000000001\.css\?v=[0-9a-f]{12}$/);
    expect(shown.logo).toEqual({ src: '/assets/v1/120000000000000001/policy/label/logo-1', dark: '/assets/v1/120000000000000001/policy/label/logo-dark-2' });
    expect(shown.icon).toEqual({ src: '/assets/v1/120000000000000001/policy/label/icon-3' });
    expect(pageBranding(branding({ primaryColor: '#000000' }))!.stylesheet).not.toBe(shown.stylesheet);
  });

  it('a fixed theme mode shows its own image, else the other one', () => {
    const images = { logo: 'policy/label/logo-1', logoDark: null, icon: null, iconDark: 'policy/label/icon-dark-4' };
    expect(pageBranding(branding({ themeMode: 'dark', images }))).toMatchObject({
      logo: { src: '/assets/v1/120000000000000001/policy/label/logo-1' },
      icon: { src: '/assets/v1/120000000000000001/policy/label/icon-dark-4' },
    });
    expect(pageBranding(branding({ themeMode: 'light' }))!.logo).toEqual({ src: '/assets/v1/120000000000000001/policy/label/logo-1' });
    expect(pageBranding(branding({ images: { logo: null, logoDark: null, icon: null, iconDark: null } }))).toMatchObject({ logo: undefined, icon: undefined });
  });
});

describe('login names without the hidden suffix', () => {
  it('leaves off the organization\'s @domain, in any case, and nothing else', () => {
    const step = { hiddenSuffix: '@managed.test' };
    expect(shownLoginName(step, 'alice@managed.test')).toBe('alice');
    expect(shownLoginName(step, 'Alice@Managed.TEST')).toBe('Alice');
    expect(shownLoginName(step, 'alice@elsewhere.test')).toBe('alice@elsewhere.test');
    expect(shownLoginName(step, 'alice@sub.managed.test')).toBe('alice@sub.managed.test');
    expect(shownLoginName(step, 'alice')).toBe('alice');
    expect(shownLoginName(step, '@managed.test')).toBe('@managed.test');
    expect(shownLoginName({ hiddenSuffix: undefined }, 'alice@managed.test')).toBe('alice@managed.test');
  });
});
