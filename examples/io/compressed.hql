// Compressed files: the shop sends yesterday's export gzipped. A source
// whose bytes start as gzip or zstd is decompressed as it is read (its
// first bytes tell, not its name), and its format comes from the name
// without the compression's extension: orders.csv.gz is CSV. A target
// named .gz or .zst is written compressed, atomically like any other.
import "contracts.hql"

let orders = source(file("examples/io/orders.csv.gz"), Csv) | validate(Order)

// the same records and failures as the plain file's
orders | report()

// written compressed: zstd, one record a line (.jsonl before .zst)
orders | oks() | write(file("examples/io/out/clean-orders.jsonl.zst"))
