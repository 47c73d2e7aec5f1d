// ajv 8 peer of the rich benchmark: bench/peers/event.schema.json (draft
// 2020-12, exported from bench/rich/event.hql by `hql export`, with formats
// and the country list added by bench/rich/schema.py) compiled once, with
// ajv-formats' full `date-time` and `email`; the file is read line by line
// with readline (lines.js). The two cross-field rules cannot be said in JSON Schema, so
// they are checked here, after validation. `x-hql-rules` is declared as a
// vocabulary word so that ajv's strict mode accepts the schema as exported.
"use strict";
const fs = require("fs");
const path = require("path");
const Ajv2020 = require("ajv/dist/2020");
const addFormats = require("ajv-formats");
const { countValid } = require("./lines");

const schema = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "event.schema.json"), "utf8"));
const ajv = new Ajv2020({ allErrors: false });
ajv.addVocabulary(["x-hql-rules"]);
addFormats(ajv, ["date-time", "email"]);
const validate = ajv.compile(schema);

function rulesHold(event) {
  const items = event.items;
  if (event.type === "purchase" && items.length === 0) return false;
  let sum = 0;
  for (const i of items) sum += i.qty * i.price;
  return event.total === sum;
}

countValid("node validate_rich.js EVENTS.jsonl", (event) => validate(event) && rulesHold(event));
