import { colourProblem, contrastRatio, parseColour, textColourOn } from './colours.ts';

describe('branding colours', () => {
  it.each([
    ['#5469d4', [0x54, 0x69, 0xd4]],
    ['#FFF', [255, 255, 255]],
    ['#0008', [0, 0, 0]],
    ['#11182780', [0x11, 0x18, 0x27]],
    ['rgb(255, 0, 10)', [255, 0, 10]],
    ['rgba(1,2,3,0.5)', [1, 2, 3]],
    ['hsl(0, 100%, 50%)', [255, 0, 0]],
    ['hsla(120deg, 100%, 25%, 50%)', [0, 128, 0]],
  ])('%s is a colour', (value, rgb) => {
    expect(parseColour(value)).toEqual(rgb);
    expect(colourProblem(value)).toBeUndefined();
  });

  it.each([
    '', 'red', '#12', '#12345', '#ggg', 'rgb(256, 0, 0)', 'rgb(1,2)', 'hsl(361, 10%, 10%)', 'url(https://evil.example/x.png)',
    '#fff; background: url(x)', 'expression(alert(1))', `#${'0'.repeat(60)}`,
  ])('%j is not a colour', (value) => {
    expect(colourProblem(value)).toMatch(/must be/);
  });

  it('names the length limit', () => {
    expect(colourProblem(`rgb(1,2,3${' '.repeat(50)})`)).toBe('must be at most 50 characters');
  });

  it('computes WCAG contrast ratios', () => {
    expect(contrastRatio(1, 0)).toBe(21);
    expect(contrastRatio(0.5, 0.5)).toBe(1);
  });

  it.each([
    ['#000000', '#ffffff'],
    ['#ffffff', '#000000'],
    ['#5469d4', '#ffffff'], // ZITADEL's default primary: white 4.83:1, black 4.35:1
    ['#2073c4', '#ffffff'],
    ['#ffff00', '#000000'],
    ['#777777', '#000000'], // luminance 0.184: black 4.69:1, white 4.48:1 (white looks lighter, but reads worse)
    ['#808080', '#000000'], // mid grey: black 5.3:1, white 3.9:1
    ['#5a5a5a', '#ffffff'],
    ['hsl(0, 100%, 50%)', '#000000'], // pure red: black 5.25:1, white 4.0:1
    ['not a colour', '#ffffff'],
  ])('text on %s is %s', (background, text) => {
    expect(textColourOn(background)).toBe(text);
  });
});
