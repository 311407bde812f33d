//! JSON Schema content models for the compatibility diff ([`super::json`]): object
//! properties and arrays' tuple items against open, closed and partially open models
//! (`additionalProperties`/`patternProperties`/`unevaluatedProperties`, `additionalItems`/
//! `unevaluatedItems`), `required`, dependencies and the size bounds — Confluent's
//! `ObjectSchemaDiff` and `ArraySchemaDiff` rules.

use std::collections::BTreeSet;

use super::json::{Diff, Difference, bound, compatible, d, sub};
use super::json_model::{Array, Docs, Loc, Object, Typed};
use crate::engine::schema::error::SchemaResult;

impl<'a> Diff<'a> {
    /// The differences between two object schemas. Long because it follows the registry
    /// checker's object rules in their order (properties, required, additional and pattern
    /// properties, dependencies), each a few lines over the same paths and output.
    pub(super) fn objects(
        &mut self,
        out: &mut Vec<Difference>,
        path: &str,
        a: &Object<'a>,
        b: &Object<'a>,
    ) -> SchemaResult<()> {
        for (name, _) in &a.properties {
            if b.property(name).is_some() {
                let p = sub(&sub(path, "required"), name);
                match (a.required.contains(name), b.required.contains(name)) {
                    (true, false) => out.push(d("REQUIRED_ATTRIBUTE_REMOVED", &p, "")),
                    (false, true) if self.r.has_default(b.property(name))? => {
                        out.push(d("REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED", &p, ""));
                    }
                    (false, true) => out.push(d(
                        "REQUIRED_ATTRIBUTE_ADDED",
                        &p,
                        format!("{name} became required"),
                    )),
                    _ => {}
                }
            }
        }
        let names: BTreeSet<&String> = a
            .properties
            .iter()
            .chain(b.properties.iter())
            .map(|(n, _)| n)
            .collect();
        for name in names {
            let p = sub(&sub(path, "properties"), name);
            match (a.property(name), b.property(name)) {
                (Some(ws), None) => {
                    if b.is_open() {
                        out.push(d("PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL", &p, ""));
                    } else if let Some(partial) = b.partial_schema(name)? {
                        let found = self.compare(Some(ws), Some(partial), &p)?;
                        let ok = compatible(&found);
                        out.extend(found);
                        if ok {
                            out.push(d(
                                "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
                                &p,
                                "",
                            ));
                        } else {
                            out.push(d(
                                "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
                                &p,
                                format!(
                                    "{name} is absent from the reader and its additional/pattern properties do not accept the writer's values"
                                ),
                            ));
                        }
                    } else if matches!(self.w.typed(self.w.deref(ws)?)?, Typed::False) {
                        out.push(d(
                            "PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL",
                            &p,
                            "",
                        ));
                    } else {
                        out.push(d(
                            "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL",
                            &p,
                            format!("{name} is absent from the reader's closed content model"),
                        ));
                    }
                }
                (None, Some(rs)) => {
                    let required = b.required.contains(name);
                    let has_default = self.r.has_default(Some(rs))?;
                    if a.is_open() {
                        if matches!(self.r.typed(self.r.deref(rs)?)?, Typed::Empty) {
                            out.push(d(
                                "PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL",
                                &p,
                                "",
                            ));
                        } else if required && !has_default {
                            out.push(d(
                                "REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL",
                                &p,
                                format!("{name} is required by the reader and the writer's open content model may carry any value for it"),
                            ));
                        } else if required {
                            out.push(d(
                                "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL",
                                &p,
                                format!("{name} is added and the writer's open content model may carry any value for it"),
                            ));
                        } else {
                            out.push(d(
                                "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL",
                                &p,
                                format!("{name} is added and the writer's open content model may carry any value for it"),
                            ));
                        }
                    } else {
                        if let Some(partial) = a.partial_schema(name)? {
                            let found = self.compare(Some(partial), Some(rs), &p)?;
                            let ok = compatible(&found);
                            out.extend(found);
                            if ok {
                                out.push(d(
                                    "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
                                    &p,
                                    "",
                                ));
                            } else {
                                out.push(d(
                                    "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
                                    &p,
                                    format!("{name} is added and does not accept what the writer's additional/pattern properties allowed"),
                                ));
                            }
                        }
                        if required && !has_default {
                            out.push(d(
                                "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL",
                                &p,
                                format!(
                                    "{name} is required by the reader and absent from the writer"
                                ),
                            ));
                        } else if required {
                            out.push(d(
                                "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL",
                                &p,
                                "",
                            ));
                        } else {
                            out.push(d("OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", &p, ""));
                        }
                    }
                }
                (Some(ws), Some(rs)) => out.extend(self.compare(Some(ws), Some(rs), &p)?),
                (None, None) => {}
            }
        }
        // Property dependencies (arrays) and schema dependencies.
        let dp = sub(path, "dependencies");
        let keys: BTreeSet<&String> = a.dep_arrays.keys().chain(b.dep_arrays.keys()).collect();
        for k in keys {
            let p = sub(&dp, k);
            match (a.dep_arrays.get(k), b.dep_arrays.get(k)) {
                (Some(_), None) => out.push(d("DEPENDENCY_ARRAY_REMOVED", &p, "")),
                (None, Some(_)) => out.push(d(
                    "DEPENDENCY_ARRAY_ADDED",
                    &p,
                    format!("the reader adds a dependency of {k}"),
                )),
                (Some(x), Some(y)) if x != y => {
                    if y.is_superset(x) {
                        out.push(d(
                            "DEPENDENCY_ARRAY_EXTENDED",
                            &p,
                            format!("the reader makes {k} depend on more properties"),
                        ));
                    } else if x.is_superset(y) {
                        out.push(d("DEPENDENCY_ARRAY_NARROWED", &p, ""));
                    } else {
                        out.push(d(
                            "DEPENDENCY_ARRAY_CHANGED",
                            &p,
                            format!("the dependencies of {k} changed"),
                        ));
                    }
                }
                _ => {}
            }
        }
        let keys: BTreeSet<&String> = a.dep_schemas.keys().chain(b.dep_schemas.keys()).collect();
        for k in keys {
            let p = sub(&dp, k);
            match (a.dep_schemas.get(k), b.dep_schemas.get(k)) {
                (Some(_), None) => out.push(d("DEPENDENCY_SCHEMA_REMOVED", &p, "")),
                (None, Some(_)) => out.push(d(
                    "DEPENDENCY_SCHEMA_ADDED",
                    &p,
                    format!("the reader adds a schema dependency of {k}"),
                )),
                (Some(x), Some(y)) => out.extend(self.compare(Some(*x), Some(*y), &p)?),
                (None, None) => {}
            }
        }
        let ap = sub(path, "additionalProperties");
        if a.additional_permitted != b.additional_permitted {
            if b.additional_permitted {
                out.push(d("ADDITIONAL_PROPERTIES_ADDED", &ap, ""));
            } else {
                out.push(d(
                    "ADDITIONAL_PROPERTIES_REMOVED",
                    &ap,
                    "the reader forbids additional properties the writer allowed",
                ));
            }
        } else {
            match (a.additional, b.additional) {
                (None, Some(_)) => out.push(d(
                    "ADDITIONAL_PROPERTIES_NARROWED",
                    &ap,
                    "the reader constrains additional properties the writer left open",
                )),
                (Some(_), None) => out.push(d("ADDITIONAL_PROPERTIES_EXTENDED", &ap, "")),
                (x, y) => out.extend(self.compare(x, y, &ap)?),
            }
        }
        self.unevaluated(
            out,
            &sub(path, "unevaluatedProperties"),
            a.unevaluated,
            b.unevaluated,
            "PROPERTIES",
        )?;
        bound(
            out,
            path,
            "maxProperties",
            a.max_properties,
            b.max_properties,
        );
        bound(
            out,
            path,
            "minProperties",
            a.min_properties,
            b.min_properties,
        );
        Ok(())
    }

    fn unevaluated(
        &mut self,
        out: &mut Vec<Difference>,
        p: &str,
        a: Option<Loc<'a>>,
        b: Option<Loc<'a>>,
        what: &str,
    ) -> SchemaResult<()> {
        let kind = |change: &str| -> &'static str {
            match (what, change) {
                ("PROPERTIES", "ADDED") => "UNEVALUATED_PROPERTIES_ADDED",
                ("PROPERTIES", "REMOVED") => "UNEVALUATED_PROPERTIES_REMOVED",
                ("PROPERTIES", "NARROWED") => "UNEVALUATED_PROPERTIES_NARROWED",
                ("PROPERTIES", _) => "UNEVALUATED_PROPERTIES_EXTENDED",
                (_, "ADDED") => "UNEVALUATED_ITEMS_ADDED",
                (_, "REMOVED") => "UNEVALUATED_ITEMS_REMOVED",
                (_, "NARROWED") => "UNEVALUATED_ITEMS_NARROWED",
                _ => "UNEVALUATED_ITEMS_EXTENDED",
            }
        };
        let class = |docs: &Docs, l: Option<Loc<'a>>| -> SchemaResult<Option<&'static str>> {
            match l {
                None => Ok(None),
                Some(l) => Ok(Some(docs.typed(docs.deref(l)?)?.class())),
            }
        };
        let (ca, cb) = (class(self.w, a)?, class(self.r, b)?);
        let change = match (ca, cb) {
            (None, None) => return Ok(()),
            (None, Some("false")) => "REMOVED",
            (None, Some(_)) => "NARROWED",
            (Some("false"), None) => "ADDED",
            (Some(_), None) => "EXTENDED",
            (Some("false"), Some(y)) if y != "false" => "ADDED",
            (Some(x), Some("false")) if x != "false" => "REMOVED",
            (Some("empty"), Some(y)) if y != "empty" => "NARROWED",
            (Some(x), Some("empty")) if x != "empty" => "EXTENDED",
            _ => {
                out.extend(self.compare(a, b, p)?);
                return Ok(());
            }
        };
        out.push(d(
            kind(change),
            p,
            format!(
                "unevaluated {} {}",
                what.to_lowercase(),
                change.to_lowercase()
            ),
        ));
        Ok(())
    }

    /// The differences between two array schemas. Long because it follows the registry
    /// checker's array rules in their order (items, additional items, sizes, uniqueness).
    pub(super) fn arrays(
        &mut self,
        out: &mut Vec<Difference>,
        path: &str,
        a: &Array<'a>,
        b: &Array<'a>,
    ) -> SchemaResult<()> {
        out.extend(self.compare(a.items, b.items, &sub(path, "items"))?);
        let (wn, rn) = (a.tuple.len(), b.tuple.len());
        for i in 0..wn.max(rn) {
            let p = sub(path, &format!("items/{i}"));
            match (a.tuple.get(i), b.tuple.get(i)) {
                (Some(x), Some(y)) => out.extend(self.compare(Some(*x), Some(*y), &p)?),
                (Some(x), None) => {
                    if b.is_open() {
                        out.push(d("ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL", &p, ""));
                    } else if let Some(partial) = b.partial_schema() {
                        let found = self.compare(Some(*x), Some(partial), &p)?;
                        let ok = compatible(&found);
                        out.extend(found);
                        out.push(if ok {
                            d("ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", &p, "")
                        } else {
                            d(
                                "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
                                &p,
                                format!("tuple item {i} is absent from the reader and its additional items do not accept it"),
                            )
                        });
                    } else if matches!(self.w.typed(self.w.deref(*x)?)?, Typed::False) {
                        out.push(d(
                            "ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL",
                            &p,
                            "",
                        ));
                    } else {
                        out.push(d(
                            "ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL",
                            &p,
                            format!(
                                "tuple item {i} is absent from the reader's closed content model"
                            ),
                        ));
                    }
                }
                (None, Some(y)) => {
                    if a.is_open() {
                        if matches!(self.r.typed(self.r.deref(*y)?)?, Typed::Empty) {
                            out.push(d(
                                "ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL",
                                &p,
                                "",
                            ));
                        } else {
                            out.push(d(
                                "ITEM_ADDED_TO_OPEN_CONTENT_MODEL",
                                &p,
                                format!("tuple item {i} is added and the writer's open content model may carry any value there"),
                            ));
                        }
                    } else if let Some(partial) = a.partial_schema() {
                        let found = self.compare(Some(partial), Some(*y), &p)?;
                        let ok = compatible(&found);
                        out.extend(found);
                        out.push(if ok {
                            d("ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", &p, "")
                        } else {
                            d(
                                "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
                                &p,
                                format!("tuple item {i} does not accept what the writer's additional items allowed"),
                            )
                        });
                    } else {
                        out.push(d("ITEM_ADDED_TO_CLOSED_CONTENT_MODEL", &p, ""));
                    }
                }
                (None, None) => {}
            }
        }
        let ap = sub(path, "additionalItems");
        if a.additional_permitted != b.additional_permitted {
            if a.additional_permitted {
                out.push(d(
                    "ADDITIONAL_ITEMS_REMOVED",
                    &ap,
                    "the reader forbids additional items the writer allowed",
                ));
            } else {
                out.push(d("ADDITIONAL_ITEMS_ADDED", &ap, ""));
            }
        } else {
            match (a.additional, b.additional) {
                (None, Some(_)) => out.push(d(
                    "ADDITIONAL_ITEMS_NARROWED",
                    &ap,
                    "the reader constrains additional items the writer left open",
                )),
                (Some(_), None) => out.push(d("ADDITIONAL_ITEMS_EXTENDED", &ap, "")),
                (x, y) => out.extend(self.compare(x, y, &ap)?),
            }
        }
        self.unevaluated(
            out,
            &sub(path, "unevaluatedItems"),
            a.unevaluated,
            b.unevaluated,
            "ITEMS",
        )?;
        bound(out, path, "maxItems", a.max_items, b.max_items);
        bound(out, path, "minItems", a.min_items, b.min_items);
        bound(out, path, "maxContains", a.max_contains, b.max_contains);
        bound(out, path, "minContains", a.min_contains, b.min_contains);
        if a.unique != b.unique {
            if a.unique {
                out.push(d("UNIQUE_ITEMS_REMOVED", &sub(path, "uniqueItems"), ""));
            } else {
                out.push(d(
                    "UNIQUE_ITEMS_ADDED",
                    &sub(path, "uniqueItems"),
                    "the reader requires unique items",
                ));
            }
        }
        Ok(())
    }
}
