import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as root from '@veridex/langgraph';
import { describe, expect, it } from 'vitest';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const srcDir = fileURLToPath(new URL('../src/', import.meta.url));
const modules = readdirSync(srcDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(`${srcDir}${entry.name}/index.ts`))
  .map((entry) => entry.name);

describe('package surface', () => {
  it('exports every module folder as a subpath, pointing at its built index', () => {
    for (const name of modules) {
      expect(pkg.exports[`./${name}`], name).toEqual({
        types: `./dist/${name}/index.d.ts`,
        default: `./dist/${name}/index.js`,
      });
    }
  });

  it.each(modules)('loads @veridex/langgraph/%s and exports something', async (name) => {
    const module = await import(`@veridex/langgraph/${name}`);
    expect(Object.keys(module).length).toBeGreaterThan(0);
  });

  it('re-exports the common core from the root entry', () => {
    for (const name of [
      'tool',
      'governedToolNode',
      'createGovernedAgent',
      'PolicyEngine',
      'ApprovalManager',
      'PostgresCheckpointer',
      'AuditLog',
      'sealEvidence',
      'verifyEvidence',
      'createDatabase',
      'migrate',
      'VeridexError',
    ]) {
      expect(typeof (root as Record<string, unknown>)[name], name).toBe('function');
    }
  });
});
