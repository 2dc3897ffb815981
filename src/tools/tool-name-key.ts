import { VeridexError } from '../errors/index.js';

/**
 * The comparison key of a tool name: lower-case, `-` and `_` runs read as one `_`, leading and
 * trailing ones dropped. Two tools with the same key are one name to a model (`get_doc2`,
 * `Get-Doc2`, and `get.doc2` once an importer has normalised it), so no registry or importer
 * accepts both: the model could not tell which one it calls, and one may be far more
 * dangerous than the other. Linear (one pass, no regular expression).
 *
 * @example toolNameKey('Get--Doc2_') === toolNameKey('get_doc2') // true
 */
export function toolNameKey(name: string): string {
  let key = '';
  let separator = false;
  for (const char of name.toLowerCase()) {
    if (char === '-' || char === '_') {
      separator = key.length > 0;
      continue;
    }
    if (separator) key += '_';
    separator = false;
    key += char;
  }
  return key;
}

/**
 * Refuses a list in which two entries' names have the same {@link toolNameKey}.
 * `label` says where each came from (an MCP tool name, an `operationId`).
 *
 * @throws VeridexError `tool_name_clash` naming both.
 */
export function assertNoNameClash(entries: ReadonlyArray<{ name: string; label: string }>): void {
  const seen = new Map<string, string>();
  for (const { name, label } of entries) {
    const key = toolNameKey(name);
    const other = seen.get(key);
    if (other !== undefined) {
      throw new VeridexError(
        'tool_name_clash',
        `${other} and ${label} both become tool "${name}" (names that differ only in case, "-", "_" or characters a model API cannot take are one name); rename one, or leave one out.`,
        { details: { tool: name } },
      );
    }
    seen.set(key, label);
  }
}
