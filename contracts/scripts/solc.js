#!/usr/bin/env node
// A native-solc stand-in for forge, backed by solc-js from npm (no compiler download needed).
// forge calls `<solc> --version` and `<solc> --standard-json [flags]` with the input on stdin.
"use strict";
const fs = require("fs");
const path = require("path");
const solc = require("solc");

const args = process.argv.slice(2);
if (args.includes("--version")) {
  process.stdout.write("solc, the solidity compiler commandline interface\nVersion: " + solc.version() + "\n");
  process.exit(0);
}
if (!args.includes("--standard-json")) {
  process.stderr.write("solc.js wrapper: only --version and --standard-json are supported\n");
  process.exit(2);
}

// Roots for resolving imports that forge did not inline: --base-path, --include-path, cwd.
const roots = [];
for (let i = 0; i < args.length; i++) {
  if ((args[i] === "--base-path" || args[i] === "--include-path") && args[i + 1]) roots.push(args[++i]);
}
roots.push(process.cwd());

function findImports(p) {
  for (const root of [""].concat(roots)) {
    const full = root ? path.resolve(root, p) : p;
    try {
      return { contents: fs.readFileSync(full, "utf8") };
    } catch (_) {
      /* try the next root */
    }
  }
  return { error: "File not found: " + p };
}

const input = fs.readFileSync(0, "utf8");
const output = solc.compile(input, { import: findImports });
// Synchronous writes: a plain process.stdout.write can be cut off for large outputs on a pipe.
const buf = Buffer.from(output, "utf8");
let off = 0;
while (off < buf.length) {
  try {
    off += fs.writeSync(1, buf, off, buf.length - off);
  } catch (e) {
    if (e.code !== "EAGAIN") throw e;
  }
}
