#!/usr/bin/env node
// Compiles Reality.eth v3 (contract RealityETH_v3_0 of flat/RealityETH-3.0.sol in the npm package
// @reality.eth/contracts, pinned in package.json) with solc-js 0.8.6 (npm alias solc-0.8.6), optimizer 200 runs,
// EVM berlin (the settings its deployments were built with), together with the test arbitrator
// test/mocks/RealityArbitrator.sol, and writes one artifact per contract into the Python package:
// oracle/chain/artifacts/reality/<Name>.json ({contractName, source, compiler, settings, sources, abi, bytecode}).
// `sources` maps each compiled source unit to the sha256 of its text, so tests can tell cheaply whether the
// files still hold what the artifacts were compiled from.
//   node scripts/build-reality.js          write the artifacts
//   node scripts/build-reality.js --check  exit 1 if the committed artifacts differ from a fresh compile
// Reality.eth's contract is never edited or copied into this repository: it is compiled from the package.
"use strict";
const fs = require("fs");
const path = require("path");
const crypto = require("crypto");
const solc = require("solc-0.8.6");

const root = path.resolve(__dirname, "..");
const nm = path.join(root, "node_modules");
const PACKAGE = "@reality.eth/contracts";
const dest = path.resolve(root, "../oracle/chain/artifacts/reality");
// name -> [source unit, file it is read from].
const CONTRACTS = {
  RealityETH_v3_0: [PACKAGE + "/flat/RealityETH-3.0.sol", path.join(nm, PACKAGE, "flat/RealityETH-3.0.sol")],
  RealityArbitrator: ["test/mocks/RealityArbitrator.sol", path.join(root, "test/mocks/RealityArbitrator.sol")],
};
const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: "berlin",
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
};

function sha256(text) {
  return crypto.createHash("sha256").update(text).digest("hex");
}

const version = JSON.parse(fs.readFileSync(path.join(nm, PACKAGE, "package.json"), "utf8")).version;
const sources = {};
const digests = {};
for (const [unit, file] of Object.values(CONTRACTS)) {
  const text = fs.readFileSync(file, "utf8");
  sources[unit] = { content: text };
  digests[unit] = sha256(text);
}
const input = { language: "Solidity", sources, settings: SETTINGS };
const output = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (output.errors || []).filter((e) => e.severity === "error");
if (errors.length) {
  for (const e of errors) console.error(e.formattedMessage);
  process.exit(1);
}

function render(obj) {
  return JSON.stringify(obj, null, 2) + "\n";
}

const outputs = {};
for (const [name, [unit]] of Object.entries(CONTRACTS)) {
  const c = (output.contracts[unit] || {})[name];
  if (!c) throw new Error(name + " not found in " + unit);
  outputs[name + ".json"] = render({
    contractName: name,
    source: unit.startsWith(PACKAGE) ? PACKAGE + "@" + version + ":" + unit.slice(PACKAGE.length + 1) : "contracts/" + unit,
    compiler: solc.version(),
    settings: { optimizer: SETTINGS.optimizer, evmVersion: SETTINGS.evmVersion },
    sources: digests,
    abi: c.abi,
    bytecode: "0x" + c.evm.bytecode.object,
  });
}

// Reality.eth's own Arbitrator (flat/Arbitrator-development.sol: pragma ^0.8.10, the one
// written for v3: requestArbitration, getDisputeFee, assignWinnerAndSubmitAnswerByArbitrator),
// compiled alone with solc-js 0.8.16 (npm alias solc-0.8.16), the same optimizer and EVM.
// The tests use it as the questions' arbitrator when the daemon itself requests arbitration.
{
  const solc16 = require("solc-0.8.16");
  const unit = PACKAGE + "/flat/Arbitrator-development.sol";
  const text = fs.readFileSync(path.join(nm, unit), "utf8");
  const compiled = JSON.parse(
    solc16.compile(JSON.stringify({ language: "Solidity", sources: { [unit]: { content: text } }, settings: SETTINGS }))
  );
  const failed = (compiled.errors || []).filter((e) => e.severity === "error");
  if (failed.length) {
    for (const e of failed) console.error(e.formattedMessage);
    process.exit(1);
  }
  const c = compiled.contracts[unit].Arbitrator;
  outputs["Arbitrator.json"] = render({
    contractName: "Arbitrator",
    source: PACKAGE + "@" + version + ":" + unit.slice(PACKAGE.length + 1),
    compiler: solc16.version(),
    settings: { optimizer: SETTINGS.optimizer, evmVersion: SETTINGS.evmVersion },
    sources: { [unit]: sha256(text) },
    abi: c.abi,
    bytecode: "0x" + c.evm.bytecode.object,
  });
}

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
  console.log("Reality.eth artifacts up to date (" + PACKAGE + "@" + version + ", " + solc.version() + ")");
} else {
  fs.mkdirSync(dest, { recursive: true });
  for (const [f, text] of Object.entries(outputs)) fs.writeFileSync(path.join(dest, f), text);
  console.log("wrote " + Object.keys(outputs).join(", ") + " (" + PACKAGE + "@" + version + ", " + solc.version() + ")");
}
