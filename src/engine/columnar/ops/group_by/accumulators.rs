//! One aggregate's accumulators over every group. `count(*)` and integer sums
//! (the common aggregates) live in flat typed vectors indexed by group id, so a
//! batch folds into them with one add per row and no per-row dispatch; anything
//! else (float, decimal, min/max, or state a typed vector cannot hold) is the
//! generic [`Slot`] per group. The typed forms turn into slots whenever an
//! update needs the generic path, so every result is the generic path's.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, Int64Array, PrimitiveArray};
use arrow_schema::DataType;

use super::{AggFunc, LATE, Slot, update, write_slots};
use crate::engine::columnar::ops::OpError;

pub(super) enum Accumulators {
    /// `count(*)` per group; 0 stands for a group not counted yet (`Slot::Empty`),
    /// so restored counts below 1 stay generic.
    Counts(Vec<i64>),
    /// Exact integer sums; `seen` is false while a group has only had nulls (`Slot::Empty`).
    IntSums {
        sums: Vec<i128>,
        seen: Vec<bool>,
    },
    Slots(Vec<Slot>),
}

impl Accumulators {
    /// Empty accumulators for `func` (typed where the function allows).
    pub fn new(func: AggFunc) -> Self {
        match func {
            AggFunc::Count => Accumulators::Counts(Vec::new()),
            AggFunc::Sum => Accumulators::IntSums {
                sums: Vec::new(),
                seen: Vec::new(),
            },
            AggFunc::Min | AggFunc::Max => Accumulators::Slots(Vec::new()),
        }
    }

    /// The typed form of restored slots where every slot fits it.
    pub fn from_slots(func: AggFunc, slots: Vec<Slot>) -> Self {
        match func {
            AggFunc::Count
                if slots
                    .iter()
                    .all(|s| matches!(s, Slot::Empty) || matches!(s, Slot::Count(n) if *n > 0)) =>
            {
                Accumulators::Counts(
                    slots
                        .iter()
                        .map(|s| match s {
                            Slot::Count(n) => *n,
                            _ => 0,
                        })
                        .collect(),
                )
            }
            AggFunc::Sum
                if slots
                    .iter()
                    .all(|s| matches!(s, Slot::Empty | Slot::Int(_))) =>
            {
                Accumulators::IntSums {
                    sums: slots
                        .iter()
                        .map(|s| match s {
                            Slot::Int(n) => *n,
                            _ => 0,
                        })
                        .collect(),
                    seen: slots.iter().map(|s| matches!(s, Slot::Int(_))).collect(),
                }
            }
            _ => Accumulators::Slots(slots),
        }
    }

    /// Group `g`'s accumulator as a generic slot.
    pub fn slot(&self, g: usize) -> Slot {
        match self {
            Accumulators::Counts(counts) => match counts[g] {
                0 => Slot::Empty,
                n => Slot::Count(n),
            },
            Accumulators::IntSums { sums, seen } => {
                if seen[g] {
                    Slot::Int(sums[g])
                } else {
                    Slot::Empty
                }
            }
            Accumulators::Slots(slots) => slots[g].clone(),
        }
    }

    fn as_slots(&mut self) -> &mut Vec<Slot> {
        if !matches!(self, Accumulators::Slots(_)) {
            let slots = (0..self.len()).map(|g| self.slot(g)).collect();
            *self = Accumulators::Slots(slots);
        }
        match self {
            Accumulators::Slots(slots) => slots,
            _ => unreachable!("just converted"),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Accumulators::Counts(counts) => counts.len(),
            Accumulators::IntSums { sums, .. } => sums.len(),
            Accumulators::Slots(slots) => slots.len(),
        }
    }

    /// Adds an empty accumulator for a new group.
    pub fn push_empty(&mut self) {
        match self {
            Accumulators::Counts(counts) => counts.push(0),
            Accumulators::IntSums { sums, seen } => {
                sums.push(0);
                seen.push(false);
            }
            Accumulators::Slots(slots) => slots.push(Slot::Empty),
        }
    }

    /// Keeps the groups whose flag is set.
    pub fn retain(&mut self, keep: &[bool]) {
        fn keep_flagged<T>(values: &mut Vec<T>, keep: &[bool]) {
            let mut flags = keep.iter();
            values.retain(|_| *flags.next().expect("flag"));
        }
        match self {
            Accumulators::Counts(counts) => keep_flagged(counts, keep),
            Accumulators::IntSums { sums, seen } => {
                keep_flagged(sums, keep);
                keep_flagged(seen, keep);
            }
            Accumulators::Slots(slots) => keep_flagged(slots, keep),
        }
    }

    /// Folds one batch (`ids[row]` is the row's group, or `LATE`) into the accumulators.
    pub fn update(&mut self, func: AggFunc, ids: &[u32], array: &ArrayRef) -> Result<(), OpError> {
        match (func, &mut *self) {
            (AggFunc::Count, Accumulators::Counts(counts)) => {
                for &id in ids {
                    if id == LATE {
                        continue;
                    }
                    let count = &mut counts[id as usize];
                    if *count == i64::MAX {
                        return Err(OpError::new("count overflow"));
                    }
                    *count += 1;
                }
                Ok(())
            }
            (AggFunc::Sum, Accumulators::IntSums { sums, seen }) => match array.data_type() {
                DataType::Int8 => sum_ints(sums, seen, ids, array.as_primitive::<Int8Type>()),
                DataType::Int16 => sum_ints(sums, seen, ids, array.as_primitive::<Int16Type>()),
                DataType::Int32 => sum_ints(sums, seen, ids, array.as_primitive::<Int32Type>()),
                DataType::Int64 => sum_ints(sums, seen, ids, array.as_primitive::<Int64Type>()),
                DataType::UInt8 => sum_ints(sums, seen, ids, array.as_primitive::<UInt8Type>()),
                DataType::UInt16 => sum_ints(sums, seen, ids, array.as_primitive::<UInt16Type>()),
                DataType::UInt32 => sum_ints(sums, seen, ids, array.as_primitive::<UInt32Type>()),
                DataType::UInt64 => sum_ints(sums, seen, ids, array.as_primitive::<UInt64Type>()),
                _ => update(func, self.as_slots(), ids, array),
            },
            _ => update(func, self.as_slots(), ids, array),
        }
    }

    /// Empty accumulators for `groups` groups: a partial of a batch's rows (see `parallel`).
    pub fn with_groups(func: AggFunc, groups: usize) -> Self {
        match func {
            AggFunc::Count => Accumulators::Counts(vec![0; groups]),
            AggFunc::Sum => Accumulators::IntSums {
                sums: vec![0; groups],
                seen: vec![false; groups],
            },
            AggFunc::Min | AggFunc::Max => Accumulators::Slots(vec![Slot::Empty; groups]),
        }
    }

    /// Whether partials of a batch over `input` merge into these accumulators
    /// with exactly the one-thread fold's result: counts; integer sums into
    /// integer sums; min/max of integers, strings, bytes or booleans (a total
    /// order, ties keep the earlier value). Floats and decimals are folded in
    /// row order (their sums round; a decimal sum's overflow depends on the order).
    pub fn merges_exactly(&self, func: AggFunc, input: &DataType) -> bool {
        use DataType as D;
        let integer = matches!(
            input,
            D::Int8 | D::Int16 | D::Int32 | D::Int64 | D::UInt8 | D::UInt16 | D::UInt32 | D::UInt64
        );
        match (func, self) {
            (AggFunc::Count, Accumulators::Counts(_)) => true,
            (AggFunc::Sum, Accumulators::IntSums { .. }) => integer,
            (AggFunc::Min | AggFunc::Max, Accumulators::Slots(_)) => {
                integer || matches!(input, D::Utf8 | D::Binary | D::Boolean)
            }
            _ => false,
        }
    }

    /// Merges `parts` (partials of consecutive row ranges, in order) into these
    /// accumulators when the result is exactly the one-thread fold's; `false`,
    /// with nothing changed, when it might not be (an overflow the fold would
    /// report, a sum near the i128 range, values of different kinds).
    pub fn merge(&mut self, func: AggFunc, parts: &[&Accumulators]) -> bool {
        match self {
            Accumulators::Counts(counts) => merge_counts(counts, parts),
            Accumulators::IntSums { sums, seen } => merge_int_sums(sums, seen, parts),
            Accumulators::Slots(slots) => merge_slots(slots, func, parts),
        }
    }

    /// Every group's value as a column of type `ty`.
    pub fn write(&self, ty: &DataType) -> Result<ArrayRef, OpError> {
        match self {
            Accumulators::Counts(counts) if ty == &DataType::Int64 => Ok(Arc::new(
                counts
                    .iter()
                    .map(|&n| (n != 0).then_some(n))
                    .collect::<Int64Array>(),
            )),
            Accumulators::IntSums { sums, seen } if ty == &DataType::Int64 => {
                let values = sums
                    .iter()
                    .zip(seen)
                    .map(|(&n, &seen)| {
                        if !seen {
                            return Ok(None);
                        }
                        i64::try_from(n)
                            .map(Some)
                            .map_err(|_| OpError::new(format!("integer overflow: {n}")))
                    })
                    .collect::<Result<Int64Array, OpError>>()?;
                Ok(Arc::new(values))
            }
            Accumulators::Slots(slots) => write_slots(slots, ty),
            typed => {
                let slots: Vec<Slot> = (0..typed.len()).map(|g| typed.slot(g)).collect();
                write_slots(&slots, ty)
            }
        }
    }
}

fn sum_ints<T>(
    sums: &mut [i128],
    seen: &mut [bool],
    ids: &[u32],
    values: &PrimitiveArray<T>,
) -> Result<(), OpError>
where
    T: ArrowPrimitiveType,
    T::Native: Into<i128>,
{
    let raw = values.values();
    let overflow = || OpError::new("integer overflow: sum exceeds 128 bits");
    match values.nulls().filter(|n| n.null_count() > 0) {
        None => {
            for (&id, &v) in ids.iter().zip(raw.iter()) {
                if id == LATE {
                    continue;
                }
                let sum = &mut sums[id as usize];
                *sum = sum.checked_add(v.into()).ok_or_else(overflow)?;
                seen[id as usize] = true;
            }
        }
        Some(nulls) => {
            for (row, (&id, &v)) in ids.iter().zip(raw.iter()).enumerate() {
                if id == LATE || nulls.is_null(row) {
                    continue;
                }
                let sum = &mut sums[id as usize];
                *sum = sum.checked_add(v.into()).ok_or_else(overflow)?;
                seen[id as usize] = true;
            }
        }
    }
    Ok(())
}

/// [`Accumulators::merge`] of counts: `false` when a total would pass `i64::MAX`.
fn merge_counts(counts: &mut Vec<i64>, parts: &[&Accumulators]) -> bool {
    let Some(parts) = parts
        .iter()
        .map(|p| match p {
            Accumulators::Counts(c) if c.len() == counts.len() => Some(c),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
    else {
        return false;
    };
    let mut merged = Vec::with_capacity(counts.len());
    for (g, count) in counts.iter().enumerate() {
        // The fold fails on the increment past i64::MAX: a total above it.
        let mut total = *count;
        for part in &parts {
            match total.checked_add(part[g]) {
                Some(t) => total = t,
                None => return false,
            }
        }
        merged.push(total);
    }
    *counts = merged;
    true
}

/// [`Accumulators::merge`] of integer sums: `false` when a sum is near the i128 range.
fn merge_int_sums(sums: &mut [i128], seen: &mut [bool], parts: &[&Accumulators]) -> bool {
    let Some(parts) = parts
        .iter()
        .map(|p| match p {
            Accumulators::IntSums { sums: s, seen: n } if s.len() == sums.len() => Some((s, n)),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
    else {
        return false;
    };
    // A partial of fewer than 2^60 values of at most 64 bits stays
    // below 2^124; a sum below 2^126 plus any prefix of them then
    // stays inside i128, so neither fold can overflow and both are exact.
    const BOUND: i128 = 1 << 126;
    if sums.iter().any(|s| !(-BOUND..BOUND).contains(s)) {
        return false;
    }
    for (g, sum) in sums.iter_mut().enumerate() {
        for (part, part_seen) in &parts {
            *sum += part[g];
            seen[g] |= part_seen[g];
        }
    }
    true
}

/// [`Accumulators::merge`] of min/max slots: `false` for values of different kinds or
/// that do not compare.
fn merge_slots(slots: &mut [Slot], func: AggFunc, parts: &[&Accumulators]) -> bool {
    use crate::engine::columnar::snapshot::tagged::TaggedValue as T;
    let same_kind = |a: &T, b: &T| {
        matches!(
            (a, b),
            (T::String(_), T::String(_))
                | (T::Bytes(_), T::Bytes(_))
                | (T::Bool(_), T::Bool(_))
                | (T::Int(_), T::Int(_))
                | (T::Uint64(_), T::Uint64(_))
        )
    };
    if parts
        .iter()
        .any(|p| !matches!(p, Accumulators::Slots(s) if s.len() == slots.len()))
    {
        return false;
    }
    let parts: Vec<&Vec<Slot>> = parts
        .iter()
        .map(|p| match p {
            Accumulators::Slots(s) => s,
            _ => unreachable!("checked"),
        })
        .collect();
    // Per group, which part's value wins (None: the group's own); decided
    // before anything changes.
    let mut winners: Vec<Option<usize>> = Vec::with_capacity(slots.len());
    for (g, own) in slots.iter().enumerate() {
        let mut best: Option<&T> = match own {
            Slot::Empty => None,
            Slot::Value(v) => Some(v),
            _ => return false,
        };
        let mut winner = None;
        for (p, part) in parts.iter().enumerate() {
            let next = match &part[g] {
                Slot::Empty => continue,
                Slot::Value(v) => v,
                _ => return false,
            };
            let replace = match best {
                None => true,
                Some(current) => {
                    if !same_kind(current, next) {
                        return false;
                    }
                    let Ok(ord) = super::compare(current, next) else {
                        return false;
                    };
                    // Ties keep the current (earlier) value, as the fold does.
                    if func == AggFunc::Min {
                        ord.is_gt()
                    } else {
                        ord.is_lt()
                    }
                }
            };
            if replace {
                best = Some(next);
                winner = Some(p);
            }
        }
        winners.push(winner);
    }
    for (g, winner) in winners.into_iter().enumerate() {
        if let Some(p) = winner {
            slots[g] = parts[p][g].clone();
        }
    }
    true
}
