// ajv 8 peer: the schema is compiled once; the file is read line by line
// with readline. `low <= high` cannot be expressed in JSON Schema, so it is
// checked here, after validation. The e-mail rule is a plain `pattern`, so
// ajv-formats is not needed.
"use strict";
const fs = require("fs");
const path = require("path");
const readline = require("readline");
const Ajv = require("ajv");

const file = process.argv[2];
if (!file) {
  console.error("usage: node validate.js ORDERS.jsonl");
  process.exit(2);
}
const schema = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "order.schema.json"), "utf8"));
const validate = new Ajv({ allErrors: false }).compile(schema);

let count = 0;
const rl = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
rl.on("line", (line) => {
  if (line.trim() === "") return;
  let value;
  try {
    value = JSON.parse(line);
  } catch {
    return;
  }
  if (validate(value) && value.low <= value.high) count++;
});
rl.on("close", () => console.log(count));
