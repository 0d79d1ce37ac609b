//! The provenance header that lets A->B and B->A mirrors run at once
//! without records going round in circles.
//!
//! Every mirrored record gets one more header, [`HEADER`], whose value is
//! the id of the cluster it was read from; the record's own headers are kept
//! as they are, in order, before it. A record that already carries the
//! header with the *target* cluster's id was written there by a mirror in
//! the other direction (or further round a ring A->B->C->A, since each hop
//! appends its own) and is not copied back: it is skipped, counted as
//! `loop_skipped` (not as dropped), and its offset counts as done so
//! commits move past it.

use rdkafka::message::{Header, Headers, OwnedHeaders};

/// The header's name (`--provenance.header=false` turns it off).
pub const HEADER: &str = "mirror-maker.source-cluster";
/// The same, as librdkafka takes it.
pub const HEADER_C: &std::ffi::CStr = c"mirror-maker.source-cluster";

/// The two cluster ids a stream stamps and compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    pub source_id: String,
    pub target_id: String,
}

impl Provenance {
    /// Whether a record with these headers came from the target in the
    /// first place (any of its provenance headers names the target).
    pub fn came_from_target<H: Headers>(&self, headers: Option<&H>) -> bool {
        let Some(h) = headers else { return false };
        h.iter().any(|x| x.key == HEADER && x.value == Some(self.target_id.as_bytes()))
    }

    /// The record's headers plus ours.
    pub fn stamp(&self, headers: Option<OwnedHeaders>) -> OwnedHeaders {
        stamped(headers, &self.source_id)
    }
}

/// `headers` with a provenance header of value `source_id` appended.
pub fn stamped(headers: Option<OwnedHeaders>, source_id: &str) -> OwnedHeaders {
    let h = headers.unwrap_or_else(|| OwnedHeaders::new_with_capacity(1));
    h.insert(Header { key: HEADER, value: Some(source_id.as_bytes()) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> Provenance {
        Provenance { source_id: "A-id".into(), target_id: "B-id".into() }
    }

    fn list(h: &OwnedHeaders) -> Vec<(String, Option<Vec<u8>>)> {
        h.iter().map(|x| (x.key.to_string(), x.value.map(<[u8]>::to_vec))).collect()
    }

    #[test]
    fn the_c_name_is_the_name() {
        assert_eq!(HEADER_C.to_str(), Ok(HEADER));
    }

    #[test]
    fn stamp_keeps_existing_headers_and_appends_the_source_id() {
        let own = OwnedHeaders::new().insert(Header { key: "seq", value: Some("7") }).insert(Header::<&[u8]> { key: "null", value: None });
        let h = p().stamp(Some(own));
        assert_eq!(list(&h), vec![("seq".into(), Some(b"7".to_vec())), ("null".into(), None), (HEADER.into(), Some(b"A-id".to_vec()))]);
        assert_eq!(list(&p().stamp(None)), vec![(HEADER.into(), Some(b"A-id".to_vec()))]);
    }

    #[test]
    fn a_record_from_the_target_is_recognised_wherever_its_header_is() {
        let p = p();
        assert!(!p.came_from_target::<OwnedHeaders>(None));
        // Mirrored into A from B: B->A stamped B-id; A->B must not copy it back.
        let from_b = OwnedHeaders::new().insert(Header { key: "seq", value: Some("1") }).insert(Header { key: HEADER, value: Some("B-id") });
        assert!(p.came_from_target(Some(&from_b)));
        // From C via B (ring): B-id is the second provenance header.
        let ring = OwnedHeaders::new().insert(Header { key: HEADER, value: Some("C-id") }).insert(Header { key: HEADER, value: Some("B-id") });
        assert!(p.came_from_target(Some(&ring)));
        // Written at A, or mirrored into A from a third cluster: copied.
        let other = OwnedHeaders::new().insert(Header { key: HEADER, value: Some("C-id") }).insert(Header { key: "x", value: Some("B-id") });
        assert!(!p.came_from_target(Some(&other)));
    }
}
