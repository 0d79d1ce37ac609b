//! librdkafka's configuration table, asked directly: whether it accepts a
//! key and value, every property name it has, and which ones it treats as
//! secrets. The translation checks values here so a bad one fails with the
//! file and line, not later with a bare librdkafka message.

use std::ffi::CString;

/// Why librdkafka refused a key and value.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// librdkafka has no such property.
    Unknown,
    /// The property exists; the value is not valid for it (librdkafka's words).
    Invalid(String),
}

/// Checks a key and value against librdkafka itself, so a bad value fails
/// here with the file and line, not later with a bare librdkafka message.
pub fn accepts(key: &str, value: &str) -> Result<(), Refusal> {
    use rdkafka::bindings as rd;
    let (Ok(k), Ok(v)) = (CString::new(key), CString::new(value)) else {
        return Err(Refusal::Invalid("contains a NUL byte".into()));
    };
    let mut err = [0 as std::os::raw::c_char; 512];
    // SAFETY: a scratch conf object, destroyed below; strings are NUL-terminated.
    unsafe {
        let conf = rd::rd_kafka_conf_new();
        let res = rd::rd_kafka_conf_set(conf, k.as_ptr(), v.as_ptr(), err.as_mut_ptr(), err.len());
        rd::rd_kafka_conf_destroy(conf);
        match res {
            rd::rd_kafka_conf_res_t::RD_KAFKA_CONF_OK => Ok(()),
            rd::rd_kafka_conf_res_t::RD_KAFKA_CONF_UNKNOWN => Err(Refusal::Unknown),
            _ => Err(Refusal::Invalid(std::ffi::CStr::from_ptr(err.as_ptr()).to_string_lossy().into_owned())),
        }
    }
}

/// The properties librdkafka flags `_RK_SENSITIVE`, as the linked library
/// says: each property of its table (`rd_kafka_conf_properties_show`) is set
/// to a marker and read back after `rd_kafka_conf_desensitize`, librdkafka's
/// own scrubbing of sensitive values, which blanks exactly those.
/// (`rd_kafka_conf_dump` would be public but does not redact in librdkafka
/// 2.12; only its debug dump does.) A property this build lists but does
/// not support is counted too: it cannot be probed. Read once.
pub fn sensitive_keys() -> &'static [String] {
    static KEYS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| property_names().into_iter().filter(|k| scrubs(k)).collect())
}

mod ffi {
    use std::os::raw::{c_char, c_int, c_void};

    extern "C" {
        /// librdkafka's own (rdkafka_conf.h, exported but not in rdkafka.h).
        pub fn rd_kafka_conf_desensitize(conf: *mut rdkafka::bindings::rd_kafka_conf_t);
        pub fn open_memstream(buf: *mut *mut c_char, len: *mut usize) -> *mut c_void;
        pub fn fclose(f: *mut c_void) -> c_int;
        pub fn free(p: *mut c_void);
    }
}

/// Every property name of librdkafka's table (aliases included, hidden
/// internals left out), from the table librdkafka prints of itself.
pub fn property_names() -> Vec<String> {
    let mut names: Vec<String> = table().iter().map(|(n, _)| n.clone()).collect();
    names.sort();
    names.dedup();
    names
}

/// Which kind of client librdkafka applies a property to (its table's
/// C/P column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every client (`*`).
    Any,
    Consumer,
    Producer,
}

/// The scope librdkafka's table gives `key` (an alias: its target's), or
/// None for a name the table lacks.
pub fn scope(key: &str) -> Option<Scope> {
    table().iter().find(|(n, _)| n == key).map(|(_, s)| *s)
}

/// librdkafka's table of itself (`rd_kafka_conf_properties_show`): each
/// property's name and scope, global and topic properties alike. Read once.
fn table() -> &'static [(String, Scope)] {
    static TABLE: std::sync::OnceLock<Vec<(String, Scope)>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut buf: *mut std::os::raw::c_char = std::ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: open_memstream owns buf until fclose, after which buf holds
        // len bytes that we copy and free, as its contract says.
        let text = unsafe {
            let f = ffi::open_memstream(&mut buf, &mut len);
            if f.is_null() {
                return Vec::new();
            }
            rdkafka::bindings::rd_kafka_conf_properties_show(f.cast());
            ffi::fclose(f);
            let bytes = std::slice::from_raw_parts(buf as *const u8, len).to_vec();
            ffi::free(buf.cast());
            String::from_utf8_lossy(&bytes).into_owned()
        };
        text.lines()
            .filter_map(|l| {
                let mut cols = l.split(" | ");
                let name = cols.next()?.trim().to_string();
                let scope = match cols.next()?.trim() {
                    "*" => Scope::Any,
                    "C" => Scope::Consumer,
                    "P" => Scope::Producer,
                    _ => return None,
                };
                Some((name, scope))
            })
            .filter(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'_'))
            .collect()
    })
}

/// Whether librdkafka blanks this property when it scrubs a configuration.
fn scrubs(key: &str) -> bool {
    use rdkafka::bindings as rd;
    const MARK: &str = "mirror-maker-sensitivity-probe";
    let (Ok(k), Ok(v)) = (std::ffi::CString::new(key), std::ffi::CString::new(MARK)) else { return false };
    let mut err = [0 as std::os::raw::c_char; 512];
    let mut out = [0 as std::os::raw::c_char; 128];
    let mut out_len = out.len();
    // SAFETY: a scratch conf object, destroyed below; strings are NUL-terminated
    // and the buffers' sizes are passed along.
    unsafe {
        let conf = rd::rd_kafka_conf_new();
        let set = rd::rd_kafka_conf_set(conf, k.as_ptr(), v.as_ptr(), err.as_mut_ptr(), err.len());
        let scrubbed = if set == rd::rd_kafka_conf_res_t::RD_KAFKA_CONF_OK {
            ffi::rd_kafka_conf_desensitize(conf);
            let got = rd::rd_kafka_conf_get(conf, k.as_ptr(), out.as_mut_ptr(), &mut out_len);
            got != rd::rd_kafka_conf_res_t::RD_KAFKA_CONF_OK || std::ffi::CStr::from_ptr(out.as_ptr()).to_bytes() != MARK.as_bytes()
        } else {
            // A property left out of this build (OIDC without libcurl, say)
            // cannot be set, so its flag cannot be read: count it as
            // sensitive, since its value only ever shows up in a refusal.
            std::ffi::CStr::from_ptr(err.as_ptr()).to_string_lossy().contains("not supported in this build")
        };
        rd::rd_kafka_conf_destroy(conf);
        scrubbed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_are_librdkafkas() {
        assert_eq!(scope("bootstrap.servers"), Some(Scope::Any));
        assert_eq!(scope("sasl.password"), Some(Scope::Any));
        assert_eq!(scope("group.id"), Some(Scope::Consumer));
        assert_eq!(scope("auto.offset.reset"), Some(Scope::Consumer), "a topic property");
        assert_eq!(scope("linger.ms"), Some(Scope::Producer));
        assert_eq!(scope("acks"), Some(Scope::Producer), "a topic property's alias");
        assert_eq!(scope("no.such.key"), None);
    }

    #[test]
    fn sensitive_keys_are_what_librdkafka_scrubs() {
        use rdkafka::bindings as rd;
        let names = property_names();
        assert!(names.len() > 150 && names.iter().any(|n| n == "bootstrap.servers") && names.iter().any(|n| n == "sasl.password"), "{names:?}");
        let sensitive = sensitive_keys();
        assert!(sensitive.len() < names.len() / 2, "{sensitive:?}");
        // One configuration with every string property set to its own name,
        // scrubbed once: exactly the sensitive ones (those this build can
        // hold) lose their value. Aliases share a value with their target,
        // so only names that still hold their own value before the scrub count.
        // SAFETY: a scratch conf object, destroyed below; NUL-terminated strings
        // and buffer sizes passed along.
        unsafe {
            let conf = rd::rd_kafka_conf_new();
            let get = |c: &std::ffi::CString| {
                let mut out = [0 as std::os::raw::c_char; 512];
                let mut len = out.len();
                let ok = rd::rd_kafka_conf_get(conf, c.as_ptr(), out.as_mut_ptr(), &mut len) == rd::rd_kafka_conf_res_t::RD_KAFKA_CONF_OK;
                ok.then(|| std::ffi::CStr::from_ptr(out.as_ptr()).to_bytes().to_vec())
            };
            let names_c: Vec<(String, std::ffi::CString)> = names.iter().map(|n| (n.clone(), std::ffi::CString::new(n.as_str()).unwrap())).collect();
            for (_, c) in &names_c {
                let mut err = [0 as std::os::raw::c_char; 512];
                rd::rd_kafka_conf_set(conf, c.as_ptr(), c.as_ptr(), err.as_mut_ptr(), err.len());
            }
            let held: Vec<&(String, std::ffi::CString)> = names_c.iter().filter(|(n, c)| get(c).as_deref() == Some(n.as_bytes())).collect();
            assert!(held.len() > 20, "{}", held.len());
            ffi::rd_kafka_conf_desensitize(conf);
            let mut scrubbed = 0;
            for (n, c) in held {
                let lost = get(c).as_deref() != Some(n.as_bytes());
                assert_eq!(lost, sensitive.contains(n), "{n}: scrubbed by librdkafka {lost}, in the sensitive list {}", sensitive.contains(n));
                scrubbed += usize::from(lost);
            }
            assert!(scrubbed >= 5, "{scrubbed}");
            rd::rd_kafka_conf_destroy(conf);
        }
    }
}
