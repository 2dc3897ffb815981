#!/usr/bin/env node
// Installs the package as a user does and checks that it works there: `npm pack` (which runs
// the prepack build), a fresh temporary app that installs the tarball with only its required
// peers, an import of every subpath export, `npx veridex --help` / `--version`, and a small
// consumer type-checked with skipLibCheck false (errors inside third-party packages are
// ignored; any in our declarations or the consumer fail).
//
// Peer versions: the ones this checkout installed, or PACK_TEST_CORE / PACK_TEST_LANGGRAPH
// (e.g. the lowest of the declared peer ranges). Installs prefer the local npm cache.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// A small application against the published types: the README's first steps.
const CONSUMER = `import { createDatabase, migrate, VeridexError } from '@veridex/langgraph';
import { ApprovalManager } from '@veridex/langgraph/approvals';
import { AuditLog, PostgresAuditStore } from '@veridex/langgraph/audit';
import { PostgresCheckpointer } from '@veridex/langgraph/checkpointer';
import { governedToolNode, pendingApprovalInterrupts } from '@veridex/langgraph/nodes';
import { PolicyEngine, rules } from '@veridex/langgraph/policy';
import { tool } from '@veridex/langgraph/tools';
import { fromMcpClient, serveMcp } from '@veridex/langgraph/adapters';
import { z } from 'zod';

const db = await createDatabase({ dataDir: 'memory://' });
await migrate(db);
const audit = new AuditLog({ store: new PostgresAuditStore(db) });
const approvals = new ApprovalManager({ db, audit });
const refund = tool({
  name: 'refund',
  description: 'Refund an order.',
  safetyClass: 'financial',
  idempotency: 'required',
  input: z.object({ orderId: z.string(), amount: z.string() }),
  output: z.object({ refundId: z.string() }),
  execute: async ({ input }) => ({ refundId: 'r-' + input.orderId }),
});
const node = governedToolNode({
  tools: [refund],
  approvals,
  audit,
  policy: new PolicyEngine({ rules: [rules.denyTools(['shell_exec'])] }),
});
const checkpointer = PostgresCheckpointer.fromDatabase(db);
const pending: unknown = pendingApprovalInterrupts;
const error: unknown = new VeridexError('config_invalid', 'x');
console.log(typeof node, typeof checkpointer, typeof fromMcpClient, typeof serveMcp, pending, error);
await db.close();
`;

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const installed = (name) =>
  JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version;
const core = process.env.PACK_TEST_CORE ?? installed('@langchain/core');
const langgraph = process.env.PACK_TEST_LANGGRAPH ?? installed('@langchain/langgraph');
const keep = process.env.PACK_TEST_KEEP === '1';

function run(command, args, cwd, options = {}) {
  console.log(`$ ${command} ${args.join(' ')}`);
  return execFileSync(command, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', options.quiet ? 'pipe' : 'inherit'],
    env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false' },
  });
}

const work = mkdtempSync(join(tmpdir(), 'veridex-pack-'));
let failed = false;
try {
  const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], root));
  const tarball = join(work, packed[0].filename);
  const files = packed[0].files.map((file) => file.path);
  for (const required of [
    'LICENSE',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/cli/main.js',
    'bin/veridex.mjs',
    'dist/db/migrations',
  ]) {
    if (!files.some((file) => file === required || file.startsWith(`${required}/`))) {
      throw new Error(`the tarball lacks ${required}`);
    }
  }

  const app = join(work, 'app');
  execFileSync('mkdir', ['-p', app]);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'pack-test-app', private: true, type: 'module' }, null, 2),
  );
  const typescript = installed('typescript');
  const typesNode = installed('@types/node');
  run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      tarball,
      `@langchain/core@${core}`,
      `@langchain/langgraph@${langgraph}`,
      `typescript@${typescript}`,
      `@types/node@${typesNode}`,
      `zod@${installed('zod')}`,
    ],
    app,
  );
  // One copy of each peer: a nested second copy is what breaks instanceof checks and types.
  const tree = run(
    'npm',
    ['ls', '@langchain/core', '@langchain/langgraph', '--all', '--parseable'],
    app,
    { quiet: true },
  );
  for (const name of ['@langchain/core', '@langchain/langgraph']) {
    const copies = tree.split('\n').filter((line) => line.endsWith(`node_modules/${name}`));
    if (copies.length !== 1)
      throw new Error(`${copies.length} copies of ${name}:\n${copies.join('\n')}`);
  }

  const subpaths = Object.keys(pkg.exports).filter((key) => !key.endsWith('.json'));
  const specifiers = subpaths.map((key) =>
    key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`,
  );
  writeFileSync(
    join(app, 'import-all.mjs'),
    `const optional = ${JSON.stringify(Object.keys(pkg.peerDependenciesMeta ?? {}))};
const specifiers = ${JSON.stringify(specifiers)};
for (const specifier of specifiers) {
  try {
    const module = await import(specifier);
    if (Object.keys(module).length === 0) throw new Error('empty module ' + specifier);
  } catch (error) {
    // A subpath made for an optional peer (e.g. /openai-agents) needs that peer installed.
    const missing = /Cannot find package '([^']+)'/.exec(String(error.message))?.[1];
    if (error.code === 'ERR_MODULE_NOT_FOUND' && optional.includes(missing)) {
      console.log(specifier + ' needs the optional peer ' + missing + ' (not installed)');
      continue;
    }
    throw error;
  }
}
console.log('imported ' + specifiers.length + ' entry points');
`,
  );
  run('node', ['import-all.mjs'], app);
  const help = run('npx', ['--no-install', 'veridex', '--help'], app);
  if (!help.includes('approvals')) throw new Error(`unexpected --help output:\n${help}`);
  const version = run('npx', ['--no-install', 'veridex', '--version'], app).trim();
  if (version !== pkg.version)
    throw new Error(`--version printed ${version}, expected ${pkg.version}`);

  writeFileSync(join(app, 'consumer.ts'), CONSUMER);
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        types: ['node'],
      },
      files: ['consumer.ts'],
    }),
  );
  let output = '';
  try {
    run('npx', ['--no-install', 'tsc', '-p', '.'], app, { quiet: true });
  } catch (error) {
    output = String(error.stdout ?? '');
  }
  const ours = output
    .split('\n')
    .filter((line) => /error TS\d+/.test(line))
    .filter((line) => line.startsWith('consumer.ts') || line.includes(`node_modules/${pkg.name}/`));
  const thirdParty =
    output.split('\n').filter((line) => /error TS\d+/.test(line)).length - ours.length;
  if (thirdParty > 0)
    console.log(`(${thirdParty} type errors inside third-party packages ignored)`);
  if (ours.length > 0)
    throw new Error(`type errors in the package or the consumer:\n${ours.join('\n')}`);
  console.log(`pack test passed with @langchain/core ${core}, @langchain/langgraph ${langgraph}`);
} catch (error) {
  failed = true;
  console.error(`pack test FAILED: ${error.message}`);
} finally {
  if (!keep) rmSync(work, { recursive: true, force: true });
  else console.log(`kept ${work}`);
}
process.exit(failed ? 1 : 0);
