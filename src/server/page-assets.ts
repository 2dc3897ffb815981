import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { VeridexError } from '../errors/index.js';

/** The inbox page's files, as the service serves them. */
export interface PageAssets {
  html: string;
  script: string;
  style: string;
}

const BUILT = new URL('./page-assets/', import.meta.url);
const SOURCE = new URL('./page/', import.meta.url);

/** The page's HTML shell: one script and one stylesheet from this origin (CSP `'self'`). */
export function pageHtml(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Approvals inbox</title>
<link rel="stylesheet" href="/assets/inbox.css">
<script type="module" src="/assets/inbox.js"></script>
</head>
<body><div id="root"></div></body>
</html>
`;
}

/**
 * Bundles the React page (`src/server/page/main.tsx`) with esbuild into one minified ES module.
 * `npm run build` runs this once and ships the result in `dist/server/page-assets/`, so
 * `veridex serve` from the package needs no build step; a source checkout bundles on first use.
 */
export async function bundlePage(): Promise<string> {
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch {
    throw new VeridexError(
      'config_invalid',
      'The inbox page is not built and esbuild is not installed: run `npm run build` (or install esbuild).',
    );
  }
  const result = await esbuild.build({
    entryPoints: [fileURLToPath(new URL('main.tsx', SOURCE))],
    bundle: true,
    format: 'esm',
    minify: true,
    write: false,
    platform: 'browser',
    target: ['chrome110', 'firefox110', 'safari16'],
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    legalComments: 'none',
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

let cached: Promise<PageAssets> | undefined;

/** The page's files: the built ones when present, else bundled now (once per process). */
export function loadPageAssets(): Promise<PageAssets> {
  cached ??= (async () => {
    const builtScript = new URL('inbox.js', BUILT);
    if (existsSync(fileURLToPath(builtScript))) {
      return {
        html: pageHtml(),
        script: readFileSync(builtScript, 'utf8'),
        style: readFileSync(new URL('inbox.css', BUILT), 'utf8'),
      };
    }
    return {
      html: pageHtml(),
      script: await bundlePage(),
      style: readFileSync(new URL('inbox.css', SOURCE), 'utf8'),
    };
  })();
  cached.catch(() => {
    cached = undefined;
  });
  return cached;
}
