import { type CredentialKind, redactCredentials } from '../audit/index.js';
import { stripHidden } from '../tools/hidden-characters.js';

/** The first this many field starts get a view of everything after them (34 full passes). */
const FULL_SPLIT_FIELDS = 32;
/** Each later field start gets a window of this many characters run together from it… */
const SPLIT_WINDOW = 1_024;
/** …behind this much of the field before it, for a telling name such as `api_key` there. */
const SPLIT_CONTEXT = 64;
/**
 * A write with more string fields than this is not checked but refused by `denySecrets`: the
 * windows would cost more than a millisecond per field (about 70 ms at this bound).
 */
export const MAX_CHECKED_FIELDS = 4_096;

/**
 * The credential kinds the shared redactor (`redactCredentials`, src/audit) finds in what a
 * memory write would store — not a second detector, but the same one run over the views a
 * token could hide in: every field on its own line (content, subject, predicate, object, key,
 * each tag, each string in `value`); the same with invisible characters removed, NFKC applied
 * (a zero-width space or full-width letters inside a token) and letter-by-letter spacing
 * closed up (`s k - p r o j …`); and, for each field, that field run together with the fields
 * after it (a token split across fields, tags or array items): for the first 32 fields
 * everything after them, for every later one the next 1,024 characters. Each view is one
 * linear pass, so the work is linear in the text for a bounded number of fields
 * ({@link MAX_CHECKED_FIELDS}); kinds are reported once each, never the values.
 *
 * @example credentialKindsIn(['deploy', 'sk-proj-abcdefghijklm', 'nopqrstuvwxyz0123']) // ['openai_api_key']
 */
export function credentialKindsIn(texts: readonly string[]): CredentialKind[] {
  const visible = texts.map((text) =>
    closeUpSpacing(stripHidden(text.normalize('NFKC')).text.normalize('NFKC')),
  );
  const views = [texts.join('\n'), visible.join('\n')];
  for (let index = 0; index < FULL_SPLIT_FIELDS && index + 1 < visible.length; index++) {
    views.push(`${visible.slice(0, index).join('\n')}\n${visible.slice(index).join('')}`);
  }
  for (let index = FULL_SPLIT_FIELDS; index + 1 < visible.length; index++) {
    if (visible[index] === '') continue; // the same window as the next field's
    views.push(`${visible[index - 1]!.slice(-SPLIT_CONTEXT)}\n${runTogether(visible, index)}`);
  }
  const kinds = new Set<CredentialKind>();
  for (const view of views) {
    for (const kind of redactCredentials(view).kinds) kinds.add(kind);
  }
  return [...kinds];
}

/** The fields from `start` on, run together, up to {@link SPLIT_WINDOW} characters. */
function runTogether(fields: readonly string[], start: number): string {
  let window = '';
  for (let index = start; index < fields.length && window.length < SPLIT_WINDOW; index++) {
    window += fields[index]!;
  }
  return window.length > SPLIT_WINDOW ? window.slice(0, SPLIT_WINDOW) : window;
}

/**
 * Removes the whitespace between two single characters, so text spaced out letter by letter
 * reads as the word it spells (`s k - p r o j` → `sk-proj`); words keep their spaces.
 */
export function closeUpSpacing(text: string): string {
  let result = '';
  let index = 0;
  while (index < text.length) {
    const char = text[index]!;
    if (/\s/.test(char)) {
      let end = index;
      while (end < text.length && /\s/.test(text[end]!)) end++;
      const before =
        index >= 1 && !/\s/.test(text[index - 1]!) && (index < 2 || /\s/.test(text[index - 2]!));
      const after = end < text.length && (end + 1 >= text.length || /\s/.test(text[end + 1]!));
      if (!(before && after)) result += text.slice(index, end);
      index = end;
      continue;
    }
    result += char;
    index++;
  }
  return result;
}

/** Every string a value holds (keys and leaves), depth-first, for {@link credentialKindsIn}. */
export function stringsOf(value: unknown, into: string[] = [], depth = 0): string[] {
  if (typeof value === 'string') into.push(value);
  else if (depth < 32 && typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(value)) {
      if (!Array.isArray(value)) into.push(key);
      stringsOf(child, into, depth + 1);
    }
  }
  return into;
}
