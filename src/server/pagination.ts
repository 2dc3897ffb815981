import { badInput } from './http-error.js';

/** The most items one page holds. */
export const MAX_PAGE = 100;
const DEFAULT_PAGE = 25;

/** `limit` query parameter → 1..{@link MAX_PAGE} (default 25). @throws VeridexError `input_invalid`. */
export function pageLimit(text: string | undefined): number {
  if (text === undefined) return DEFAULT_PAGE;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > MAX_PAGE) {
    throw badInput(`limit must be an integer from 1 to ${MAX_PAGE}`);
  }
  return value;
}

/** An opaque cursor for the item after which the next page starts (newest-first order). */
export function encodeCursor(item: { createdAt: string; id: string }): string {
  return Buffer.from(JSON.stringify([item.createdAt, item.id])).toString('base64url');
}

/** Reads a cursor made by {@link encodeCursor}. @throws VeridexError `input_invalid`. */
export function decodeCursor(
  text: string | undefined,
): { createdAt: string; id: string } | undefined {
  if (text === undefined) return undefined;
  try {
    if (text.length > 400) throw new Error('too long');
    const [createdAt, id] = JSON.parse(
      Buffer.from(text, 'base64url').toString('utf8'),
    ) as unknown[];
    if (
      typeof createdAt !== 'string' ||
      typeof id !== 'string' ||
      !Number.isFinite(Date.parse(createdAt))
    ) {
      throw new Error('shape');
    }
    return { createdAt, id };
  } catch {
    throw badInput('cursor is not one this API returned');
  }
}
