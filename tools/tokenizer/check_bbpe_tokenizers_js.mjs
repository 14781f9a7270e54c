// An independent check of the byte-level BPE goldens (gen_bbpe_goldens.py):
// Hugging Face's tokenizers.js (the npm package @huggingface/tokenizers, a
// JavaScript port of the tokenizers library, its regexes run as Oniguruma
// would) encodes every golden text of each tokenizer.json form and must give
// the golden ids. Not a dependency of the build or the tests: install the
// package into a folder DIR outside the repository and point NODE_PATH at it:
//
//   npm install --prefix DIR @huggingface/tokenizers@0.2.0
//   NODE_PATH=DIR/node_modules node tools/tokenizer/check_bbpe_tokenizers_js.mjs
//
// Texts that are not UTF-8 (JavaScript strings cannot hold them) are skipped.
import fs from "fs";
import { createRequire } from "module";
import path from "path";
import { fileURLToPath } from "url";

const here = path.dirname(fileURLToPath(import.meta.url));
const data = path.join(here, "..", "..", "tests", "data", "tokenizers");
const require = createRequire(path.join(process.env.NODE_PATH || here, "x.js"));
const mod = await import(require.resolve("@huggingface/tokenizers"));
const Tokenizer = mod.Tokenizer || mod.default.Tokenizer;

const forms = [
  ["bbpe_gpt2.tokenizer.json", "bbpe_gpt2_prefix.golden"],
  ["bbpe_qwen2.tokenizer.json", "bbpe_qwen2.golden"],
  ["bbpe_llama3.tokenizer.json", "bbpe_llama3.golden"],
];
let bad = 0;
for (const [json, golden] of forms) {
  const tok = new Tokenizer(JSON.parse(fs.readFileSync(path.join(data, json), "utf8")), {});
  let same = 0;
  let skipped = 0;
  for (const line of fs.readFileSync(path.join(data, golden), "utf8").split("\n")) {
    if (!line) continue;
    const [hex, ids] = line.split("\t");
    const bytes = Buffer.from(hex, "hex");
    const text = new TextDecoder("utf-8").decode(bytes);
    if (!Buffer.from(text, "utf8").equals(bytes)) {
      skipped++;
      continue;
    }
    const want = ids ? ids.split(" ").map(Number) : [];
    const got = tok.encode(text, { add_special_tokens: false }).ids;
    if (JSON.stringify(got) === JSON.stringify(want)) {
      same++;
    } else {
      bad++;
      console.log(`${json}: ${JSON.stringify(text)}\n  tokenizers.js ${JSON.stringify(got)}\n  golden        ${JSON.stringify(want)}`);
    }
  }
  console.log(`${json}: ${same} golden texts agree, ${skipped} skipped (not UTF-8)`);
}
console.log(`check: ${bad ? "FAILED" : "ok"}`);
process.exit(bad ? 1 : 0);
