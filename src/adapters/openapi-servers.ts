import { VeridexError } from '../errors/index.js';

/**
 * The absolute URL of an operation's first server, with `{variables}` replaced by their
 * defaults. A relative server URL (e.g. `/v1`) has no host to allowlist: pass `baseUrl`.
 *
 * @throws VeridexError `config_invalid` when there is no absolute http(s) server.
 */
export function serverUrlOf(servers: readonly unknown[], operationId: string): string {
  const server = servers[0] as
    | { url?: unknown; variables?: Record<string, { default?: unknown }> }
    | undefined;
  const template = typeof server?.url === 'string' ? server.url : '';
  const url = template.replace(/\{([^{}]+)\}/g, (_whole, name: string) => {
    const fallback = server?.variables?.[name]?.default;
    return typeof fallback === 'string' ? fallback : `{${name}}`;
  });
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || url.includes('{')) {
    throw new VeridexError(
      'config_invalid',
      `Operation "${operationId}" has no absolute http(s) server URL (${JSON.stringify(template).slice(0, 80)}); pass baseUrl.`,
    );
  }
  return url;
}
