// HQL standard library: country and currency codes.
//
// The lists below are reproduced from the ISO standards. Codes are upper
// case; a lower-case code ("gb") is not accepted.

/// Every officially assigned ISO 3166-1 alpha-2 country code (249 codes),
/// in alphabetical order. Reserved codes (such as `UK`, `EU` or `XK`) and
/// user-assigned codes are not included.
/// example: len(COUNTRY_CODES) == 249
/// example: "CH" in COUNTRY_CODES
let COUNTRY_CODES = [
    "AD", "AE", "AF", "AG", "AI", "AL", "AM", "AO", "AQ", "AR", "AS", "AT", "AU", "AW", "AX", "AZ",
    "BA", "BB", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BL", "BM", "BN", "BO", "BQ", "BR", "BS",
    "BT", "BV", "BW", "BY", "BZ",
    "CA", "CC", "CD", "CF", "CG", "CH", "CI", "CK", "CL", "CM", "CN", "CO", "CR", "CU", "CV", "CW",
    "CX", "CY", "CZ",
    "DE", "DJ", "DK", "DM", "DO", "DZ",
    "EC", "EE", "EG", "EH", "ER", "ES", "ET",
    "FI", "FJ", "FK", "FM", "FO", "FR",
    "GA", "GB", "GD", "GE", "GF", "GG", "GH", "GI", "GL", "GM", "GN", "GP", "GQ", "GR", "GS", "GT",
    "GU", "GW", "GY",
    "HK", "HM", "HN", "HR", "HT", "HU",
    "ID", "IE", "IL", "IM", "IN", "IO", "IQ", "IR", "IS", "IT",
    "JE", "JM", "JO", "JP",
    "KE", "KG", "KH", "KI", "KM", "KN", "KP", "KR", "KW", "KY", "KZ",
    "LA", "LB", "LC", "LI", "LK", "LR", "LS", "LT", "LU", "LV", "LY",
    "MA", "MC", "MD", "ME", "MF", "MG", "MH", "MK", "ML", "MM", "MN", "MO", "MP", "MQ", "MR", "MS",
    "MT", "MU", "MV", "MW", "MX", "MY", "MZ",
    "NA", "NC", "NE", "NF", "NG", "NI", "NL", "NO", "NP", "NR", "NU", "NZ",
    "OM",
    "PA", "PE", "PF", "PG", "PH", "PK", "PL", "PM", "PN", "PR", "PS", "PT", "PW", "PY",
    "QA",
    "RE", "RO", "RS", "RU", "RW",
    "SA", "SB", "SC", "SD", "SE", "SG", "SH", "SI", "SJ", "SK", "SL", "SM", "SN", "SO", "SR", "SS",
    "ST", "SV", "SX", "SY", "SZ",
    "TC", "TD", "TF", "TG", "TH", "TJ", "TK", "TL", "TM", "TN", "TO", "TR", "TT", "TV", "TW", "TZ",
    "UA", "UG", "UM", "US", "UY", "UZ",
    "VA", "VC", "VE", "VG", "VI", "VN", "VU",
    "WF", "WS",
    "YE", "YT",
    "ZA", "ZM", "ZW"
]

/// An officially assigned ISO 3166-1 alpha-2 country code, such as `CH`,
/// `GB` or `US`: two upper-case letters listed in `COUNTRY_CODES`.
/// example: is_ok(validate("GB", CountryCode))
/// example: is_err(validate("UK", CountryCode))
/// example: is_err(validate("gb", CountryCode))
type CountryCode = String
    require assigned: is_country_code(self)

/// True when `c` is an officially assigned ISO 3166-1 alpha-2 code.
/// example: is_country_code("GB")
/// example: is_country_code("CH")
/// example: is_country_code("AX")
/// example: is_country_code("ZW")
/// example: not is_country_code("UK")
/// example: not is_country_code("EU")
/// example: not is_country_code("XK")
/// example: not is_country_code("gb")
/// example: not is_country_code("GBR")
/// example: not is_country_code("")
fn is_country_code(c: String) -> Bool = c in COUNTRY_CODES

/// The active ISO 4217 alphabetic currency codes (list one, "current
/// currency & funds"), in alphabetical order. Besides national currencies
/// it holds, as ISO lists them, fund codes (such as `BOV`, `CHE`, `CLF`,
/// `USN`), precious metals (`XAU`, `XAG`, `XPD`, `XPT`), the bond-market
/// units (`XBA` to `XBD`), `XDR`, `XAD`, `XSU`, `XUA`, and the codes `XTS` (for
/// testing) and `XXX` (no currency). Withdrawn codes such as `HRK`, `ANG` or `BGN`
/// are not. The list follows ISO 4217 as published on 2026-01-01.
/// example: "CHF" in CURRENCY_CODES
/// example: len(CURRENCY_CODES) == 178
/// example: not ("HRK" in CURRENCY_CODES)
let CURRENCY_CODES = [
    "AED", "AFN", "ALL", "AMD", "AOA", "ARS", "AUD", "AWG", "AZN",
    "BAM", "BBD", "BDT", "BHD", "BIF", "BMD", "BND", "BOB", "BOV", "BRL", "BSD", "BTN", "BWP",
    "BYN", "BZD",
    "CAD", "CDF", "CHE", "CHF", "CHW", "CLF", "CLP", "CNY", "COP", "COU", "CRC", "CUP", "CVE",
    "CZK",
    "DJF", "DKK", "DOP", "DZD",
    "EGP", "ERN", "ETB", "EUR",
    "FJD", "FKP",
    "GBP", "GEL", "GHS", "GIP", "GMD", "GNF", "GTQ", "GYD",
    "HKD", "HNL", "HTG", "HUF",
    "IDR", "ILS", "INR", "IQD", "IRR", "ISK",
    "JMD", "JOD", "JPY",
    "KES", "KGS", "KHR", "KMF", "KPW", "KRW", "KWD", "KYD", "KZT",
    "LAK", "LBP", "LKR", "LRD", "LSL", "LYD",
    "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRU", "MUR", "MVR", "MWK", "MXN", "MXV",
    "MYR", "MZN",
    "NAD", "NGN", "NIO", "NOK", "NPR", "NZD",
    "OMR",
    "PAB", "PEN", "PGK", "PHP", "PKR", "PLN", "PYG",
    "QAR",
    "RON", "RSD", "RUB", "RWF",
    "SAR", "SBD", "SCR", "SDG", "SEK", "SGD", "SHP", "SLE", "SOS", "SRD", "SSP", "STN", "SVC",
    "SYP", "SZL",
    "THB", "TJS", "TMT", "TND", "TOP", "TRY", "TTD", "TWD", "TZS",
    "UAH", "UGX", "USD", "USN", "UYI", "UYU", "UYW", "UZS",
    "VED", "VES", "VND", "VUV",
    "WST",
    "XAD", "XAF", "XAG", "XAU", "XBA", "XBB", "XBC", "XBD", "XCD", "XCG", "XDR", "XOF", "XPD",
    "XPF", "XPT", "XSU", "XTS", "XUA", "XXX",
    "YER",
    "ZAR", "ZMW", "ZWG"
]

/// An active ISO 4217 alphabetic currency code, such as `EUR`, `USD` or
/// `CHF`: three upper-case letters listed in `CURRENCY_CODES`.
/// example: is_ok(validate("EUR", CurrencyCode))
/// example: is_err(validate("EURO", CurrencyCode))
/// example: is_err(validate("eur", CurrencyCode))
type CurrencyCode = String
    require active: is_currency_code(self)

/// True when `c` is an active ISO 4217 alphabetic currency code.
/// example: is_currency_code("EUR")
/// example: is_currency_code("USD")
/// example: is_currency_code("XAU")
/// example: is_currency_code("XDR")
/// example: not is_currency_code("EURO")
/// example: not is_currency_code("eur")
/// example: not is_currency_code("HRK")
/// example: not is_currency_code("BGN")
/// example: not is_currency_code("")
fn is_currency_code(c: String) -> Bool = c in CURRENCY_CODES
