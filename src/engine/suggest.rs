//! "Did you mean" for a name that is not there (a column, a node, a parent): the
//! closest known name by edit distance, when it is close enough to be a typo
//! (at most one edit per three characters, at least one).

/// Edit distance (insertions, deletions, substitutions, adjacent swaps).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()]
}

/// The known name closest to `name`, if it is close enough to be a typo of it.
/// Names much longer than any identifier are not compared (the cost is quadratic
/// in the name's length).
pub fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    if name.len() > 128 {
        return None;
    }
    let limit = (name.chars().count() / 3).max(1);
    known
        .into_iter()
        .filter(|k| *k != name && k.len() <= 128)
        .map(|k| (distance(&name.to_lowercase(), &k.to_lowercase()), k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// `; did you mean `amount`?` or nothing.
pub fn hint<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    closest(name, known)
        .map(|k| format!("; did you mean `{k}`?"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_get_the_closest_name_and_strangers_get_none() {
        let known = ["amount", "user", "country", "__timestamp"];
        assert_eq!(closest("amont", known), Some("amount"));
        assert_eq!(closest("amuont", known), Some("amount"));
        assert_eq!(closest("usr", known), Some("user"));
        assert_eq!(closest("Country", known), Some("country"));
        assert_eq!(closest("__timestmap", known), Some("__timestamp"));
        assert_eq!(closest("price", known), None);
        assert_eq!(hint("x", known), "");
        assert_eq!(hint("amont", known), "; did you mean `amount`?");
    }
}
