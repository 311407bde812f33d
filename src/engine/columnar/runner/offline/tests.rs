use arrow_array::cast::AsArray;

use super::*;
use crate::engine::columnar::ops::testing::{int64s, transactions};

#[test]
fn missing_reserved_columns_are_added() {
    let plain = transactions(&["a", "b"], &[1, 2], &[1, 2], 0)
        .project(&[0, 1])
        .unwrap();
    let schema = normalized_schema(&plain.schema()).unwrap();
    assert!(has_reserved_columns(&schema));
    let mut next = 10;
    let batch = normalize(&plain, &schema, &mut next).unwrap();
    assert_eq!(int64s(&batch, OFFSET_COLUMN), [Some(10), Some(11)]);
    assert_eq!(next, 12);
    assert_eq!(
        batch
            .column_by_name(HEADERS_COLUMN)
            .unwrap()
            .as_binary::<i32>()
            .value(0),
        [0, 0, 0, 0]
    );
    let wrong = Schema::new(vec![Field::new(
        "__timestamp",
        arrow_schema::DataType::Utf8,
        true,
    )]);
    assert_eq!(
        normalized_schema(&wrong).unwrap_err(),
        "column `__timestamp` is utf8, but the reserved column must be int64"
    );
}
