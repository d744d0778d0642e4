#!/usr/bin/env node
// Compiles Reality.eth (from the npm package @reality.eth/contracts, pinned in package.json) with the solc-js
// versions its deployments were built with, and writes one artifact per contract into the Python package:
// oracle/chain/artifacts/reality/<Name>.json ({contractName, source, compiler, settings, sources, abi, bytecode}).
//   RealityETH_v3_0 (flat/RealityETH-3.0.sol) with the tests' arbitrator test/mocks/RealityArbitrator.sol, and
//   RealityETH_ERC20_v3_0 (flat/RealityETH_ERC20-3.0.sol): solc-js 0.8.6 (npm alias solc-0.8.6), optimizer
//   200 runs, EVM berlin;
//   Realitio_v2_1 (flat/RealityETH-2.1.sol, Reality.eth v2.1, where Omen asks on Gnosis chain): solc-js 0.4.25
//   (npm alias solc-0.4.25), optimizer 200 runs, EVM byzantium.
// Each compiles in its own unit set, so one contract's artifact never changes with another's source.
// `sources` maps each source unit compiled with it to the sha256 of its text, so tests can tell cheaply whether
// the files still hold what the artifacts were compiled from.
//   node scripts/build-reality.js          write the artifacts
//   node scripts/build-reality.js --check  exit 1 if the committed artifacts differ from a fresh compile
// Reality.eth's contracts are never edited or copied into this repository: they are compiled from the package.
"use strict";
const fs = require("fs");
const path = require("path");
const crypto = require("crypto");

const root = path.resolve(__dirname, "..");
const nm = path.join(root, "node_modules");
const PACKAGE = "@reality.eth/contracts";
const dest = path.resolve(root, "../oracle/chain/artifacts/reality");
const flat = (file) => [PACKAGE + "/flat/" + file, path.join(nm, PACKAGE, "flat", file)];
// One compile per group: its compiler, settings, and name -> [source unit, file it is read from].
const GROUPS = [
  {
    compiler: "solc-0.8.6",
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: "berlin" },
    contracts: {
      RealityETH_v3_0: flat("RealityETH-3.0.sol"),
      RealityArbitrator: ["test/mocks/RealityArbitrator.sol", path.join(root, "test/mocks/RealityArbitrator.sol")],
    },
  },
  {
    compiler: "solc-0.8.6",
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: "berlin" },
    contracts: { RealityETH_ERC20_v3_0: flat("RealityETH_ERC20-3.0.sol") },
  },
  {
    compiler: "solc-0.4.25",
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: "byzantium" },
    contracts: { Realitio_v2_1: flat("RealityETH-2.1.sol") },
  },
];

function sha256(text) {
  return crypto.createHash("sha256").update(text).digest("hex");
}

const version = JSON.parse(fs.readFileSync(path.join(nm, PACKAGE, "package.json"), "utf8")).version;
function render(obj) {
  return JSON.stringify(obj, null, 2) + "\n";
}

const outputs = {};
for (const group of GROUPS) {
  const solc = require(group.compiler);
  const sources = {};
  const digests = {};
  for (const [unit, file] of Object.values(group.contracts)) {
    const text = fs.readFileSync(file, "utf8");
    sources[unit] = { content: text };
    digests[unit] = sha256(text);
  }
  const settings = { ...group.settings, outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } } };
  const input = JSON.stringify({ language: "Solidity", sources, settings });
  // solc-js before 0.5 takes standard JSON through compileStandardWrapper.
  const compile = solc.compileStandardWrapper && solc.version().startsWith("0.4.") ? solc.compileStandardWrapper : solc.compile;
  const output = JSON.parse(compile(input));
  const errors = (output.errors || []).filter((e) => e.severity === "error");
  if (errors.length) {
    for (const e of errors) console.error(e.formattedMessage);
    process.exit(1);
  }
  for (const [name, [unit]] of Object.entries(group.contracts)) {
    const c = (output.contracts[unit] || {})[name];
    if (!c) throw new Error(name + " not found in " + unit);
    outputs[name + ".json"] = render({
      contractName: name,
      source: unit.startsWith(PACKAGE) ? PACKAGE + "@" + version + ":" + unit.slice(PACKAGE.length + 1) : "contracts/" + unit,
      compiler: solc.version(),
      settings: group.settings,
      sources: digests,
      abi: c.abi,
      bytecode: "0x" + c.evm.bytecode.object,
    });
  }
}
const compilers = [...new Set(GROUPS.map((g) => require(g.compiler).version()))].join(", ");

if (process.argv.includes("--check")) {
  const stale = Object.keys(outputs).filter((f) => {
    const p = path.join(dest, f);
    return !fs.existsSync(p) || fs.readFileSync(p, "utf8") !== outputs[f];
  });
  const extra = fs.existsSync(dest) ? fs.readdirSync(dest).filter((f) => !(f in outputs)) : [];
  if (stale.length || extra.length) {
    console.error(
      "Reality.eth artifacts in oracle/chain/artifacts/reality differ from a fresh compile: " +
        stale.concat(extra).join(", ") +
        "; run (cd contracts && node scripts/build-reality.js)"
    );
    process.exit(1);
  }
  console.log("Reality.eth artifacts up to date (" + PACKAGE + "@" + version + ", " + compilers + ")");
} else {
  fs.mkdirSync(dest, { recursive: true });
  for (const [f, text] of Object.entries(outputs)) fs.writeFileSync(path.join(dest, f), text);
  console.log("wrote " + Object.keys(outputs).join(", ") + " (" + PACKAGE + "@" + version + ", " + compilers + ")");
}
