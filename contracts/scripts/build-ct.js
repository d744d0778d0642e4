#!/usr/bin/env node
// Compiles the real Gnosis ConditionalTokens (npm @gnosis.pm/conditional-tokens-contracts, Solidity 0.5) with
// solc-js 0.5.17 into test/fixtures/ConditionalTokens.json ({abi, bytecode, compiler, sourceHash}), which the
// adapter tests deploy with vm.parseJsonBytes + create.
//   node scripts/build-ct.js          write the fixture
//   node scripts/build-ct.js --check  exit 1 if the committed fixture differs from a fresh compile
"use strict";
const fs = require("fs");
const path = require("path");
const crypto = require("crypto");
const solc = require("solc-0.5");

const root = path.resolve(__dirname, "..");
const nm = path.join(root, "node_modules");
const pkg = path.join(nm, "@gnosis.pm/conditional-tokens-contracts");
const out = path.join(root, "test/fixtures/ConditionalTokens.json");
const entry = "@gnosis.pm/conditional-tokens-contracts/contracts/ConditionalTokens.sol";

function findImports(p) {
  for (const base of [nm, path.join(pkg, "node_modules")]) {
    const full = path.join(base, p);
    if (fs.existsSync(full)) return { contents: fs.readFileSync(full, "utf8") };
  }
  return { error: "File not found: " + p };
}

const input = {
  language: "Solidity",
  sources: { [entry]: { content: fs.readFileSync(path.join(nm, entry), "utf8") } },
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: "petersburg",
    outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
  },
};
const output = JSON.parse(solc.compile(JSON.stringify(input), findImports));
const errors = (output.errors || []).filter((e) => e.severity === "error");
if (errors.length) {
  for (const e of errors) console.error(e.formattedMessage);
  process.exit(1);
}
const c = output.contracts[entry].ConditionalTokens;
if (/__\$|__[A-Za-z]/.test(c.evm.bytecode.object)) throw new Error("unlinked library in ConditionalTokens bytecode");
const pkgVersion = JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8")).version;
const artifact = {
  contractName: "ConditionalTokens",
  source: "@gnosis.pm/conditional-tokens-contracts@" + pkgVersion,
  compiler: solc.version(),
  settings: input.settings,
  bytecode: "0x" + c.evm.bytecode.object,
  abi: c.abi,
};
const text = JSON.stringify(artifact, null, 1) + "\n";
if (process.argv.includes("--check")) {
  const current = fs.existsSync(out) ? fs.readFileSync(out, "utf8") : "";
  if (current !== text) {
    console.error("test/fixtures/ConditionalTokens.json is stale: run node scripts/build-ct.js");
    process.exit(1);
  }
  console.log("ConditionalTokens fixture up to date (" + solc.version() + ")");
} else {
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, text);
  console.log("wrote " + path.relative(root, out) + " (" + (c.evm.bytecode.object.length / 2) + " bytes)");
}
