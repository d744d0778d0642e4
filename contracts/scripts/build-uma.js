#!/usr/bin/env node
// Compiles UMA's real Optimistic Oracles V2 and V3 and the contracts around it from the npm package @uma/core (pinned in
// package.json) with solc-js 0.8.16 (npm alias solc-0.8.16), optimizer 1,000,000 runs, EVM london, and writes one
// artifact per contract into the Python package: oracle/chain/artifacts/uma/<Name>.json
// ({contractName, source, compiler, settings, sources, abi, bytecode}). `sources` maps every compiled source unit
// (UMA's and OpenZeppelin's) to the sha256 of its text, so tests can tell cheaply whether node_modules still holds
// what the artifacts were compiled from.
//   node scripts/build-uma.js          write the artifacts
//   node scripts/build-uma.js --check  exit 1 if the committed artifacts differ from a fresh compile
// UMA's contracts are never edited or copied into this repository: they are compiled from the package as published.
"use strict";
const fs = require("fs");
const path = require("path");
const crypto = require("crypto");
const solc = require("solc-0.8.16");

const root = path.resolve(__dirname, "..");
const nm = path.join(root, "node_modules");
const pkg = path.join(nm, "@uma/core");
const dest = path.resolve(root, "../oracle/chain/artifacts/uma");
const UMA = "@uma/core/contracts/";
// name -> source unit (the contract of that name in it).
const CONTRACTS = {
  OptimisticOracleV2: UMA + "optimistic-oracle-v2/implementation/OptimisticOracleV2.sol",
  OptimisticOracleV3: UMA + "optimistic-oracle-v3/implementation/OptimisticOracleV3.sol",
  Finder: UMA + "data-verification-mechanism/implementation/Finder.sol",
  IdentifierWhitelist: UMA + "data-verification-mechanism/implementation/IdentifierWhitelist.sol",
  Store: UMA + "data-verification-mechanism/implementation/Store.sol",
  AddressWhitelist: UMA + "common/implementation/AddressWhitelist.sol",
  TestnetERC20: UMA + "common/implementation/TestnetERC20.sol",
  MockOracleAncillary: UMA + "data-verification-mechanism/test/MockOracleAncillary.sol",
};
const SETTINGS = {
  optimizer: { enabled: true, runs: 1000000 },
  evmVersion: "london",
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
};

/** The file behind a source unit name: node_modules first, then @uma/core's own node_modules. */
function resolve(unit) {
  for (const base of [nm, path.join(pkg, "node_modules")]) {
    const full = path.join(base, unit);
    if (fs.existsSync(full)) return full;
  }
  return null;
}

function findImports(unit) {
  const full = resolve(unit);
  return full ? { contents: fs.readFileSync(full, "utf8") } : { error: "File not found: " + unit };
}

function sha256(text) {
  return crypto.createHash("sha256").update(text).digest("hex");
}

const version = JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8")).version;
const sources = {};
for (const unit of Object.values(CONTRACTS)) sources[unit] = { content: findImports(unit).contents };
const input = { language: "Solidity", sources, settings: SETTINGS };
const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
const errors = (output.errors || []).filter((e) => e.severity === "error");
if (errors.length) {
  for (const e of errors) console.error(e.formattedMessage);
  process.exit(1);
}
const compiled = {};
for (const unit of Object.keys(output.sources).sort()) {
  compiled[unit] = sha256(fs.readFileSync(resolve(unit)));
}

function render(obj) {
  return JSON.stringify(obj, null, 2) + "\n";
}

const outputs = {};
for (const [name, unit] of Object.entries(CONTRACTS)) {
  const c = output.contracts[unit][name];
  if (!c) throw new Error(name + " not found in " + unit);
  if (/__\$|__[A-Za-z]/.test(c.evm.bytecode.object)) throw new Error("unlinked library in " + name);
  outputs[name + ".json"] = render({
    contractName: name,
    source: "@uma/core@" + version + ":" + unit.slice("@uma/core/".length),
    compiler: solc.version(),
    settings: { optimizer: SETTINGS.optimizer, evmVersion: SETTINGS.evmVersion },
    sources: compiled,
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
      "UMA artifacts in oracle/chain/artifacts/uma differ from a fresh compile: " +
        stale.concat(extra).join(", ") +
        "; run (cd contracts && node scripts/build-uma.js)"
    );
    process.exit(1);
  }
  console.log("UMA artifacts up to date (@uma/core@" + version + ", " + solc.version() + ")");
} else {
  fs.mkdirSync(dest, { recursive: true });
  for (const [f, text] of Object.entries(outputs)) fs.writeFileSync(path.join(dest, f), text);
  console.log("wrote " + Object.keys(outputs).join(", ") + " (@uma/core@" + version + ", " + solc.version() + ")");
}
