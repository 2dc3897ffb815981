import type { Context } from 'hono';
import { badInput } from './http-error.js';

/** The request's JSON body. @throws VeridexError `input_invalid` when it is not a JSON object. */
export async function jsonBody(c: Context): Promise<Record<string, unknown>> {
  let value: unknown;
  try {
    value = await c.req.json();
  } catch {
    throw badInput('The request body must be JSON (Content-Type: application/json).');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw badInput('The request body must be a JSON object.');
  }
  return value as Record<string, unknown>;
}
