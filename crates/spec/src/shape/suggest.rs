//! The nearest known key for a mistyped one (`maxModelCall` → `maxModelCalls`),
//! so an `Unrecognized key` diagnostic can say what was probably meant.

/// The known key closest to `key`: equal ignoring case, or within a small edit
/// distance (at most 2, and less than half the key's length). Ties go to the
/// first in `known`.
pub(crate) fn nearest<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    let lower = key.to_lowercase();
    let limit = 2.min(key.chars().count().saturating_sub(1) / 2);
    known
        .iter()
        .map(|k| (*k, distance(&lower, &k.to_lowercase())))
        .filter(|(_, d)| *d <= limit)
        .min_by_key(|(_, d)| *d)
        .map(|(k, _)| k)
}

/// Levenshtein distance over chars.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(cur).min(row[j])
            };
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::nearest;

    #[test]
    fn close_keys_are_suggested_and_far_ones_are_not() {
        let known = ["maxModelCalls", "instructions", "title", "to"];
        assert_eq!(nearest("maxModelCall", &known), Some("maxModelCalls"));
        assert_eq!(nearest("Instructions", &known), Some("instructions"));
        assert_eq!(nearest("instructons", &known), Some("instructions"));
        assert_eq!(nearest("titel", &known), Some("title"));
        assert_eq!(nearest("policy", &known), None);
        assert_eq!(
            nearest("on", &known),
            None,
            "two letters are too short to guess"
        );
    }
}
