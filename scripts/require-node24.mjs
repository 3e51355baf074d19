// Preloaded by every entry point (`node --import ./scripts/require-node24.mjs …`):
// the code is TypeScript run by Node's own type stripping, which older Node
// cannot load, so say so plainly instead of failing on a `.ts` extension.
const [major] = process.versions.node.split('.').map(Number);
if (major < 24) {
  process.stderr.write(
    `This project needs Node.js 24 or newer; this is ${process.version}.\n` +
      'Run it through npm (npm start, npm test), which uses the Node 24 installed as a devDependency by npm install.\n',
  );
  process.exit(1);
}
