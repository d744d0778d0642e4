#!/usr/bin/env node
// Check an oracle consensus proof without Python: node verifier/verify-proof.mjs FILE
//
// Node's standard library only (no npm install). For a version 2 proof the checksum is
// SHA-256 over the RFC 8785 (JSON Canonicalization Scheme) serialization of the proof
// without its `checksum` and `proof_id` fields, and `proof_id` is "proof-" followed by
// the first 16 hex digits of the checksum (docs/consensus.md, "Proof").
//
// Exit 0 and "verified": the checksum and proof_id match the content.
// Exit 1: the content was altered (prints the recorded and the recomputed checksum).
// Exit 2: not checked: the file cannot be read, is not JSON, is not a proof, holds a value
//         RFC 8785 cannot represent (an integer beyond +-(2**53 - 1), a number too large for
//         a double, a lone surrogate), or is a version 1 proof (Python's own float rendering,
//         which this script does not reproduce: use `oracle proof verify FILE`).
//
// `--canonicalize FILE` (for tests): FILE holds a JSON array; prints the RFC 8785 form of
// each element on its own line.

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import process from "node:process";

const EXIT_ALTERED = 1;
const EXIT_UNCHECKED = 2;
const DERIVED_FIELDS = new Set(["checksum", "proof_id"]);

class Unrepresentable extends Error {}

function isLoneSurrogateIn(text) {
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) {
        i += 1;
        continue;
      }
      return true;
    }
    if (unit >= 0xdc00 && unit <= 0xdfff) return true;
  }
  return false;
}

function stringForm(text, path) {
  if (isLoneSurrogateIn(text)) {
    throw new Unrepresentable(`${path}: the string holds a lone surrogate (not Unicode text)`);
  }
  // RFC 8785 section 3.2.2.2 escapes strings exactly as ECMAScript's JSON.stringify does.
  return JSON.stringify(text);
}

function childPath(path, key) {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

// The RFC 8785 serialization of a value parsed by JSON.parse.
export function canonicalize(value, path = "$") {
  if (value === null || value === true || value === false) return String(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Unrepresentable(`${path}: ${value} is not a JSON number`);
    // RFC 8785 section 3.2.2.3: ECMAScript's Number serialization, which is what
    // JSON.stringify gives for a finite number (-0 included, written 0).
    return JSON.stringify(value);
  }
  if (typeof value === "string") return stringForm(value, path);
  if (Array.isArray(value)) {
    return `[${value.map((item, index) => canonicalize(item, `${path}[${index}]`)).join(",")}]`;
  }
  if (typeof value === "object") {
    // Array.prototype.sort without a comparator orders strings by UTF-16 code units,
    // which is the order RFC 8785 section 3.2.3 asks for.
    const keys = Object.keys(value).sort();
    const members = keys.map((key) => {
      const where = childPath(path, key);
      if (isLoneSurrogateIn(key)) {
        throw new Unrepresentable(`${where}: the key holds a lone surrogate (not Unicode text)`);
      }
      return `${JSON.stringify(key)}:${canonicalize(value[key], where)}`;
    });
    return `{${members.join(",")}}`;
  }
  throw new Unrepresentable(`${path}: ${typeof value} is not a JSON value`);
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

// The first integer literal (no fraction, no exponent) in valid JSON text beyond
// +-(2**53 - 1), or null. JSON.parse silently rounds such a literal to a nearby double, so
// two languages would hash different values; the Python verifier refuses them too.
function unsafeIntegerIn(text) {
  const token = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;
  for (const [lexeme] of text.matchAll(token)) {
    if (lexeme.startsWith('"') || /[.eE]/.test(lexeme)) continue;
    const value = BigInt(lexeme);
    if (value > MAX_SAFE || value < -MAX_SAFE) return lexeme;
  }
  return null;
}

function sha256Hex(text) {
  return createHash("sha256").update(Buffer.from(text, "utf8")).digest("hex");
}

function fail(code, message) {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

function readJson(file) {
  let text;
  try {
    text = readFileSync(file === "-" ? 0 : file, "utf8");
  } catch (error) {
    fail(EXIT_UNCHECKED, `${file}: cannot be read (${error.code ?? error.message})`);
  }
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    fail(EXIT_UNCHECKED, `${file}: not JSON (${error.message})`);
  }
  const unsafe = unsafeIntegerIn(text);
  if (unsafe !== null) {
    fail(
      EXIT_UNCHECKED,
      `${file}: not representable in RFC 8785 JSON: integer ${unsafe} is beyond +-(2**53 - 1), ` +
        "which JSON numbers hold",
    );
  }
  return value;
}

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function verify(file) {
  let proof = readJson(file);
  // A consensus output (`oracle consensus FILE`) carries its proof under `proof`.
  if (isObject(proof) && isObject(proof.proof)) proof = proof.proof;
  if (!isObject(proof)) fail(EXIT_UNCHECKED, `${file}: not a proof: expected a JSON object`);
  const required = [
    ["checksum", (v) => typeof v === "string", "a string"],
    ["proof_id", (v) => typeof v === "string", "a string"],
    ["version", (v) => Number.isInteger(v), "an integer"],
    ["market", isObject, "an object"],
  ];
  for (const [name, valid, described] of required) {
    if (!Object.hasOwn(proof, name)) fail(EXIT_UNCHECKED, `${file}: not a proof: no \`${name}\` field`);
    if (!valid(proof[name])) {
      fail(EXIT_UNCHECKED, `${file}: not a proof: \`${name}\` must be ${described}`);
    }
  }
  if (proof.version === 1) {
    fail(
      EXIT_UNCHECKED,
      `${file}: a version 1 proof: its checksum uses Python's own JSON rendering, which this ` +
        "verifier does not reproduce; check it with the Python verifier: oracle proof verify FILE",
    );
  }
  if (proof.version !== 2) {
    fail(
      EXIT_UNCHECKED,
      `${file}: proof version ${proof.version} is not supported (this verifier reads version 2)`,
    );
  }
  // Object.fromEntries defines own properties, so even a member named "__proto__" is kept.
  const body = Object.fromEntries(Object.entries(proof).filter(([key]) => !DERIVED_FIELDS.has(key)));
  let canonical;
  try {
    canonical = canonicalize(body);
  } catch (error) {
    if (error instanceof Unrepresentable) {
      fail(EXIT_UNCHECKED, `${file}: not a proof: not representable in RFC 8785 JSON: ${error.message}`);
    }
    throw error;
  }
  const found = sha256Hex(canonical);
  const expectedId = `proof-${found.slice(0, 16)}`;
  if (proof.checksum === found && proof.proof_id === expectedId) {
    process.stdout.write(`verified: ${file}: checksum ${found}\n`);
    process.exit(0);
  }
  process.stderr.write(
    `ALTERED: ${file}: the content does not match its checksum\n` +
      `  expected (recorded): checksum ${proof.checksum}, proof_id ${proof.proof_id}\n` +
      `  found (recomputed):  checksum ${found}, proof_id ${expectedId}\n`,
  );
  process.exit(EXIT_ALTERED);
}

function canonicalizeEach(file) {
  const values = readJson(file);
  if (!Array.isArray(values)) fail(EXIT_UNCHECKED, `${file}: expected a JSON array`);
  const lines = [];
  for (const [index, value] of values.entries()) {
    try {
      lines.push(canonicalize(value));
    } catch (error) {
      if (error instanceof Unrepresentable) fail(EXIT_UNCHECKED, `element ${index}: ${error.message}`);
      throw error;
    }
  }
  process.stdout.write(lines.map((line) => `${line}\n`).join(""));
}

const args = process.argv.slice(2);
if (args.length === 2 && args[0] === "--canonicalize") {
  canonicalizeEach(args[1]);
} else if (args.length === 1 && !args[0].startsWith("--")) {
  verify(args[0]);
} else {
  fail(
    EXIT_UNCHECKED,
    "usage: node verifier/verify-proof.mjs FILE   (FILE `-` reads stdin)\n" +
      "       node verifier/verify-proof.mjs --canonicalize FILE",
  );
}
