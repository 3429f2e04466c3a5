// Builds the extension with esbuild:
//   dist/extension.js  the bundle VS Code loads (vscode external, everything else inlined)
//   out/*.js           the vscode-free modules as CommonJS, for `node --test`
// Usage: node scripts/build.mjs [--production]
import * as esbuild from 'esbuild';
import { fileURLToPath } from 'node:url';
import * as path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const production = process.argv.includes('--production');

await esbuild.build({
  absWorkingDir: root,
  entryPoints: ['src/extension.ts'],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node18',
  external: ['vscode'],
  outfile: 'dist/extension.js',
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
});

await esbuild.build({
  absWorkingDir: root,
  entryPoints: ['src/display.ts', 'src/tracker.ts', 'src/protocol.ts', 'src/contextmap.ts', 'src/server.ts', 'src/delta.ts', 'src/receipt.ts', 'src/ask.ts', 'src/reopen.ts'],
  bundle: false,
  platform: 'node',
  format: 'cjs',
  target: 'node18',
  outdir: 'out',
  logLevel: 'warning',
});
