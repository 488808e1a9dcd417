//! The IP TOS byte and its Differentiated Services code point, as `-S/--tos` takes them.
//!
//! The byte is the IPv4 header's second octet and the IPv6 traffic class: its upper six bits
//! are the DSCP (RFC 2474), its lower two ECN (RFC 3168), which the kernel owns for TCP. Users
//! name classes more often than bytes, so both are taken: a number as iperf3's `-S` reads it
//! (decimal, `0x` hex, leading-`0` octal) or a per-hop behaviour's name: `ef` (RFC 3246),
//! `af11`..`af43` (RFC 2597), `cs0`..`cs7` (RFC 2474's class selectors), `le` (RFC 8622),
//! `va` (RFC 5865).

/// Names of code points, with their DSCP value.
const NAMED: &[(&str, u8)] = &[
    ("cs0", 0),
    ("le", 1),
    ("cs1", 8),
    ("af11", 10),
    ("af12", 12),
    ("af13", 14),
    ("cs2", 16),
    ("af21", 18),
    ("af22", 20),
    ("af23", 22),
    ("cs3", 24),
    ("af31", 26),
    ("af32", 28),
    ("af33", 30),
    ("cs4", 32),
    ("af41", 34),
    ("af42", 36),
    ("af43", 38),
    ("cs5", 40),
    ("va", 44),
    ("ef", 46),
    ("cs6", 48),
    ("cs7", 56),
];

/// The TOS byte `text` names: a number from 0 to 255, or a DSCP name (its code point shifted
/// into the upper six bits, ECN bits 0).
pub fn parse_tos(text: &str) -> Result<u8, String> {
    let t = text.trim().to_ascii_lowercase();
    if let Some(&(_, dscp)) = NAMED.iter().find(|(name, _)| *name == t) {
        return Ok(dscp << 2);
    }
    let parsed = if let Some(hex) = t.strip_prefix("0x") {
        u32::from_str_radix(hex, 16)
    } else if t.len() > 1 && t.starts_with('0') {
        u32::from_str_radix(&t[1..], 8)
    } else {
        t.parse::<u32>()
    };
    match parsed {
        Ok(v) => u8::try_from(v).map_err(|_| {
            format!("TOS {text} is over 255: give one byte (0xb8) or a DSCP name (ef, af41, cs1)")
        }),
        Err(_) => Err(format!(
            "'{text}' is not a TOS byte or DSCP name: give a number (184, 0xb8, 0270) or a name (ef, af11..af43, cs0..cs7, le, va)"
        )),
    }
}

/// The byte as people read it: `0xb8 (DSCP 46, EF)`, the name when the code point has one.
pub fn describe(tos: u8) -> String {
    let dscp = tos >> 2;
    let ecn = tos & 0b11;
    let name = NAMED
        .iter()
        .find(|(_, d)| *d == dscp)
        .map(|(n, _)| format!(", {}", n.to_ascii_uppercase()))
        .unwrap_or_default();
    let ecn = if ecn == 0 {
        String::new()
    } else {
        format!(", ECN bits {ecn:02b}")
    };
    format!("0x{tos:02x} (DSCP {dscp}{name}{ecn})")
}
