/**
 * The table of look-alike letters a fake turn header's role word may be spelt with, and the
 * fold that reads one (README *Security*: look-alikes beyond this table and NFKC pass).
 */

// Look-alike letters a role word may be spelt with (Cyrillic, Greek, Armenian, Latin
// variants). Full-width and mathematical letters are folded by NFKC instead.
const CONFUSABLE: Readonly<Record<string, string>> = {
  а: 'a',
  ɑ: 'a',
  α: 'a',
  ԁ: 'd',
  е: 'e',
  ҽ: 'e',
  ε: 'e',
  һ: 'h',
  հ: 'h',
  і: 'i',
  ι: 'i',
  ı: 'i',
  ɩ: 'i',
  ӏ: 'l',
  м: 'm',
  ո: 'n',
  о: 'o',
  ο: 'o',
  օ: 'o',
  р: 'p',
  ρ: 'p',
  г: 'r',
  ѕ: 's',
  ꜱ: 's',
  т: 't',
  τ: 't',
  ս: 'u',
  υ: 'u',
  ν: 'v',
  ѵ: 'v',
  у: 'y',
  ү: 'y',
  γ: 'y',
};
const folded = new Map<string, string>();

/** The ASCII lower-case letter `char` (one code point) looks like, or '' when it is none. */
export function foldLetter(char: string): string {
  const code = char.charCodeAt(0);
  if ((code >= 97 && code <= 122) || (code >= 65 && code <= 90))
    return String.fromCharCode(code | 32);
  if (code < 128) return '';
  let result = folded.get(char);
  if (result === undefined) {
    const lower = char.toLowerCase();
    const normal = char.normalize('NFKC').toLowerCase();
    result = /^[a-z]$/.test(normal) ? normal : (CONFUSABLE[lower] ?? '');
    if (folded.size < 65_536) folded.set(char, result);
  }
  return result;
}
