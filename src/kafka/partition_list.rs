//! Partition lists cut from a list librdkafka made, such as the consumer's
//! assignment, keeping what librdkafka caches in each element: its handle
//! on the partition. A list built by name makes librdkafka look up each
//! element's topic with a linear search of every topic it knows
//! (`rd_kafka_topic_find`), so pausing the 10,000 partitions of 5,000
//! topics took some 25 million string compares; a list cut from the
//! assignment takes none.

use rdkafka::TopicPartitionList;

/// The elements of `from` for which `keep(topic, partition)` holds, in
/// their order, with everything librdkafka keeps in them.
pub fn subset(from: &TopicPartitionList, mut keep: impl FnMut(&str, i32) -> bool) -> TopicPartitionList {
    let kept: Vec<bool> = from.elements().iter().map(|e| keep(e.topic(), e.partition())).collect();
    // A copy by librdkafka's own list copy, which carries each element's
    // private part (its partition handle) with a reference of its own.
    let out = from.clone();
    let list = out.ptr();
    // SAFETY: `list` is the copy we own; `elems` holds `cnt` initialised
    // elements. Swapping two of them moves each whole element (with its
    // owned topic string and private part) to another slot of the same
    // array, so every element is still owned exactly once; librdkafka keeps
    // no pointer into the array. The elements not kept end up at the tail
    // and are deleted from the last one down, so `del_by_idx` moves nothing.
    unsafe {
        let n = usize::try_from((*list).cnt).unwrap_or(0).min(kept.len());
        let elems = (*list).elems;
        let mut k = 0;
        for (i, keep) in kept.iter().enumerate().take(n) {
            if *keep {
                if i != k {
                    std::ptr::swap(elems.add(i), elems.add(k));
                }
                k += 1;
            }
        }
        for i in (k..n).rev() {
            rdkafka::bindings::rd_kafka_topic_partition_list_del_by_idx(list, i as std::os::raw::c_int);
        }
    }
    out
}

/// Sets every element's leader epoch to unknown (-1), as in a list built
/// by name. An assignment's elements may carry the epoch their position
/// was read with; committed beside a newer offset, a stale epoch would
/// make the next owner's position check (KIP-320) see a truncation that
/// never happened.
pub fn forget_leader_epochs(list: &mut TopicPartitionList) {
    let ptr = list.ptr();
    // SAFETY: `ptr` is the list we hold mutably; `elems` holds `cnt`
    // initialised elements, and setting the epoch only writes its private part.
    unsafe {
        let n = usize::try_from((*ptr).cnt).unwrap_or(0);
        for i in 0..n {
            rdkafka::bindings::rd_kafka_topic_partition_set_leader_epoch((*ptr).elems.add(i), -1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdkafka::Offset;

    fn names(list: &TopicPartitionList) -> Vec<(String, i32, Offset)> {
        list.elements().iter().map(|e| (e.topic().to_string(), e.partition(), e.offset())).collect()
    }

    #[test]
    fn keeps_the_chosen_elements_in_order_with_their_offsets() {
        let mut from = TopicPartitionList::new();
        for (t, p, o) in [("a", 0, 5), ("b", 1, 6), ("a", 1, 7), ("c", 0, 8), ("b", 0, 9)] {
            from.add_partition_offset(t, p, Offset::Offset(o)).unwrap();
        }
        let got = subset(&from, |t, p| t != "a" || p == 1);
        assert_eq!(
            names(&got),
            vec![
                ("b".into(), 1, Offset::Offset(6)),
                ("a".into(), 1, Offset::Offset(7)),
                ("c".into(), 0, Offset::Offset(8)),
                ("b".into(), 0, Offset::Offset(9))
            ]
        );
        assert_eq!(names(&subset(&from, |_, _| false)), vec![]);
        assert_eq!(names(&subset(&from, |_, _| true)), names(&from));
        assert_eq!(names(&subset(&from, |t, _| t == "b")), vec![("b".into(), 1, Offset::Offset(6)), ("b".into(), 0, Offset::Offset(9))]);
        // The source list is untouched.
        assert_eq!(from.count(), 5);
    }

    #[test]
    fn leader_epochs_are_forgotten() {
        let mut list = TopicPartitionList::new();
        list.add_partition_offset("a", 0, Offset::Offset(5)).unwrap();
        list.add_partition_offset("a", 1, Offset::Offset(6)).unwrap();
        let epoch = |list: &TopicPartitionList, i: usize| {
            // SAFETY: `i` is below the list's count; the getter only reads.
            unsafe { rdkafka::bindings::rd_kafka_topic_partition_get_leader_epoch((*list.ptr()).elems.add(i)) }
        };
        // SAFETY: as above; the setter writes the element's private part.
        unsafe { rdkafka::bindings::rd_kafka_topic_partition_set_leader_epoch((*list.ptr()).elems.add(1), 7) };
        assert_eq!(epoch(&subset(&list, |_, _| true), 1), 7, "a subset keeps what librdkafka keeps in an element");
        forget_leader_epochs(&mut list);
        assert_eq!((epoch(&list, 0), epoch(&list, 1)), (-1, -1));
        assert_eq!(names(&list), vec![("a".into(), 0, Offset::Offset(5)), ("a".into(), 1, Offset::Offset(6))]);
    }
}
