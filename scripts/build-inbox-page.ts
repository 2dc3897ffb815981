// Bundles the approvals inbox page into dist/server/page-assets/ (run by `npm run build`), so
// the published package serves it without a build step on the user's machine.
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { bundlePage } from '../src/server/page-assets.js';

const out = new URL('../dist/server/page-assets/', import.meta.url);
mkdirSync(out, { recursive: true });
const script = await bundlePage();
writeFileSync(new URL('inbox.js', out), script);
copyFileSync(new URL('../src/server/page/inbox.css', import.meta.url), new URL('inbox.css', out));
// stderr: `npm pack --json` runs this build and its stdout must stay the JSON it prints.
console.error(`inbox page: ${(script.length / 1024).toFixed(0)} KiB → dist/server/page-assets/`);
