// What the ajv peers share: read the file named on the command line line by
// line with readline, skip blank lines and lines that are not JSON, and print
// how many of the parsed values `isValid` holds for.
"use strict";
const fs = require("fs");
const readline = require("readline");

function countValid(usage, isValid) {
  const file = process.argv[2];
  if (!file) {
    console.error(`usage: ${usage}`);
    process.exit(2);
  }
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
    if (isValid(value)) count++;
  });
  rl.on("close", () => console.log(count));
}

module.exports = { countValid };
