// Several syntax errors in one file: all of them are reported, nothing runs.
type Invoice : DataContract = {
    invoice_id: String
    total: Float
    require total >
}

let tax = 0.5 * * 2
check "ordered": 1 < 2 < 3
let net = [1, 2,, 3]
"never printed"
