// ajv 8 peer: the schema is compiled once; the file is read line by line
// with readline (lines.js). `low <= high` cannot be expressed in JSON Schema,
// so it is checked here, after validation. The e-mail rule is a plain
// `pattern`, so ajv-formats is not needed.
"use strict";
const fs = require("fs");
const path = require("path");
const Ajv = require("ajv");
const { countValid } = require("./lines");

const schema = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "order.schema.json"), "utf8"));
const validate = new Ajv({ allErrors: false }).compile(schema);

countValid("node validate.js ORDERS.jsonl", (value) => validate(value) && value.low <= value.high);
