// Importing a file that does not exist is a static error at the import;
// the path is relative to this file (examples/imports/shared/contract.hql,
// a typo for contracts.hql). Nothing runs (exit 2).
import "shared/contract.hql"

"never printed"
