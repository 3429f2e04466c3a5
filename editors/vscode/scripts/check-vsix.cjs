// Checks a platform-specific .vsix (run by package-targets.sh): node check-vsix.cjs FILE TARGET.
// The manifest names the target platform; extension/server/ holds exactly the daemon for it (its
// executable format and CPU read from the binary's header), executable outside Windows; the bundle
// and manifest are there and the sources are not. For the host's platform the packaged daemon is
// extracted and run (`vtcode-ls version`). Prints "ok - ..." or "not ok - ..."; exits 1 on failure.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cp = require('node:child_process');
const yauzl = require('yauzl');

const [file, target] = process.argv.slice(2);
const want = {
  'linux-x64': { format: 'elf', cpu: 'x86-64', exe: 'vtcode-ls' },
  'linux-arm64': { format: 'elf', cpu: 'arm64', exe: 'vtcode-ls' },
  'darwin-x64': { format: 'mach-o', cpu: 'x86-64', exe: 'vtcode-ls' },
  'darwin-arm64': { format: 'mach-o', cpu: 'arm64', exe: 'vtcode-ls' },
  'win32-x64': { format: 'pe', cpu: 'x86-64', exe: 'vtcode-ls.exe' },
}[target];
const host = `${process.platform}-${process.arch}`;

/** binaryKind reads the executable format and CPU from a binary's first bytes. */
function binaryKind(b) {
  if (b.readUInt32BE(0) === 0x7f454c46) { // ELF; e_machine at 18 (little-endian files)
    const m = b.readUInt16LE(18);
    return { format: 'elf', cpu: m === 0x3e ? 'x86-64' : m === 0xb7 ? 'arm64' : `machine ${m}` };
  }
  if (b.readUInt32LE(0) === 0xfeedfacf) { // Mach-O 64-bit; cputype at 4
    const c = b.readUInt32LE(4);
    return { format: 'mach-o', cpu: c === 0x01000007 ? 'x86-64' : c === 0x0100000c ? 'arm64' : `cputype ${c}` };
  }
  if (b.toString('latin1', 0, 2) === 'MZ') { // PE: "PE\0\0" at e_lfanew, then the machine
    const pe = b.readUInt32LE(0x3c);
    if (b.toString('latin1', pe, pe + 4) === 'PE\0\0') {
      const m = b.readUInt16LE(pe + 4);
      return { format: 'pe', cpu: m === 0x8664 ? 'x86-64' : m === 0xaa64 ? 'arm64' : `machine ${m}` };
    }
  }
  return { format: 'unknown', cpu: 'unknown' };
}

function entries(zipFile) {
  return new Promise((resolve, reject) => {
    yauzl.open(zipFile, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      const out = new Map();
      zip.on('entry', (e) => {
        zip.openReadStream(e, (err2, stream) => {
          if (err2) return reject(err2);
          const chunks = [];
          stream.on('data', (c) => chunks.push(c));
          stream.on('end', () => { out.set(e.fileName, { data: Buffer.concat(chunks), mode: (e.externalFileAttributes >>> 16) & 0o777 }); zip.readEntry(); });
        });
      });
      zip.on('end', () => resolve(out));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

(async () => {
  const problems = [];
  if (!want) throw new Error(`unknown target ${target}`);
  const files = await entries(file);
  const manifest = files.get('extension.vsixmanifest')?.data.toString('utf8') ?? '';
  if (!manifest.includes(`TargetPlatform="${target}"`)) problems.push(`the manifest does not name TargetPlatform="${target}"`);
  for (const n of ['extension/package.json', 'extension/dist/extension.js', 'extension/readme.md']) if (!files.has(n)) problems.push(`missing ${n}`);
  const server = [...files.keys()].filter((n) => n.startsWith('extension/server/'));
  const exe = `extension/server/${want.exe}`;
  if (server.length !== 1 || server[0] !== exe) problems.push(`extension/server/ holds ${JSON.stringify(server)}, want only ${exe}`);
  const bad = [...files.keys()].filter((n) => /^extension\/(src|node_modules|test|out|scripts)\//.test(n));
  if (bad.length) problems.push(`unwanted files: ${bad.slice(0, 5)}`);
  const bin = files.get(exe);
  let kind = { format: 'none', cpu: 'none' };
  if (bin) {
    kind = binaryKind(bin.data);
    if (kind.format !== want.format || kind.cpu !== want.cpu) problems.push(`${exe} is ${kind.format}/${kind.cpu}, want ${want.format}/${want.cpu}`);
    if (want.format !== 'pe' && (bin.mode & 0o111) === 0) problems.push(`${exe} is not executable (mode ${bin.mode.toString(8)})`);
  }
  let ran = '';
  if (bin && !problems.length && target === host) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vsix-check-'));
    const p = path.join(dir, want.exe);
    fs.writeFileSync(p, bin.data, { mode: 0o755 });
    try {
      ran = cp.execFileSync(p, ['version'], { encoding: 'utf8', timeout: 10000 }).trim();
      if (!/^vtcode-ls \S+ \(commit [^()]+\)$/.test(ran)) problems.push(`the packaged daemon printed ${JSON.stringify(ran)}`);
    } catch (e) {
      problems.push(`the packaged daemon does not run: ${e.message}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  const size = bin ? `${(bin.data.length / 1048576).toFixed(1)} MiB` : '-';
  if (problems.length) {
    console.log(`not ok - ${path.basename(file)}: ${problems.join('; ')}`);
    process.exit(1);
  }
  console.log(`ok - ${path.basename(file)}: ${files.size} files, TargetPlatform ${target}, ${exe} ${kind.format}/${kind.cpu} ${size}` +
    (ran ? `, runs: ${ran}` : ''));
})().catch((e) => { console.log(`not ok - ${path.basename(file || '?')}: ${e.message}`); process.exit(1); });
