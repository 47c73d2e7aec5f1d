// HQL standard library: text formats.
//
// Each type is a refinement of String with one named rule, so a failure has
// a stable identity such as `Email.well_formed`. Each `is_…` function gives
// the same answer as validating against the matching type, for a String.
//
// Regexes use the Rust `regex` crate's syntax. `\d` would match every
// Unicode digit, so the patterns spell ASCII classes (`[0-9]`) explicitly.

/// A String with at least one character that is not whitespace.
/// Leading and trailing whitespace is allowed and kept; only "blank" text
/// (empty, or nothing but spaces, tabs and newlines) is refused.
/// example: is_ok(validate("wren", NonEmpty))
/// example: is_ok(validate("  barn owl ", NonEmpty))
/// example: is_err(validate("", NonEmpty))
/// example: is_err(validate(" \t\n ", NonEmpty))
/// example: is_err(validate(42, NonEmpty))
type NonEmpty = String
    require not_blank: is_non_empty(self)

/// True when `s` has at least one character that is not whitespace.
/// example: is_non_empty("a")
/// example: is_non_empty(" a ")
/// example: not is_non_empty("")
/// example: not is_non_empty("   ")
fn is_non_empty(s: String) -> Bool = len(trim(s)) > 0

/// An e-mail address of the everyday form `local@domain.tld`: exactly one
/// `@`, no whitespace anywhere, something before the `@`, and a domain with
/// at least one dot that neither starts nor ends the domain. It checks the
/// shape only; it does not implement every corner of RFC 5322.
/// example: is_ok(validate("ada@example.org", Email))
/// example: is_err(validate("ada@example", Email))
/// example: is_err(validate("ada lovelace@example.org", Email))
type Email = String
    require well_formed: is_email(self)

/// True when `s` has the shape of an e-mail address (see `Email`).
/// example: is_email("ada@example.org")
/// example: is_email("first.last+tag@mail.example.co.uk")
/// example: not is_email("ada@example")
/// example: not is_email("@example.org")
/// example: not is_email("ada@@example.org")
/// example: not is_email("ada@example.org ")
/// example: not is_email("ada@.org")
/// example: not is_email("ada@example.")
/// example: not is_email("")
fn is_email(s: String) -> Bool =
    matches(s, r"^[^@\s]+@[^@\s.][^@\s]*\.[^@\s]+$") and not ends_with(s, ".")

/// An absolute `http` or `https` URL with a host: the scheme (any case),
/// `://`, optional `user:password@`, a host name, IPv4 address or bracketed
/// IPv6 address, an optional port, then an optional path, query and
/// fragment. No whitespace is allowed anywhere.
/// example: is_ok(validate("https://example.org/a?b=1#c", Url))
/// example: is_err(validate("https:///path", Url))
/// example: is_err(validate("ftp://example.org", Url))
type Url = String
    require well_formed: is_url(self)

/// True when `s` is an `http`/`https` URL with a host (see `Url`).
/// example: is_url("https://example.org")
/// example: is_url("http://localhost:8080/health")
/// example: is_url("HTTPS://Example.ORG/Path")
/// example: is_url("http://user:pw@192.168.0.1/x?y=1#z")
/// example: is_url("http://[::1]:3000/")
/// example: not is_url("http://")
/// example: not is_url("http:///etc/passwd")
/// example: not is_url("https://:443/")
/// example: not is_url("example.org")
/// example: not is_url("mailto:ada@example.org")
/// example: not is_url("https://exa mple.org")
/// example: not is_url("http://example.org:port/")
fn is_url(s: String) -> Bool =
    matches(s, r"(?i)^https?://([^\s/?#@\[\]]+@)?([^\s/?#@:\[\]]+|\[[0-9a-f:.]+\])(:[0-9]{1,5})?([/?#]\S*)?$")

/// A UUID in its canonical text form: 32 hexadecimal digits in groups of
/// 8-4-4-4-12 separated by hyphens, upper or lower case. Any version and
/// variant is accepted, including the nil UUID; braces and `urn:uuid:` are not.
/// example: is_ok(validate("123e4567-e89b-12d3-a456-426614174000", Uuid))
/// example: is_err(validate("123e4567e89b12d3a456426614174000", Uuid))
type Uuid = String
    require well_formed: is_uuid(self)

/// True when `s` is a UUID in canonical 8-4-4-4-12 hexadecimal form.
/// example: is_uuid("123e4567-e89b-12d3-a456-426614174000")
/// example: is_uuid("123E4567-E89B-12D3-A456-426614174000")
/// example: is_uuid("00000000-0000-0000-0000-000000000000")
/// example: not is_uuid("123e4567-e89b-12d3-a456-42661417400")
/// example: not is_uuid("123e4567-e89b-12d3-a456-4266141740000")
/// example: not is_uuid("g23e4567-e89b-12d3-a456-426614174000")
/// example: not is_uuid("{123e4567-e89b-12d3-a456-426614174000}")
/// example: not is_uuid(" 123e4567-e89b-12d3-a456-426614174000")
fn is_uuid(s: String) -> Bool =
    matches(s, r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$")
