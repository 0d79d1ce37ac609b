//! A value as Java reads it: whole numbers ([`parse_long`]), booleans
//! ([`parse_java_bool`]), and a number for librdkafka, read as Java reads
//! it and clamped to librdkafka's range ([`normalise_number`]).
//!
//! A leaf: `translate/mod.rs` reads values with these, and so do the
//! special keys' functions it imports ([`super::special`]), so they live
//! below both; no file of `translate` imports its parent.

use crate::front::properties::{ConfigError, PropertiesFile, Property};
use crate::kafka::conf::{accepts, Refusal};

/// A whole number (base 10) as Java reads it, or the line's error.
pub(super) fn parse_long(file: &PropertiesFile, p: &Property) -> Result<i64, ConfigError> {
    p.value.trim().parse::<i64>().map_err(|_| ConfigError::at(file, p, format!("{}='{}' must be a whole number (base 10)", p.key, p.value)))
}

/// librdkafka's allowed range for a numeric key, or None for keys that are
/// not numbers (strings, enums, booleans) or unknown. Read from librdkafka's
/// own range check, so it can never drift from the linked version.
fn librdkafka_range(key: &str) -> Option<(f64, f64)> {
    // A string key takes any text; numeric, enum and boolean keys refuse this.
    if matches!(accepts(key, "x"), Ok(()) | Err(Refusal::Unknown)) {
        return None;
    }
    let range_in = |msg: &str| -> Option<(f64, f64)> {
        let r = msg.split("outside allowed range ").nth(1)?.trim();
        let (lo, hi) = r.split_once("..")?;
        Some((lo.trim().parse().ok()?, hi.trim().parse().ok()?))
    };
    let (lo, hi) = (i32::MIN.to_string(), i32::MAX.to_string());
    let low = match accepts(key, &lo) {
        Ok(()) => f64::from(i32::MIN),
        Err(Refusal::Invalid(msg)) => return range_in(&msg),
        Err(Refusal::Unknown) => return None,
    };
    match accepts(key, &hi) {
        Ok(()) => Some((low, f64::from(i32::MAX))),
        Err(Refusal::Invalid(msg)) => range_in(&msg),
        Err(Refusal::Unknown) => None,
    }
}

/// A number as Java reads it (trimmed, base 10, no `0x`, no octal), clamped
/// to librdkafka's range and written in plain decimal; librdkafka's own
/// parser would read `010` as 8 and `5ms` as 5. Non-numeric keys are
/// returned unchanged. A clamp is reported in `warnings`.
pub(super) fn normalise_number(file: &PropertiesFile, p: &Property, key: &str, value: &str, warnings: &mut Vec<String>) -> Result<String, ConfigError> {
    let v = value.trim();
    let Some((lo, hi)) = librdkafka_range(key) else { return Ok(v.to_string()) };
    let n = match v.parse::<i64>() {
        Ok(n) => n,
        // Fractions exist only for librdkafka's float keys (linger.ms), which check them.
        Err(_) if v.parse::<f64>().is_ok_and(f64::is_finite) => return Ok(v.to_string()),
        // A name some numeric keys take (acks=all); librdkafka judges it.
        Err(_) if !v.trim_start_matches(['+', '-']).starts_with(|c: char| c.is_ascii_digit()) => return Ok(v.to_string()),
        Err(_) => return Err(ConfigError::at(file, p, format!("{}='{}' must be a whole number written in base 10 (as Java reads it)", p.key, value))),
    };
    let clamped = (n as f64).clamp(lo, hi) as i64;
    if clamped != n {
        let to = if key == p.key { String::new() } else { format!(" (as {key})") };
        warnings.push(format!("{}: {}={n} is outside librdkafka's range {lo}..{hi}{to}; using {clamped}", file.at(p), p.key));
    }
    Ok(clamped.to_string())
}

/// `true` or `false` in any case, as Java reads a boolean, or the line's error.
pub(super) fn parse_java_bool(file: &PropertiesFile, p: &Property) -> Result<bool, ConfigError> {
    match p.value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(ConfigError::at(file, p, format!("{}='{}' must be true or false", p.key, p.value))),
    }
}
