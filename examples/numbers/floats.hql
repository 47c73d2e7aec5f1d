// How numbers the program computes are printed: Floats in the shortest form
// that reads back to the same f64, positional when 1e-4 <= |x| < 1e16,
// exponent form otherwise; Int / Int is always a Float.
let kwh = [1200, 300, 4]

kwh | map(x => x / 4)
(kwh | sum()) / len(kwh)
kwh | avg()
[2.0, 0.001, 1e16, 1e-5, 0.0001, 1.5e300, 123456789.125, 9999999999999998.0]
[1_000_000_000 * 10_000_000.0, 1 / 3, 0.1 + 0.2, -0.0, 7 % 3, -7 % 3]
[round(2.5), round(-2.5), floor(2.7), ceil(2.1), int(-2.9), float(3)]
10 / 4 == 2.5
